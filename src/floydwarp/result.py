"""`Result`: distances, predecessors and everything asked of them afterwards."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from . import metrics
from .arrays import is_device_array, to_host
from .cycles import NegativeCycles
from .errors import DtypeError, FloydwarpError, NoPathError
from .casts import exact_scalar, to_float64
from .predecessors import walk

_FORMAT_VERSION = 1
#: timings that are parts of "compute", not added to the whole
NESTED_STAGES = ("phase1", "phase2", "phase3", "comm")


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
        Seconds per stage of :func:`floydwarp.solve`, in order: "prepare" (reading the
        input, weight statistics, dtype and backend choice), the engine's stages
        ("start": the start matrix; "compile": kernel compilation or cache load; "compute";
        on a GPU "h2d", "setup", "check" (the dtype check after the run), "d2h"; under MPI
        "comm", part of "compute", and "gather"; on several GPUs also "start" (the worker
        processes, once per process), "share" (the shared input file) and "dispatch" (the
        jobs' messages and the workers' waits)),
        and "finish" (unreachable entries, negative cycles, the result).

    Examples
    --------
    >>> import floydwarp as fw
    >>> r = fw.solve(fw.Graph.from_edges([0, 1], [1, 2], [5, 7]), predecessors=True)
    >>> r.distance(0, 2), r.path(0, 2), r.reachable(2, 0)
    (12, [0, 1, 2], False)
    """

    def __init__(self, dist, pred=None, *, inf, labels=None, backend="", algorithm="",
                 timings=None, num_edges=None, negative_cycles=None, metadata=None, graph=None,
                 solver=None):
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
        #: what made this result (``floydwarp.solve``): ``update_edge`` re-solves with it
        self.solver = solver
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
        """Seconds of the whole run (copies included): the stages not part of another."""
        return float(sum(v for k, v in self.timings.items() if k not in NESTED_STAGES))

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
        i = self._labelled(vertex)
        if i is not None:
            return i
        if _kind(vertex) is int and 0 <= vertex < self.n:
            return int(vertex)
        raise FloydwarpError(f"unknown vertex {vertex!r} (the graph has {self.n} vertices)")

    def _labelled(self, vertex) -> int | None:
        """The index of the vertex labelled ``vertex``, or None.  A dict finds the label 1 for
        True and 1.0 too: their kinds must agree as well; an unhashable vertex is no label."""
        if self._index is None:
            return None
        try:
            i = self._index.get(vertex)
        except TypeError:
            return None
        return i if i is not None and _kind(vertex) is _kind(self.labels[i]) else None

    def label(self, i: int):
        """The label of vertex index ``i`` (``i`` itself when unlabelled)."""
        if _kind(i) is not int or not 0 <= i < self.n:      # no reading from the end, as a list would
            raise FloydwarpError(f"vertex index {i!r} is out of range 0..{self.n - 1}")
        return int(i) if self.labels is None else self.labels[i]

    def reachable(self, u, v) -> bool:
        i, j = self.index(u), self.index(v)
        return self._reachable_ij(i, j)

    def _reachable_ij(self, i: int, j: int) -> bool:
        # by index: passing indices back through index() would read them as labels
        return bool(self.dist[i, j] < self.inf)

    def distance(self, u, v):
        """Shortest distance from u to v: a number, ``math.inf`` when unreachable,
        ``-math.inf`` when a negative cycle lies on the way."""
        i, j = self.index(u), self.index(v)
        if not self._reachable_ij(i, j):
            return math.inf
        if self.negative_cycles.affects(i, j):
            return -math.inf
        value = self.dist[i, j]
        return int(value) if self.dtype.kind in "iu" else float(value)

    def path(self, u, v) -> list:
        """The vertices (labels when labelled) of a shortest path from u to v."""
        if self.pred is None:
            raise FloydwarpError("this result has no predecessors; solve with predecessors=True to ask for routes")
        i, j = self.index(u), self.index(v)
        if not self._reachable_ij(i, j):
            raise NoPathError(f"no path from {u!r} to {v!r}: {v!r} is unreachable")
        if self.negative_cycles.affects(i, j):
            raise NoPathError(f"no shortest path from {u!r} to {v!r}: it runs through a negative cycle")
        route = walk(to_host(self.pred[i]), i, j, self.n)
        return [self.label(k) for k in route]

    def distances_from(self, u) -> dict:
        """``{target: distance}`` for every vertex (labels when labelled), as :meth:`distance`
        gives them: ``math.inf`` when unreachable, ``-math.inf`` through a negative cycle."""
        i = self.index(u)
        row = np.asarray(to_host(self.dist[i]))
        unreachable = row >= self.inf
        unbounded = self._unbounded_from(i)
        values = row.tolist()
        out = {}
        for j, value in enumerate(values):
            if unreachable[j]:
                value = math.inf
            elif unbounded[j]:
                value = -math.inf
            elif self.dtype.kind == "f":
                value = float(value)
            out[self.label(j)] = value
        return out

    def paths_from(self, u) -> dict:
        """``{target: route}`` for every target reachable from u by a shortest path.

        A route is the list of vertices (labels when labelled) from u to the target;
        u itself maps to ``[u]``.  Unreachable targets and targets whose routes can
        run through a negative cycle (no shortest path exists; u too when it lies on
        one) are omitted: ask
        :meth:`distance` (``inf`` / ``-inf``) or :meth:`path` (which raises
        :class:`NoPathError` saying which) about those.
        """
        if self.pred is None:
            raise FloydwarpError("this result has no predecessors; solve with predecessors=True to ask for routes")
        i = self.index(u)
        row = np.asarray(to_host(self.dist[i]))
        pred = np.asarray(to_host(self.pred[i])).tolist()
        ok = (row < self.inf) & ~self._unbounded_from(i)
        names = range(self.n) if self.labels is None else self.labels
        # each route is its predecessor's route plus one vertex, built in label space once
        routes: dict[int, list] = {i: [names[i]]}
        for t in np.flatnonzero(ok).tolist():
            if t in routes:
                continue
            chain = []
            v = t
            while v not in routes:
                chain.append(v)
                if len(chain) > self.n:
                    raise FloydwarpError(f"predecessors do not lead from {self.label(t)!r} back to {u!r}")
                v = pred[v]
                if v < 0:
                    raise FloydwarpError(f"predecessors do not lead from {self.label(t)!r} back to {u!r}")
            base = routes[v]
            for x in reversed(chain):
                base = base + [names[x]]
                routes[x] = base
        return {names[t]: routes[t] for t in sorted(routes) if ok[t]}

    def _unbounded_from(self, i: int) -> np.ndarray:
        """Targets v for which a negative cycle lies on some walk from i (bool mask)."""
        cycles = self.negative_cycles
        if not cycles:
            return np.zeros(self.n, dtype=bool)
        hit = cycles.reach_to[:, i]
        return np.any(cycles.reach_from[hit], axis=0) if hit.any() else np.zeros(self.n, dtype=bool)

    def find_vertex(self, text: str):
        """The vertex a command-line word names: a label when the result is labelled
        (tried as text, then as an integer or a number), else an index 0..n-1."""
        numbers = _numbers(text)
        if self.labels is not None:
            for c in [text, *numbers]:
                if self._labelled(c) is not None:
                    return c
            sample = ", ".join(repr(lab) for lab in self.labels[:3])
            raise FloydwarpError(f"unknown vertex {text!r}: this result's vertices are labelled ({sample}, ...)")
        numbering = f"vertices are numbered 0..{self.n - 1}" if self.n else "this result has no vertices"
        i = next((c for c in numbers if isinstance(c, int)), None)
        if i is None:
            raise FloydwarpError(f"unknown vertex {text!r}: {numbering}")
        if not 0 <= i < self.n:
            raise FloydwarpError(f"vertex {i} is out of range: {numbering}")
        return i

    def update_edge(self, u, v, w) -> "Result":
        """Set the weight of edge u -> v to w and bring every distance (and route) up to date.

        A decrease (or a new edge) updates all pairs in O(n^2) -- on the GPU when the
        matrices live there -- widening the dtype if a new distance needs it and
        recording a negative cycle it closes.  An increase, or ``w=None`` / ``math.inf``
        (remove the edge), re-solves the graph unless no shortest path used the edge.
        Needs the graph (``self.graph``, kept by :func:`floydwarp.solve`, and ``self.solver``).  Updates this
        result in place and returns it.

        >>> import floydwarp as fw
        >>> r = fw.solve(fw.Graph.from_edges([0, 1], [1, 2], [5, 7]), predecessors=True)
        >>> r.update_edge(0, 2, 3).distance(0, 2), r.path(0, 2)
        (3, [0, 2])
        """
        from .dynamic import update_edge

        return update_edge(self, u, v, w)

    # ------------------------------------------------------------------ metrics (floydwarp.metrics)
    def eccentricity(self):
        """Per vertex, the largest distance to another (``inf`` where one is unreachable):
        an array of the result's dtype on its device."""
        return metrics.eccentricity(self)

    def diameter(self):
        """The largest eccentricity (``math.inf`` when a pair is unreachable)."""
        return metrics.diameter(self)

    def radius(self):
        """The smallest eccentricity."""
        return metrics.radius(self)

    def center(self) -> list:
        """The vertices (labels when labelled) whose eccentricity is the radius."""
        return metrics.center(self)

    def periphery(self) -> list:
        """The vertices (labels when labelled) whose eccentricity is the diameter."""
        return metrics.periphery(self)

    def closeness(self, wf_improved: bool = True):
        """NetworkX's closeness centrality (inward distances) as a float64 array on the device."""
        return metrics.closeness(self, wf_improved)

    def average_path_length(self) -> float:
        """The mean distance over ordered pairs of distinct vertices (``math.inf`` if one is unreachable)."""
        return metrics.average_path_length(self)

    def wiener_index(self, directed: bool = True):
        """The sum of distances over ordered pairs, or unordered ones with ``directed=False``."""
        return metrics.wiener_index(self, directed)

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
                      negative_cycles=self.negative_cycles, metadata=self.metadata, graph=self.graph,
                      solver=self.solver)

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
            "num_edges": self.num_edges, "labels": jsonable_labels(self.labels), "metadata": self.metadata,
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
        """Read a result written by :meth:`save` (``.npz``); :func:`floydwarp.io.read_result` reads
        every result format (the ``.npy`` layout of ``floydwarp solve -o``, NTHU ``.out``)."""
        from .io.npy import NPZ_ERRORS

        path = Path(path)
        try:
            data = np.load(path, mmap_mode="r", allow_pickle=False)     # a .npy is mapped, not read
            if not hasattr(data, "files"):
                raise ValueError("a single NumPy array, not an archive; a .npy result (NAME.npy + NAME.json) "
                                 "is read by floydwarp.io.read_result")
            with data:
                meta = json.loads(bytes(data["meta"]).decode())
                dist = data["dist"]
                pred = data["pred"] if "pred" in data.files else None
                cycles = NegativeCycles(data["cycle_vertices"], data["cycle_reach_to"], data["cycle_reach_from"])
        except NPZ_ERRORS as exc:
            raise FloydwarpError(f"{path}: not a floydwarp result file ({exc})") from exc
        if meta.get("format") != "floydwarp-result":
            raise FloydwarpError(f"{path}: not a floydwarp result file")
        if dist.ndim != 2 or dist.shape[0] != dist.shape[1] or (pred is not None and pred.shape != dist.shape):
            held = f"dist {dist.shape}" + ("" if pred is None else f" and pred {pred.shape}")
            raise FloydwarpError(f"{path}: holds {held}; a result's matrices are n x n, one shape")
        inf = stored_inf(path, meta["dtype"], meta["inf"])
        return cls(dist, pred, inf=inf, labels=labels_from_json(meta.get("labels")),
                   backend=meta.get("backend", ""), algorithm=meta.get("algorithm", ""),
                   timings=meta.get("timings"), num_edges=meta.get("num_edges"), metadata=meta.get("metadata"),
                   negative_cycles=cycles)


def stored_inf(path, dtype, value):
    """The INF a result file records for ``dtype`` (``np.inf`` for floats), refusing one the dtype
    cannot hold (NumPy 1 would wrap it)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.inf
    try:
        return exact_scalar(value, dtype)
    except (DtypeError, TypeError) as exc:
        raise FloydwarpError(f"{path}: its INF {value!r} is no {dtype.name} ({exc})") from None


def jsonable_labels(labels):
    if labels is None:
        return None
    return [lab.item() if isinstance(lab, np.generic) else lab for lab in labels]


def labels_from_json(labels):
    if labels is None:
        return None
    return [tuple(lab) if isinstance(lab, list) else lab for lab in labels]


def _kind(x):
    """bool, int, float or object: a vertex given as one kind never names a label of another
    (True and 1.0 are not the label 1), and only an int is an index."""
    if isinstance(x, (bool, np.bool_)):
        return bool
    if isinstance(x, (int, np.integer)):
        return int
    return float if isinstance(x, (float, np.floating)) else object


def _numbers(text: str) -> list:
    """The int and the float a command-line word spells in plain ASCII ("-3", "2.5"): Python's
    ``int()`` would also read "1_0" as 10, " 1" as 1 and other scripts' digits."""
    if not text.isascii() or "_" in text or text != text.strip():
        return []
    found = []
    for conv in (int, float):
        try:
            found.append(conv(text))
        except ValueError:
            pass
    return found
