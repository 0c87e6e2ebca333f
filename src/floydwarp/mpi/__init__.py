"""The ``mpi`` backend: Floyd-Warshall over MPI processes (CPU ranks with Numba, or one GPU per rank)."""
