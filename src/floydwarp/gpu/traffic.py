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


def panel_model(default_width):
    """Rounds of w pivot columns as panel products (minplus.cu): every 64 x 64 output
    unit reads a 64 x 64 tile of each panel per 64 steps of k (2 n^3 / 64 elements, mostly
    from L2), and each round reads and writes every cell once (2 n^3 / w)."""
    def bytes_moved(n, itemsize, block_size=None):
        n = int(n)
        w = int(block_size or default_width)
        return (2.0 * n ** 3 / 64 + 2.0 * n ** 3 / w) * itemsize

    bytes_moved.__doc__ = f"Panel-product traffic with {default_width}-wide rounds by default."
    return bytes_moved


#: out-of-core: 4096-wide panels where memory allows (ooc.PANEL_MAX)
out_of_core_model = panel_model(4096)


def fast_model(n, itemsize, block_size=None):
    """"fast": 2048-wide rounds of panel products ("wide") for 2- and 4-byte types,
    blocked traffic at 64 x 64 tiles ("vec") for the 8-byte types
    (tiles.FAST_DEFAULT_VARIANT)."""
    if int(itemsize) == 8:
        return blocked_model(64)(n, itemsize, block_size or 64)
    return panel_model(2048)(n, itemsize, block_size)
