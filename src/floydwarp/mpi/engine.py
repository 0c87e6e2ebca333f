"""The ``mpi`` backend: Floyd-Warshall over MPI processes.

Run every rank with the same graph (``mpiexec -n P python prog.py`` calling
:func:`floydwarp.solve` with ``backend="mpi"``, or ``mpiexec -n P floydwarp
solve ... --distributed``).  Rank 0 gets the :class:`Result`; the other ranks
get ``None``.

Algorithms
----------
``blocked-2d`` (default, :mod:`floydwarp.mpi.blocked`)
    Tiles dealt 2D block-cyclically over a Pr x Pc process grid
    (:mod:`floydwarp.grid`).  Each round the pivot tile's owner closes it
    (phase 1), the pivot goes along its process row and column, the owners
    of the pivot row and column tiles update them (phase 2), the pivot tile
    row is broadcast down process columns and the pivot tile column along
    process rows, and every process updates its own tiles (phase 3).  With
    lookahead, a process first updates the tiles the next round pivots on,
    starts that round's phases 1-2 and non-blocking broadcasts, and only then
    updates the rest of its tiles, so the broadcasts travel during phase 3.
``rows`` (:mod:`floydwarp.mpi.rows`)
    Seed 002's 1D decomposition: contiguous blocks of rows per process; for
    each k the owner of row k broadcasts it and every process relaxes its rows.

``gpu-2d`` and ``gpu-rows`` (:mod:`floydwarp.mpi.gpu`)
    The multi-GPU engine of :mod:`floydwarp.multigpu.rank`, one GPU per rank.

Each CPU process computes with the Numba kernels of the ``cpu`` backend on
``threads`` cores (default: the node's cores shared among its ranks).

Input
-----
Every rank is handed the same parsed graph (``floydwarp solve FILE --distributed``
parses the file on every rank: a parallel read with no broadcast) and builds only
its own share of the start matrix from it: its 2D block-cyclic tiles
(:func:`floydwarp.tiling.start_tiles`) or its rows (``Graph.matrix_rows``), never the
n x n matrix.  A file that cannot be parsed therefore fails on every rank with the
same message before any collective starts; so do a bad ``block_size`` and a result
that has nowhere to go (below).

Output
------
The result is gathered to rank 0 when it fits in rank 0's memory
(:func:`floydwarp.mpi.output.choose_target`).  Otherwise, given
``output_file="NAME.npy"``, every rank writes its tiles or rows straight into that
file in the ``.npy`` result layout (:mod:`floydwarp.mpi.output`) and rank 0's
:class:`Result` holds read-only memory maps of it; ``parallel_write=True`` does that
even when the result would fit.  A result that fits nowhere is refused before the run.
"""
from __future__ import annotations

from ..registry import register_backend
from . import blocked, comm, gpu, output, rows  # noqa: F401 -- each registers its algorithms

register_backend("mpi", "MPI processes (mpiexec -n P): 2D block-cyclic tiles, Numba on each rank",
                 probe=comm.probe, options=output.OPTIONS)
