"""A process's block of the start matrix on its GPU, and its results back to the host.

Every process of the multi-GPU engines holds one block (:class:`~.partition.BlockPartition`)
and builds it itself: the edges leaving its rows go up (compact: 8 bytes an edge in int32)
and its GPU keeps those inside its block (:func:`floydwarp.gpu.start.from_edges`); a dense
matrix comes up band by band from host rows.  No process builds an n^2 host matrix for another.
Threads of one process whose GPUs reach each other's memory share the upload instead: each
GPU of a grid row sends a part of the row's edges, and every GPU of the row reads them all.
"""
from __future__ import annotations

import threading

import numpy as np

from ..grid import ProcessGrid
from .partition import BlockPartition

#: rows per host -> device copy when a block comes from host rows
BAND_BYTES = 256 << 20


class BlockSource:
    """How each process (or thread) builds its block: ``block(part, grid, dtype, inf)``."""

    def abort(self) -> None:
        """A GPU's run broke off: release whoever waits for it (no one, unless the blocks are
        built together)."""


class EdgeBlocks(BlockSource):
    """Blocks built on the device from the n vertices' distinct ``edges = (src, dst, w)``
    (host arrays sorted by source): a block's GPU gets only the edges leaving its rows."""

    def __init__(self, edges, n: int):
        self.edges, self.n = edges, int(n)

    def block(self, part: BlockPartition, grid: ProcessGrid, dtype, inf):
        from ..gpu import start

        (r0, nr, c0, nc), (a, b) = self._rows_edges(part, grid)
        return start.from_edges(tuple(e[a:b] for e in self.edges), self.n, nr, nc, dtype, inf, origin=(r0, c0))

    def _rows_edges(self, part: BlockPartition, grid: ProcessGrid):
        """``((r0, rows, c0, cols), (a, b))``: the block's place and size, and the range of the
        edges leaving its rows."""
        r0, nr = part.row_extent(grid.my_row)
        c0, nc = part.col_extent(grid.my_col)
        a, b = np.searchsorted(self.edges[0], [r0, r0 + nr])
        return (r0, nr, c0, nc), (int(a), int(b))


class RowSharedEdgeBlocks(EdgeBlocks):
    """:class:`EdgeBlocks` for threads of one process, one per GPU, with peer access: the
    GPUs of a grid row need the same edges (those leaving the row's vertices), so each uploads
    a 1/Pc share of them, and each GPU's scatter kernel reads every share, its peers' over
    NVLink.  Each edge crosses the host's bus once, where every GPU of a 2 x 2 grid uploaded
    half the graph (0.13 s of a 0.8 s call at n = 32768)."""

    def __init__(self, edges, n: int, grid_shape, timeout: float):
        super().__init__(edges, n)
        self.cols = grid_shape[1]
        self.shares = {}                         # (grid row, grid column) -> that GPU's share, on it
        self.meet = [threading.Barrier(self.cols, timeout=timeout) for _ in range(grid_shape[0])]

    def block(self, part: BlockPartition, grid: ProcessGrid, dtype, inf):
        import cupy as cp

        from ..gpu import start

        (r0, nr, c0, nc), (a, b) = self._rows_edges(part, grid)
        lo, hi = (a + (b - a) * k // self.cols for k in (grid.my_col, grid.my_col + 1))
        self.shares[grid.my_row, grid.my_col] = start.upload_edges(tuple(e[lo:hi] for e in self.edges), self.n,
                                                                   dtype)
        d = start.matrix(nr, nc, dtype, inf, origin=(r0, c0))
        cp.cuda.get_current_stream().synchronize()
        meet = self.meet[grid.my_row]
        meet.wait()                              # every share of the row is up
        for col in range(self.cols):
            start.scatter(d, self.shares[grid.my_row, col], origin=(r0, c0))
        cp.cuda.get_current_stream().synchronize()
        meet.wait()                              # no peer reads this GPU's share any more: it may go
        del self.shares[grid.my_row, grid.my_col]
        return d

    def abort(self) -> None:
        """The others must not wait for the share of a GPU whose run broke off."""
        for meet in self.meet:
            meet.abort()


class DeviceEdgeBlocks(BlockSource):
    """Blocks built from edges in GPU memory (``Graph.device_edges``: a graph drawn on one
    GPU): each GPU copies them from there (over NVLink, milliseconds where the host's edges
    took seconds to draw and cross the bus) and keeps those inside its block."""

    def __init__(self, edges, n: int):
        self.edges, self.n = edges, int(n)

    def block(self, part: BlockPartition, grid: ProcessGrid, dtype, inf):
        from ..gpu import start

        r0, nr = part.row_extent(grid.my_row)
        c0, nc = part.col_extent(grid.my_col)
        edges = tuple(_here(a) for a in self.edges)
        return start.from_device_edges(edges, self.n, nr, nc, dtype, inf, origin=(r0, c0))


def _here(a):
    """CuPy array ``a`` on the current device: itself, or a copy from the GPU that holds it."""
    import cupy as cp

    if a.device.id == cp.cuda.Device().id:
        return a
    copy = cp.empty(a.shape, a.dtype)
    copy.data.copy_from_device(a.data, a.nbytes)
    return copy


class RowBlocks(BlockSource):
    """Blocks uploaded from host rows: ``read_rows(lo, hi, c0, c1)`` gives rows lo..hi-1,
    columns c0..c1-1 of the start matrix (INF padding around them)."""

    def __init__(self, read_rows):
        self.read_rows = read_rows

    def block(self, part: BlockPartition, grid: ProcessGrid, dtype, inf):
        import cupy as cp

        _, nr = part.row_extent(grid.my_row)
        _, nc = part.col_extent(grid.my_col)
        L = cp.full((nr, nc), dtype.type(inf), dtype)
        r0, real_r1, c0, real_c1 = real_extent(part, grid)
        if real_r1 <= r0 or real_c1 <= c0:
            return L
        band = max(1, BAND_BYTES // max(1, part.n * dtype.itemsize))
        for lo in range(r0, real_r1, band):
            hi = min(real_r1, lo + band)
            rows = self.read_rows(lo, hi, c0, real_c1)              # host or device rows
            if isinstance(rows, np.ndarray):
                rows = np.ascontiguousarray(rows)
            L[lo - r0:hi - r0, :real_c1 - c0] = cp.asarray(rows)
        return L


def of_graph(graph, dtype, inf, *, shared_by=None):
    """How a process holding ``graph`` builds its block: from its edges (in GPU memory where it
    was drawn there), unless it is dense.  ``shared_by = (grid shape, timeout)``: the blocks
    are built by threads of this process whose GPUs have peer access to each other, and the
    GPUs of a grid row share the upload of their edges (:class:`RowSharedEdgeBlocks`)."""
    if graph.device_edges() is not None:
        return DeviceEdgeBlocks(graph.device_edges(), graph.n)
    if graph.is_dense:
        return RowBlocks(lambda lo, hi, c0, c1: graph.matrix_rows(lo, hi, dtype, inf)[:, c0:c1])
    edges = graph.edges_of_rows(0, graph.n)
    if shared_by is not None and shared_by[0][1] > 1:
        return RowSharedEdgeBlocks(edges, graph.n, *shared_by)
    return EdgeBlocks(edges, graph.n)


def real_extent(part: BlockPartition, grid: ProcessGrid):
    """``(r0, r1, c0, c1)``: the real (unpadded) rows and columns of this process's block."""
    r0, nr = part.row_extent(grid.my_row)
    c0, nc = part.col_extent(grid.my_col)
    return r0, min(r0 + nr, part.n), c0, min(c0 + nc, part.n)


def download_bands(L, part: BlockPartition, grid: ProcessGrid):
    """The real entries of this process's block as host bands: yields (row, col, array)."""
    r0, r1, c0, c1 = real_extent(part, grid)
    if r1 <= r0 or c1 <= c0:
        return
    band = max(1, BAND_BYTES // max(1, (c1 - c0) * L.itemsize))
    for lo in range(r0, r1, band):
        hi = min(r1, lo + band)
        yield lo, c0, L[lo - r0:hi - r0, :c1 - c0].get()


def write_block(L, part: BlockPartition, grid: ProcessGrid, host) -> None:
    """The real entries of this process's block into their place in the host result
    (a :class:`floydwarp.gpu.transfer.HostMatrix`: by DMA where its pages are locked)."""
    r0, r1, c0, c1 = real_extent(part, grid)
    if r1 <= r0 or c1 <= c0:
        return
    host.fill(L, r1 - r0, c1 - c0, at=(r0, c0))


def negative_on_diagonal(L, part: BlockPartition, grid: ProcessGrid) -> bool:
    """Whether a real diagonal entry inside this block went negative."""
    r0, _, c0, _ = real_extent(part, grid)
    lo, hi = max(r0, c0), min(r0 + L.shape[0], c0 + L.shape[1], part.n)
    if hi <= lo:
        return False
    from ..arrays import to_host

    return bool((to_host(L[lo - r0:hi - r0, lo - c0:hi - c0].diagonal()) < 0).any())
