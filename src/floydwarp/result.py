"""`Result`: distances, predecessors and everything asked of them afterwards."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .arrays import is_device_array, to_host
from .cycles import NegativeCycles
from .errors import FloydwarpError, NoPathError
from .numeric import to_float64
from .predecessors import walk

_FORMAT_VERSION = 1


class Result:
    """The answer of :func:`floydwarp.solve`.

    Attributes
    ----------
    dist : ndarray (n, n)
        Distances in the solver's dtype; unreachable pairs hold exactly ``inf``.
    pred : ndarray (n, n) of int32 or None
        Predecessors (SciPy's convention, -9999 for none) when requested.
    inf : scalar
        The value meaning "unreachable" (``np.inf`` for float dtypes).
    labels : list or None
        Vertex labels from the input; every query accepts a label or an index.
    negative_cycles : NegativeCycles
        Vertices on negative cycles and the pairs those cycles make unbounded.
    graph : Graph or None
        The graph that was solved (kept by :func:`solve`; None for loaded results).
    timings : dict
        Seconds per stage ("compute", and "h2d"/"d2h" on a GPU).

    Examples
    --------
    >>> import floydwarp as fw
    >>> r = fw.solve(fw.Graph.from_edges([0, 1], [1, 2], [5, 7]), predecessors=True)
    >>> r.distance(0, 2), r.path(0, 2), r.reachable(2, 0)
    (12, [0, 1, 2], False)
    """

    def __init__(self, dist, pred=None, *, inf, labels=None, backend="", algorithm="",
                 timings=None, num_edges=None, negative_cycles=None, metadata=None, graph=None):
        self.dist = dist
        self.pred = pred
        self.inf = inf
        self.labels = None if labels is None else list(labels)
        self.backend = backend
        self.algorithm = algorithm
        self.timings = dict(timings or {})
        self.num_edges = num_edges
        self.negative_cycles = NegativeCycles.none(self.n) if negative_cycles is None else negative_cycles
        self.graph = graph
        self.metadata = dict(metadata or {})
        self._index = None if self.labels is None else {lab: i for i, lab in enumerate(self.labels)}

    # ------------------------------------------------------------------ summary
    @property
    def n(self) -> int:
        return int(self.dist.shape[0])

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.dist.dtype)

    @property
    def negative_cycle_vertices(self) -> np.ndarray:
        """Vertices that lie on a negative cycle (their distance to themselves is -inf)."""
        return self.negative_cycles.vertices

    @property
    def has_negative_cycle(self) -> bool:
        return bool(self.negative_cycles)

    @property
    def time(self) -> float:
        """Seconds of the whole run (copies included)."""
        return float(sum(self.timings.values()))

    @property
    def compute_time(self) -> float:
        return float(self.timings.get("compute", self.time))

    @property
    def relaxations_per_second(self) -> float:
        """n^3 / compute time: the Floyd-Warshall rate."""
        t = self.compute_time
        return float(self.n) ** 3 / t if t > 0 else math.inf

    def __repr__(self):
        return (f"Result(n={self.n}, dtype={self.dtype.name}, backend={self.backend}/{self.algorithm}, "
                f"time={self.time:.4g}s, negative_cycle={self.has_negative_cycle})")

    # ------------------------------------------------------------------ queries
    def index(self, vertex) -> int:
        """The index of a vertex given by label (when labelled) or by index."""
        if self._index is not None and vertex in self._index:
            return self._index[vertex]
        if isinstance(vertex, (int, np.integer)) and not isinstance(vertex, bool) and 0 <= vertex < self.n:
            return int(vertex)
        raise FloydwarpError(f"unknown vertex {vertex!r} (the graph has {self.n} vertices)")

    def label(self, i: int):
        return i if self.labels is None else self.labels[i]

    def reachable(self, u, v) -> bool:
        i, j = self.index(u), self.index(v)
        return bool(self.dist[i, j] < self.inf)

    def distance(self, u, v):
        """Shortest distance from u to v: a number, ``math.inf`` when unreachable,
        ``-math.inf`` when a negative cycle lies on the way."""
        i, j = self.index(u), self.index(v)
        if not self.reachable(i, j):
            return math.inf
        if self.negative_cycles.affects(i, j):
            return -math.inf
        value = self.dist[i, j]
        return int(value) if self.dtype.kind == "i" else float(value)

    def path(self, u, v) -> list:
        """The vertices (labels when labelled) of a shortest path from u to v."""
        if self.pred is None:
            raise FloydwarpError("this result has no predecessors; solve with predecessors=True to ask for routes")
        i, j = self.index(u), self.index(v)
        if not self.reachable(i, j):
            raise NoPathError(f"no path from {u!r} to {v!r}: {v!r} is unreachable")
        if self.negative_cycles.affects(i, j):
            raise NoPathError(f"no shortest path from {u!r} to {v!r}: it runs through a negative cycle")
        route = walk(to_host(self.pred[i]), i, j, self.n)
        return [self.label(k) for k in route]

    def to_dense(self):
        """float64 distances with ``np.inf`` for unreachable pairs (on the array's device)."""
        return to_float64(self.dist, self.inf)

    def to_host(self) -> "Result":
        """This result with its matrices copied to host memory."""
        if not is_device_array(self.dist):
            return self
        return Result(to_host(self.dist), None if self.pred is None else to_host(self.pred), inf=self.inf,
                      labels=self.labels, backend=self.backend, algorithm=self.algorithm,
                      timings=self.timings, num_edges=self.num_edges,
                      negative_cycles=self.negative_cycles, metadata=self.metadata, graph=self.graph)

    # ------------------------------------------------------------------ files
    def save(self, path) -> Path:
        """Write the result to a ``.npz`` file (atomically)."""
        from .io.atomic import atomic_path

        path = Path(path)
        host = self.to_host()
        meta = {
            "format": "floydwarp-result", "version": _FORMAT_VERSION,
            "dtype": host.dtype.name, "inf": host.inf.item() if hasattr(host.inf, "item") else host.inf,
            "backend": self.backend, "algorithm": self.algorithm, "timings": self.timings,
            "num_edges": self.num_edges, "labels": _jsonable_labels(self.labels), "metadata": self.metadata,
        }
        cycles = self.negative_cycles
        arrays = {"dist": host.dist, "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                  "cycle_vertices": cycles.vertices, "cycle_reach_to": cycles.reach_to,
                  "cycle_reach_from": cycles.reach_from}
        if host.pred is not None:
            arrays["pred"] = host.pred
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)
        return path

    @classmethod
    def load(cls, path) -> "Result":
        """Read a result written by :meth:`save`."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode())
                dist = data["dist"]
                pred = data["pred"] if "pred" in data.files else None
                cycles = NegativeCycles(data["cycle_vertices"], data["cycle_reach_to"], data["cycle_reach_from"])
        except (OSError, ValueError, KeyError) as exc:
            raise FloydwarpError(f"{path}: not a floydwarp result file ({exc})") from exc
        if meta.get("format") != "floydwarp-result":
            raise FloydwarpError(f"{path}: not a floydwarp result file")
        inf = np.inf if np.dtype(meta["dtype"]).kind == "f" else np.dtype(meta["dtype"]).type(meta["inf"])
        return cls(dist, pred, inf=inf, labels=_labels_from_json(meta.get("labels")),
                   backend=meta.get("backend", ""), algorithm=meta.get("algorithm", ""),
                   timings=meta.get("timings"), num_edges=meta.get("num_edges"), metadata=meta.get("metadata"),
                   negative_cycles=cycles)


def _jsonable_labels(labels):
    if labels is None:
        return None
    return [lab.item() if isinstance(lab, np.generic) else lab for lab in labels]


def _labels_from_json(labels):
    if labels is None:
        return None
    return [tuple(lab) if isinstance(lab, list) else lab for lab in labels]
