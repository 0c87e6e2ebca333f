"""Changing one edge of a solved graph: ``Result.update_edge`` and its helpers.

A weight decrease (or a new edge) ``a -> b`` of weight ``w`` can only help paths that
use it once, so every pair is updated in O(n^2) without a re-solve::

    d'[i, j] = min(d[i, j], d[i, a] + w + d[b, j])

and an improved pair's predecessor becomes that of ``b -> j`` (``a`` when ``j == b``).
The arithmetic is exact: integer candidates are formed in int64 (row blocks bound the
memory), a result whose dtype cannot hold a new distance is widened (uint8 hop counts ->
int16 -> int32 -> int64, or float64 for a fractional weight), and a decrease that closes a
negative cycle is found and recorded (``negative_cycles``).

An increase (or a removal) re-solves the graph -- unless no shortest path uses the edge,
which is checked in O(n^2) -- so the result keeps its :class:`~floydwarp.Graph`
(``Result.graph``, kept by :func:`~floydwarp.solve`).  The graph is replaced by an
updated copy (:func:`with_edge`).  Arrays on a GPU are updated there (CuPy).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .arrays import array_module, to_host
from .cycles import NegativeCycles
from .errors import DtypeError, FloydwarpError
from .casts import cast_distances
from .numeric import exact_limit, inf_of

_BLOCK_BYTES = 1 << 25
_WIDER = {"uint8": "int16", "int16": "int32", "int32": "int64"}


# ---------------------------------------------------------------------- graphs
def _check_weight(w):
    """``None`` (remove the edge) or a finite number."""
    if w is None:
        return None
    if isinstance(w, (bool, np.bool_)) or not isinstance(w, (numbers.Real, np.number)):
        raise FloydwarpError(f"edge weight must be a number (or None / inf to remove the edge), got {w!r}")
    w = w.item() if isinstance(w, np.generic) else w
    if isinstance(w, int) and not -2 ** 63 <= w < 2 ** 63:
        w = float(w)                   # no integer dtype of a graph holds it: float64, as the graph's readers do
    if isinstance(w, float):
        if math.isnan(w):
            raise FloydwarpError("edge weight must be a number, got nan")
        if w == math.inf:
            return None
        if w == -math.inf:
            raise FloydwarpError("edge weight -inf is not allowed; weights must be finite")
        if w.is_integer() and abs(w) < 2 ** 53:
            return int(w)
    return w


def edge_weight(graph, a: int, b: int):
    """The weight of edge ``a -> b`` as the graph uses it (None when absent; a
    non-negative self-loop counts as absent: it cannot shorten anything)."""
    if not graph.is_dense:
        src, dst, w = graph.edges()
        hit = np.flatnonzero((src == a) & (dst == b))
        value = w[hit[0]].item() if hit.size else None
    else:
        matrix = graph.dense
        value = None if bool(graph.missing_mask()[a, b]) else matrix[a, b].item()
        if isinstance(value, float) and value == math.inf:
            value = None
    if value is not None and a == b and value >= 0:
        return None
    return value


def with_edge(graph, a: int, b: int, w):
    """A copy of ``graph`` with edge ``a -> b`` set to weight ``w`` (``None``: removed).

    Labels are kept; the original graph is not modified.
    """
    from .graph import Graph

    w = _check_weight(w)
    if not graph.is_dense:
        src, dst, weights = graph.edges()
        keep = ~((src == a) & (dst == b))
        src, dst, weights = src[keep], dst[keep], weights[keep]
        if w is not None and (a != b or w < 0):
            wdtype = np.result_type(weights.dtype, np.float64 if isinstance(w, float) else np.int64)
            src = np.append(src, np.int64(a))
            dst = np.append(dst, np.int64(b))
            weights = np.append(weights.astype(wdtype), wdtype.type(w))
        return Graph(graph.n, edges=(src, dst, weights), labels=graph.labels)
    matrix, missing = graph.dense, graph.missing_mask()
    xp = array_module(matrix)
    if isinstance(w, float) and matrix.dtype.kind != "f":
        matrix = matrix.astype(xp.float64)
    else:
        matrix = matrix.copy()
    if w is None:
        missing[a, b] = True
    else:
        matrix[a, b] = w
        missing[a, b] = False
    return Graph(graph.n, dense=(matrix, missing), labels=graph.labels)


# ---------------------------------------------------------------------- negative cycles
def cycles_from_distances(dist, inf) -> NegativeCycles:
    """The :class:`NegativeCycles` of a distance matrix alone (for results read from files).

    Reachability is ``dist < inf``, so the strongly connected component of a vertex
    ``s`` with a negative diagonal is ``{u : d[s, u] < inf and d[u, s] < inf}`` -- the same
    answer :meth:`NegativeCycles.from_graph` reads off the graph.
    """
    xp = array_module(dist)
    n = dist.shape[0]
    seeds = to_host(xp.flatnonzero(xp.diagonal(dist) < 0)) if n else np.zeros(0, np.int64)
    if seeds.size == 0:
        return NegativeCycles.none(n)
    assigned = np.zeros(n, dtype=bool)
    reach_to, reach_from, members = [], [], []
    for s in seeds.tolist():
        if assigned[s]:
            continue
        fwd = np.asarray(to_host(dist[s, :] < inf))
        back = np.asarray(to_host(dist[:, s] < inf))
        fwd[s] = back[s] = True
        component = fwd & back
        assigned |= component
        members.append(np.flatnonzero(component))
        reach_from.append(fwd)
        reach_to.append(back)
    vertices = np.unique(np.concatenate(members)).astype(np.int64)
    return NegativeCycles(vertices, np.array(reach_to, dtype=bool), np.array(reach_from, dtype=bool))


# ---------------------------------------------------------------------- updates
def update_edge(result, u, v, w):
    """Set the weight of edge ``u -> v`` to ``w`` and update ``result`` in place (see module doc)."""
    graph = result.graph
    if graph is None:
        raise FloydwarpError(
            "this result does not know its graph (it was read from a file or built by hand), so an edge "
            "cannot be changed; solve the graph with floydwarp.solve() and update that result")
    a, b = result.index(u), result.index(v)
    w = _check_weight(w)
    old = edge_weight(graph, a, b)
    new = None if w is None or (a == b and w >= 0) else w
    new_graph = with_edge(graph, a, b, w)
    if new == old:
        result.graph = new_graph
        return result
    if new is not None and (old is None or new < old):
        _decrease(result, a, b, new)
        result.graph = new_graph
    elif _edge_used(result, a, b, old):
        _resolve(result, new_graph)
    else:
        result.graph = new_graph            # no shortest path used the edge: nothing else changes
    result.num_edges = new_graph.num_edges
    result.metadata["edge_updates"] = int(result.metadata.get("edge_updates", 0)) + 1
    return result


def _row_blocks(n, itemsize=8):
    step = max(1, _BLOCK_BYTES // max(1, n * itemsize))
    for lo in range(0, n, step):
        yield lo, min(n, lo + step)


def _decrease(result, a, b, w):
    xp = array_module(result.dist)
    _make_writable(result)
    if result.dtype.kind == "u":
        # hop counts stored unsigned (uint8): a new weight may be any number, so the arithmetic
        # below runs in the smallest signed type that holds them
        _widen(result, np.dtype(_WIDER[result.dtype.name]))
    if isinstance(w, float) and result.dtype.kind == "i":
        _widen(result, np.dtype("float64"))
    while True:
        problem = _fits(result, a, b, w)
        if problem is None:
            break
        wider = _WIDER.get(result.dtype.name) if result.dtype.kind == "i" else "float64"
        if wider is None or wider == result.dtype.name:
            raise DtypeError(f"changing edge {result.label(a)!r} -> {result.label(b)!r} to {w} makes a distance "
                             f"({problem}) that {result.dtype.name} cannot hold")
        _widen(result, np.dtype(wider))
    d, pred, inf = result.dist, result.pred, result.inf
    n = result.n
    col = d[:, a].copy()
    row = d[b, :].copy()
    ok_col, ok_row = col < inf, row < inf
    if not bool(ok_col.any()) or not bool(ok_row.any()):
        return
    integer = result.dtype.kind == "i"
    if integer:
        col_w = col.astype(xp.int64)
        row_w = row.astype(xp.int64) + w
        floor = -int(inf)
    else:
        col_w = col
        row_w = row + result.dtype.type(w)
    new_pred_row = None
    if pred is not None:
        new_pred_row = pred[b, :].copy()
        new_pred_row[b] = a
    for lo, hi in _row_blocks(n):
        cand = col_w[lo:hi, None] + row_w[None, :]
        if integer:
            cand = xp.maximum(cand, floor)
        block = d[lo:hi]
        better = ok_col[lo:hi, None] & ok_row[None, :] & (cand < block)
        if not bool(better.any()):
            continue
        xp.copyto(block, cand.astype(block.dtype), where=better)
        if pred is not None:
            xp.copyto(pred[lo:hi], xp.broadcast_to(new_pred_row[None, :], better.shape), where=better)
    result.negative_cycles = _cycles_after(result)


def _fits(result, a, b, w):
    """None when the updated distances fit the result's dtype, else the offending value."""
    d, inf = result.dist, result.inf
    kind = result.dtype.kind
    if kind == "f" and result.dtype.name == "float64":
        return None
    xp = array_module(d)
    col, row = d[:, a], d[b, :]
    ok_col, ok_row = col < inf, row < inf
    if not bool(ok_col.any()) or not bool(ok_row.any()):
        return None
    if kind == "f":                     # float32: integers stay exact below 2**24
        g = result.graph.weight_stats() if result.graph is not None else None
        if g is None or not g.integral or not float(w).is_integer():
            return None
        limit = exact_limit(result.dtype)
    else:
        limit = int(inf)
    cmax = int(to_host(col[ok_col].max())) if kind == "i" else float(to_host(col[ok_col].max()))
    cmin = int(to_host(col[ok_col].min())) if kind == "i" else float(to_host(col[ok_col].min()))
    rmax = int(to_host(row[ok_row].max())) if kind == "i" else float(to_host(row[ok_row].max()))
    rmin = int(to_host(row[ok_row].min())) if kind == "i" else float(to_host(row[ok_row].min()))
    if abs(w) >= limit:
        return w
    back = to_host(d[b, a])
    closes_cycle = bool(back < inf) and back.item() + w < 0
    cycles = result.has_negative_cycle or closes_cycle
    hi_bound, lo_bound = cmax + w + rmax, cmin + w + rmin
    if hi_bound < limit and (lo_bound > -limit or (cycles and kind == "i")):
        return None
    if result.dtype.name == "int64":
        return hi_bound if hi_bound >= limit else lo_bound
    # exact check, block by block: only pairs the update improves matter
    wide = xp.int64 if kind == "i" else xp.float64
    col64, row64 = col.astype(wide), row.astype(wide) + w
    for lo, hi in _row_blocks(result.n):
        cand = col64[lo:hi, None] + row64[None, :]
        block = d[lo:hi]
        # a pair becomes reachable (block == INF) whatever its candidate, so check those too
        better = ok_col[lo:hi, None] & ok_row[None, :] & ((cand < block) | (block >= inf))
        if not bool(better.any()):
            continue
        vals = cand[better]
        top = vals.max()
        if top >= limit:
            return to_host(top).item()
        bottom = vals.min()
        if bottom <= -limit and not (cycles and kind == "i"):
            return to_host(bottom).item()
    return None


def _widen(result, dtype):
    """Convert the distances to a wider dtype (unreachable stays unreachable)."""
    result.dist, result.inf = cast_distances(result.dist, result.inf, dtype), inf_of(dtype)
    result.metadata["widened_to"] = dtype.name


def _make_writable(result):
    for name in ("dist", "pred"):
        arr = getattr(result, name)
        if isinstance(arr, np.ndarray) and (not arr.flags.writeable or isinstance(arr, np.memmap)):
            setattr(result, name, np.array(arr))


def _cycles_after(result) -> NegativeCycles:
    d = result.dist
    xp = array_module(d)
    if not bool((xp.diagonal(d) < 0).any()):
        return NegativeCycles.none(result.n)
    return cycles_from_distances(d, result.inf)


def _edge_used(result, a, b, old) -> bool:
    """True when some shortest path (or a predecessor) may use edge a -> b of weight ``old``."""
    if old is None:
        return False
    if result.has_negative_cycle:
        return True
    d, inf, pred = result.dist, result.inf, result.pred
    xp = array_module(d)
    if pred is not None and bool((pred[:, b] == a).any()):
        return True
    col, row = d[:, a], d[b, :]
    ok_col, ok_row = col < inf, row < inf
    if not bool(ok_col.any()) or not bool(ok_row.any()):
        return False
    integer = result.dtype.kind in "iu" and float(old).is_integer()
    wide = xp.int64 if integer else xp.float64
    col_w = col.astype(wide)
    row_w = row.astype(wide) + (int(old) if integer else float(old))
    tol = 0.0 if integer else (1e-9 if result.dtype.name == "float64" else 1e-5)
    for lo, hi in _row_blocks(result.n):
        cand = col_w[lo:hi, None] + row_w[None, :]
        block = d[lo:hi].astype(wide)
        slack = tol * xp.maximum(xp.abs(block), 1) if tol else 0
        tight = ok_col[lo:hi, None] & ok_row[None, :] & (cand <= block + slack)
        if bool(tight.any()):
            return True
    return False


def _resolve(result, graph):
    """Solve ``graph`` again (same backend, algorithm and dtype where possible) into ``result``."""
    from .errors import BackendUnavailableError

    solve = result.solver
    if solve is None:
        raise FloydwarpError("this change needs the graph solved again; only a result of floydwarp.solve can be")
    want_pred = result.pred is not None
    attempts = [(result.backend or "auto", result.algorithm or "auto", result.dtype.name),
                (result.backend or "auto", result.algorithm or "auto", "auto"), ("auto", "auto", "auto")]
    last = None
    for backend, algorithm, dtype in attempts:
        try:
            fresh = solve(graph, dtype=dtype, backend=backend, algorithm=algorithm, predecessors=want_pred)
            break
        except (DtypeError, BackendUnavailableError) as exc:
            last = exc
        except FloydwarpError as exc:         # e.g. an algorithm that cannot take this dtype
            last = exc
    else:
        raise last
    result.dist, result.pred, result.inf = fresh.dist, fresh.pred, fresh.inf
    result.negative_cycles = fresh.negative_cycles
    result.graph = graph
    result.timings = dict(fresh.timings)
    result.backend, result.algorithm = fresh.backend, fresh.algorithm
