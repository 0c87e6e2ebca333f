"""A NumPy model of gpu/predecessors/keyed.py's kernels: packing, the keyed relaxation, unpacking."""
from __future__ import annotations

import numpy as np

from floydwarp import numeric
from floydwarp.predecessors import NO_PREDECESSOR


def pack(d, kp):
    """fw_key_pack: d * 2**bits + i on edges i -> j; key INF and none elsewhere, none on the diagonal."""
    n = d.shape[0]
    edge = d < numeric.inf_of(d.dtype)
    dist = np.where(edge, d, kp.inf).astype(np.int64)
    rows = np.broadcast_to(np.arange(n)[:, None], (n, n))
    p = np.where(edge & (rows != rows.T), rows, kp.none)
    return (dist * (1 << kp.bits) + p).astype(np.int32)


def floyd_warshall(keys, kp, clamp):
    """What the kernels compute, one k at a time: min(key, (key[i,k] & keep) + key[k,j])."""
    for k in range(keys.shape[0]):
        cand = (keys[:, k:k + 1] & np.int32(kp.keep)) + keys[k:k + 1, :]
        if clamp:
            np.maximum(cand, kp.ninf, out=cand)
        np.minimum(keys, cand, out=keys)
    return keys


def unpack(keys, kp, dtype):
    """fw_key_unpack: (distances with INF where unreachable, predecessors; none on the
    diagonal unless a negative cycle runs through it)."""
    dist = keys >> kp.bits
    p = keys & kp.none
    reach = dist < kp.unreachable
    d = np.where(reach, dist, numeric.inf_of(dtype)).astype(dtype)
    own = np.eye(*keys.shape, dtype=bool) & (dist >= 0)
    return d, np.where(reach & (p != kp.none) & ~own, p, NO_PREDECESSOR).astype(np.int32)
