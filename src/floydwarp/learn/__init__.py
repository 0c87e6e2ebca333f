"""Drop-ins for graph-learning libraries, on floydwarp's batched engines.

* :mod:`floydwarp.learn.graphormer`: Graphormer's ``algos.floyd_warshall``,
  ``algos.gen_edge_input`` and its collator's shortest-path tensors, exact and batched;
* :mod:`floydwarp.learn.dgl`: ``dgl.shortest_dist`` (no DGL needed);
* :mod:`floydwarp.pyg`: a PyTorch Geometric transform (``ShortestPathDistance``).

docs/graph-learning.md has examples for each.  Importing this package imports neither
Numba, CuPy nor PyTorch.
"""
