"""NumPy model of the witness kernels (gpu/kernels/witness.cu): the candidate segments
(``fw_witness_count`` and ``fw_witness_fill``) and the entries they write, then
``fw_witness``'s rule (least sum, smallest k among equals; floats: only k with d[i,k] < d[i,j]),
the same acceptance.  test_witness.py checks it against the triple loop; test_gpu_witness.py
holds the kernel to it."""
from __future__ import annotations

import dataclasses

import numpy as np

from floydwarp import numeric
from floydwarp.gpu.predecessors import witness
from floydwarp.predecessors import NO_PREDECESSOR


#: a padding key of the keyed kernel: above every key whose sum can be a distance (witness.cu)
PAD_KEY = 1 << 30


@dataclasses.dataclass(frozen=True)
class Candidates:
    """Every column's candidate edges ``k -> j``, in segments by (column group, chunk of
    k, column), k ascending, each padded to a multiple of ``UNROLL`` with ``k = -1``
    (weight INF): segment ``s`` is ``k[seg[s]:seg[s+1]]``, ``w`` likewise."""

    seg: np.ndarray
    k: np.ndarray
    w: np.ndarray
    shape: witness.Shape
    chunks: int


def tight(d, w, slack: float):
    """The candidate edges: ``w[k,j]`` finite and equal to ``d[k,j]`` (``slack`` 0) or at most
    ``d[k,j] + slack * w[k,j]`` (off the diagonal or not)."""
    finite = w < numeric.inf_of(w.dtype)
    if slack == 0:
        return finite & (w == d)
    return finite & (w <= d + slack * w)


def count(d, w, slack: float) -> int:
    """How many candidate edges there are off the diagonal."""
    m = tight(d, w, slack)
    return int(m.sum() - np.diagonal(m).sum())


def candidates(d, w, slack: float) -> Candidates:
    """The candidate lists of the n x n distances ``d`` and start matrix ``w``."""
    n = d.shape[0]
    sh = witness.shape(d.dtype, n)
    kc, group = sh.chunk, sh.group
    chunks = -(-n // kc)
    nseg = -(-n // group) * chunks * group
    m = tight(d, w, slack)
    np.fill_diagonal(m, False)
    seg, ks, ws = [0], [], []
    for s in range(nseg):
        g, rest = divmod(s, chunks * group)
        c, jj = divmod(rest, group)
        j = g * group + jj
        k = np.flatnonzero(m[c * kc:(c + 1) * kc, j]) + c * kc if j < n else np.zeros(0, np.int64)
        pad = -k.size % witness.UNROLL
        ks += [k, np.full(pad, -1)]
        ws += [w[k, j] if j < n else w[:0, 0], np.full(pad, numeric.inf_of(w.dtype), w.dtype)]
        seg.append(seg[-1] + k.size + pad)
    return Candidates(np.array(seg, np.int32), np.concatenate(ks).astype(np.int32), np.concatenate(ws).astype(w.dtype),
                      sh, chunks)


def pack(cand: Candidates) -> np.ndarray:
    """The entries the kernels read (witness.Candidates.entries), as int32 words."""
    sh, k, w = cand.shape, cand.k, cand.w
    pad = k < 0
    offset = np.where(pad, 0, k % sh.chunk * w.dtype.itemsize).astype(np.int32)
    if sh.keyed:
        key = np.where(pad, PAD_KEY, (w.astype(np.int32) << 16) | k).astype(np.int32)
        return np.stack([key, offset], axis=1)
    words = sh.entry_bytes // 4
    out = np.zeros((k.size, words), np.int32)
    out[:, 0] = offset
    out.view(w.dtype)[:, (8 if words == 4 else 4) // w.dtype.itemsize] = w
    return out


def column_candidates(cand: Candidates, j: int, n: int):
    """(k, w) of column j's candidates, k ascending, read off the segments."""
    group = cand.shape.group
    g, jj = divmod(j, group)
    ks, ws = [], []
    for c in range(cand.chunks):
        s = (g * cand.chunks + c) * group + jj
        ks.append(cand.k[cand.seg[s]:cand.seg[s + 1]])
        ws.append(cand.w[cand.seg[s]:cand.seg[s + 1]])
    k, w = np.concatenate(ks), np.concatenate(ws)
    return k[k >= 0], w[k >= 0]                      # without the padding


def recover(d, cand: Candidates, slack: float):
    """(predecessors, misses) as the kernel computes them."""
    n = d.shape[0]
    dt = d.dtype
    inf = numeric.inf_of(dt)
    acc = np.int64 if dt.kind == "i" else dt           # the kernel's sums cannot overflow
    pred = np.full((n, n), NO_PREDECESSOR, np.int32)
    misses = 0
    for j in range(n):
        k, w = column_candidates(cand, j, n)
        target = d[:, j].astype(acc)
        if k.size:
            dk = d[:, k].astype(acc)                   # rows i, candidates k
            sums = dk + w.astype(acc)[None, :]
            if dt.kind == "f":
                sums = np.where(dk < target[:, None], sums, np.inf)
            best = sums.min(axis=1)
            who = k[np.argmin(sums, axis=1)]          # argmin: the first, smallest k, of equals
        else:
            best = np.full(n, np.inf)
            who = np.full(n, NO_PREDECESSOR)
        reachable = target < inf
        reachable[j] = False
        tol = (slack * np.where(reachable, target, 0).astype(np.float64)).astype(acc)
        ok = (best <= target + tol) & (best >= target - tol)
        pred[reachable & ok, j] = who[reachable & ok]
        misses += int((reachable & ~ok).sum())
    return pred, misses
