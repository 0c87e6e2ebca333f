"""The GPU generator's algorithm (src/floydwarp/gpu/kernels/generate.cu) in plain Python, pass for
pass and chunk for chunk, so that the CPU can check it against the host generator: PCG64's step,
output and jump-ahead, the gap and pair methods split into chunks (count, scan, fill), NumPy's
bounded draws over 32-bit halves with Lemire's rejection, the pair -> (row, column) mapping, the
mirror and the potential.  Chunk sizes are parameters: small odd ones cross every boundary.
"""
from __future__ import annotations

import math

import numpy as np

from floydwarp.draws import PER_PAIR_FROM, ROWS_PER_BLOCK, block_streams, potentials
from floydwarp.gpu.generate import block_cells, gap_draws, lemire_threshold, stream_states, weight_draws

MULT = 0x2360ED051FC65DA44385DF649FCCF645
M128, M64 = (1 << 128) - 1, (1 << 64) - 1


class Pcg:
    def __init__(self, row, delta):
        state, inc = (int(row[0]) << 64) | int(row[1]), (int(row[2]) << 64) | int(row[3])
        acc_mult, acc_plus, cur_mult, cur_plus = 1, 0, MULT, inc
        while delta:                                   # fw_advance
            if delta & 1:
                acc_mult = acc_mult * cur_mult & M128
                acc_plus = (acc_plus * cur_mult + cur_plus) & M128
            cur_plus = (cur_mult + 1) * cur_plus & M128
            cur_mult = cur_mult * cur_mult & M128
            delta >>= 1
        self.state, self.inc = (acc_mult * state + acc_plus) & M128, inc

    def next(self):
        self.state = (self.state * MULT + self.inc) & M128
        x = ((self.state >> 64) ^ self.state) & M64
        rot = self.state >> 122
        return ((x >> rot) | (x << ((64 - rot) & 63))) & M64

    def uniform(self):
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)


def _gap(u, scale, cells):
    x = math.floor(math.log1p(-u) * scale)
    return x if x < cells else cells


def _offset(r, start, n, directed):
    return r * (n - 1) if directed else r * (n - 1 - start) - r * (r - 1) // 2


def _pair(q, start, rows, n, directed):
    if directed:
        r, c = divmod(q, n - 1)
        row = start + r
        return row, c + (c >= row)
    a, z = 0, rows
    while z - a > 1:
        mid = (a + z) // 2
        if _offset(mid, start, n, False) <= q:
            a = mid
        else:
            z = mid
    return start + a, q - _offset(a, start, n, False) + start + a + 1


def _step(g, mode, p, scale, cells):
    u = g.uniform()
    return _gap(u, scale, cells) + 1 if mode == 1 else int(u < p)


def _places(state, draws, cells, start, rows, n, directed, mode, p, scale, chunk):
    """count, scan and fill of one block: its edges' (src, dst), or None when the draws ended early."""
    chunks = -(-max(draws, 1) // chunk)
    sums = []
    for c in range(chunks):                            # fw_gen_place_count
        first, last = c * chunk, min(c * chunk + chunk, draws)
        g = Pcg(state, first) if first < last else None
        sums.append(sum(_step(g, mode, p, scale, cells) for _ in range(first, last)) if g else 0)
    prefix, running, crossing = [], 0, -1              # fw_gen_place_scan
    for c, v in enumerate(sums):
        prefix.append(running)
        if mode == 1 and crossing < 0 and running + v > cells:
            crossing = c
        running += v
    if mode == 1:
        if crossing < 0:
            return None
        first, last = crossing * chunk, min(crossing * chunk + chunk, draws)
        g, q, m = Pcg(state, first), prefix[crossing] - 1, first
        while m < last:
            q += _step(g, mode, p, scale, cells)
            if q >= cells:
                break
            m += 1
    else:
        m = running
    out = [None] * m
    for c in range(chunks):                            # fw_gen_place_fill
        first, last = c * chunk, min(c * chunk + chunk, draws)
        if first >= last:
            continue
        g, running = Pcg(state, first), prefix[c]
        for i in range(first, last):
            v = _step(g, mode, p, scale, cells)
            if mode == 1:
                running += v
                k, q = i, running - 1
            else:
                if not v:
                    continue
                k, q = running, i
                running += 1
            if k >= m:
                break
            out[k] = _pair(q, start, rows, n, directed)
    return out


def _weights(state, m, span, lo, chunk, margin=6.0):
    threshold = lemire_threshold(span)
    draws = int(weight_draws(np.array([m]), span, margin)[0])
    accepted = []
    for c in range(-(-max(draws, 1) // chunk)):        # fw_gen_weight_count
        first, last = c * chunk, min(c * chunk + chunk, draws)
        g, count = Pcg(state, first // 2), 0
        for i in range(first, last, 2):
            x = g.next()
            count += (x & 0xFFFFFFFF) * span % (1 << 32) >= threshold
            if i + 1 < last:
                count += (x >> 32) * span % (1 << 32) >= threshold
        accepted.append(count)
    if sum(accepted) < m:
        return _weights(state, m, span, lo, chunk, 2 * margin)
    out, k = [None] * m, 0
    for c in range(len(accepted)):                     # fw_gen_weight_fill (prefix = k)
        first, last = c * chunk, min(c * chunk + chunk, draws)
        g = Pcg(state, first // 2)
        for i in range(first, last, 2):
            x = g.next()
            for v in ((x & 0xFFFFFFFF), (x >> 32))[:min(2, last - i)]:
                if k < m and v * span % (1 << 32) >= threshold:
                    out[k] = lo + (v * span >> 32)
                    k += 1
    return out


def erdos_renyi(n, percent=25.0, *, seed=0, weights=(1, 16), potential=0, directed=True, place_chunk=7,
                weight_chunk=6):
    """(src, dst, w) int64 arrays as the GPU generator draws them, in the host generator's order."""
    lo, hi = weights
    p = percent / 100.0
    potential_stream, streams = block_streams(n, seed)
    cells = block_cells(n, directed)
    mode = 0 if p <= 0 or n < 2 else (2 if p >= PER_PAIR_FROM else 1)
    scale = 1.0 / math.log1p(-p) if mode == 1 else 0.0
    places, weights_of = stream_states([s[0] for s in streams]), stream_states([s[1] for s in streams])
    edges, drawn = [], []
    for b, cell in enumerate(cells):
        start = b * ROWS_PER_BLOCK
        rows = min(ROWS_PER_BLOCK, n - start)
        block = []
        if mode:
            margin = 6.0
            while True:
                draws = int(cell) if mode == 2 else int(gap_draws(np.array([cell]), p, margin)[0])
                block = _places(places[b], draws, int(cell), start, rows, n, directed, mode, p, scale, place_chunk)
                if block is not None:
                    break
                margin *= 2
        edges += block
        span = hi - lo + 1
        drawn += [lo] * len(block) if span == 1 else _weights(weights_of[b], len(block), span, lo, weight_chunk)
    src = np.array([e[0] for e in edges], np.int64)
    dst = np.array([e[1] for e in edges], np.int64)
    w = np.array(drawn, np.int64)
    if not directed:                                   # the mirror keeps the drawn weight
        src, dst, w = np.concatenate([src, dst]), np.concatenate([dst, src]), np.concatenate([w, w])
    if potential > 0:                                  # then each edge its own potential
        h = potentials(potential_stream, potential, n)
        w = w + h[src] - h[dst]
    return src, dst, w
