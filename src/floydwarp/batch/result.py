"""`BatchResult`: the padded distances of a batch, and each graph as a `Result` view."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from ..arrays import is_device_array, to_host
from ..cycles import NegativeCycles
from ..errors import FloydwarpError
from ..casts import to_float64
from ..result import Result

_FORMAT = "floydwarp-batch"


class BatchResult:
    """The answer of :func:`floydwarp.solve_batch`.

    Attributes
    ----------
    dist : array (B, N, N)
        Distances on the input's device; graph g is ``dist[g, :sizes[g], :sizes[g]]``.
        Unreachable pairs and the padding hold ``inf``: ``np.inf`` for floats, the dtype's
        finite INF marker for integers (255 uint8, 16383 int16, 2**30 - 1 int32, 2**62 - 1
        int64), so compare with ``dist >= inf``, not with ``np.inf``; :meth:`to_dense`
        gives float64 with ``np.inf`` (:func:`floydwarp.solve_batch`'s notes).
    pred : array (B, N, N) of int32 or None
        Predecessors (-9999 for none, padding included) when asked for.
    sizes : ndarray (B,)
        Vertices of each graph.
    negative_cycle : ndarray (B,) of bool
        The graph has a negative cycle (its entries follow :func:`floydwarp.solve`).
    timings : dict
        Seconds per stage ("compute" for the kernels).

    ``len(r)`` is B; ``r[g]`` is graph g as a :class:`floydwarp.Result` (views, no copies),
    with distances, paths and negative-cycle queries.
    """

    def __init__(self, dist, pred=None, *, sizes, negative_cycle, inf, backend="", timings=None, labels=None,
                 cycles=None, metadata=None):
        self.dist, self.pred = dist, pred
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.negative_cycle = np.asarray(negative_cycle, dtype=bool)
        self.inf = inf
        self.backend = backend
        self.timings = dict(timings or {})
        self.labels = labels
        self.metadata = dict(metadata or {})
        self._cycles = dict(cycles or {})

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.dist.dtype)

    @property
    def has_negative_cycle(self) -> bool:
        return bool(self.negative_cycle.any())

    @property
    def relaxations(self) -> float:
        """sum of n^3 over the graphs: the Floyd-Warshall work."""
        return float((self.sizes.astype(np.float64) ** 3).sum())

    @property
    def compute_time(self) -> float:
        return float(self.timings.get("compute", sum(self.timings.values())))

    @property
    def relaxations_per_second(self) -> float:
        t = self.compute_time
        return self.relaxations / t if t > 0 else math.inf

    def __len__(self):
        return int(self.sizes.size)

    def __repr__(self):
        return (f"BatchResult({len(self)} graphs, N={self.dist.shape[1]}, dtype={self.dtype.name}, "
                f"backend={self.backend}, negative_cycles={int(self.negative_cycle.sum())})")

    def __getitem__(self, g) -> Result:
        if not isinstance(g, (int, np.integer)) or isinstance(g, bool):
            raise TypeError("index a BatchResult with one graph number")
        if not -len(self) <= g < len(self):
            raise IndexError(f"graph {g} is out of range for a batch of {len(self)}")
        g = int(g) % len(self)
        n = int(self.sizes[g])
        return Result(self.dist[g, :n, :n], None if self.pred is None else self.pred[g, :n, :n], inf=self.inf,
                      labels=None if self.labels is None else self.labels[g], backend=self.backend,
                      algorithm="batch", negative_cycles=self._cycles.get(g, NegativeCycles.none(n)),
                      metadata={"batch_index": g})

    def __iter__(self):
        return (self[g] for g in range(len(self)))

    def to_dense(self):
        """``dist`` as float64 (B, N, N) with ``np.inf`` for unreachable pairs and the padding
        (on ``dist``'s device)."""
        return to_float64(self.dist, self.inf)

    # ------------------------------------------------------------------ devices
    def _with(self, move) -> "BatchResult":
        return BatchResult(move(self.dist), None if self.pred is None else move(self.pred), sizes=self.sizes,
                           negative_cycle=self.negative_cycle, inf=self.inf, backend=self.backend,
                           timings=self.timings, labels=self.labels, cycles=self._cycles, metadata=self.metadata)

    def to_host(self) -> "BatchResult":
        return self if not is_device_array(self.dist) else self._with(to_host)

    def to_device(self) -> "BatchResult":
        if is_device_array(self.dist):
            return self
        import cupy

        return self._with(cupy.asarray)

    # ------------------------------------------------------------------ files
    def save(self, path, *, inputs=()) -> Path:
        """Write ``dist``, ``sizes``, ``negative_cycle`` (and ``pred``) to a ``.npz`` file, atomically
        (refusing to write onto one of ``inputs``)."""
        from ..io.atomic import atomic_path

        path = Path(path)
        host = self.to_host()
        meta = {"format": _FORMAT, "version": 1, "dtype": self.dtype.name,
                "inf": self.inf.item() if hasattr(self.inf, "item") else self.inf,
                "backend": self.backend, "timings": self.timings}
        arrays = {"dist": host.dist, "sizes": self.sizes, "negative_cycle": self.negative_cycle,
                  "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
        if host.pred is not None:
            arrays["pred"] = host.pred
        with atomic_path(path, inputs=inputs) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)
        return path

    @classmethod
    def load(cls, path) -> "BatchResult":
        """Read a file written by :meth:`save`."""
        from ..io.npy import NPZ_ERRORS

        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode())
                if meta.get("format") != _FORMAT:
                    raise KeyError("format")
                dist, sizes, negative = data["dist"], data["sizes"], data["negative_cycle"]
                pred = data["pred"] if "pred" in data.files else None
        except NPZ_ERRORS as exc:
            raise FloydwarpError(f"{path}: not a floydwarp batch result file ({exc})") from exc
        inf = np.inf if np.dtype(meta["dtype"]).kind == "f" else np.dtype(meta["dtype"]).type(meta["inf"])
        return cls(dist, pred, sizes=sizes, negative_cycle=negative, inf=inf, backend=meta.get("backend", ""),
                   timings=meta.get("timings"))
