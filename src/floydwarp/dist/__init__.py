"""Distributed engines: MPI processes, one per core group or GPU (``backend="mpi"``)."""
