"""NumPy model of ``fw_witness`` (gpu/kernels/witness.cu): the same candidate segments,
the same rule (least sum, smallest k among equals; floats: only k with d[i,k] < d[i,j]),
the same acceptance.  test_witness.py checks it against the triple loop; test_gpu_witness.py
holds the kernel to it."""
from __future__ import annotations

import numpy as np

from floydwarp import numeric
from floydwarp.gpu.predecessors import witness
from floydwarp.predecessors import NO_PREDECESSOR


def column_candidates(cand: witness.Candidates, j: int, n: int):
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


def recover(d, cand: witness.Candidates, slack: float):
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
