"""CPU engines: the NumPy reference and the Numba kernels."""
