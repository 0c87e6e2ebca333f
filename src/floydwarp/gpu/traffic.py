"""Device-memory traffic models: the fewest bytes each algorithm moves for one run.

``floydwarp bench --backend gpu`` divides these by the measured time to report GB/s
and compares them with the copy ceiling (gpu/ceilings.py).  Each model takes
``(n, itemsize, block_size)``; ``block_size`` None means the algorithm's default.
"""
from __future__ import annotations


def per_k_sweep(n, itemsize, block_size=None):
    """One pass over the matrix per k: every cell read once (row k and column k come
    from cache); a cell is written only when it improves, which becomes rare as k
    grows, so writes are left out of the minimum: n^3 itemsize."""
    n = int(n)
    return 1.0 * n ** 3 * itemsize


def blocked_model(default_block):
    """Blocked FW with B x B tiles: each round reads and writes every tile once (2 n^2);
    the row-r and column-r tiles that every phase-3 block re-reads stay in L2, and
    phases 1-2 add about 6 n B; n/B rounds: 2 n^3 / B + 6 n^2 elements of DRAM traffic."""
    def bytes_moved(n, itemsize, block_size=None):
        n = int(n)
        b = int(block_size or default_block)
        return (2.0 * n ** 3 / b + 6.0 * n ** 2) * itemsize

    bytes_moved.__doc__ = f"Blocked FW traffic with {default_block} x {default_block} tiles by default."
    return bytes_moved


def fast_model(n, itemsize, block_size=None):
    """"fast": blocked traffic at its default tile (64 for every dtype: "pipe" for
    int16, int32 and float32, "vec" for the 8-byte types; engine.FAST_DEFAULT_VARIANT)."""
    b = block_size or 64
    return blocked_model(b)(n, itemsize, b)


def out_of_core_model(n, itemsize, block_size=None):
    """out-of-core (panel products, minplus.cu): every 64 x 64 unit reads a 64 x 64 tile of
    each panel per 64 steps of k (2 n^3 / 64 elements, mostly from L2) and each round reads
    and writes every tile once (2 n^3 / w, w = block_size or 4096 wide panels)."""
    n = int(n)
    w = int(block_size or 4096)
    return (2.0 * n ** 3 / 64 + 2.0 * n ** 3 / w) * itemsize
