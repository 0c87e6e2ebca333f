"""The ``mpi`` backend: Floyd-Warshall over MPI processes (CPU ranks with Numba, or one GPU per rank)."""

#: the mpi algorithms that run on GPUs, one per rank (registered in :mod:`.gpu`): the CLI starts
#: a rank's GPU (and NCCL, for ranks on several nodes) before it parses its options.  Named here, where reading
#: them imports nothing: importing ``.gpu`` took 0.1 s of a rank's start.
GPU_ALGORITHMS = ("gpu-2d", "gpu-rows")
