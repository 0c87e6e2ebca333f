"""A list of graphs or a padded host array as a batch (GraphBatch's constructors).

Three ways in, the first that applies:

* every member a plain C-ordered NumPy matrix of one dtype (and a padded (B, N, N) host
  array): a :class:`~floydwarp.batch.dense.DenseSource`, the matrices read in place
  (batch/dense.py);
* every member a SciPy CSR or CSC matrix: their ``indptr``, ``indices`` and ``data``
  concatenated (``READ_CHUNK`` members at a time) and turned into edges by one parallel
  pass;
* anything else :func:`floydwarp.solve` accepts: a :class:`floydwarp.Graph` each, and
  their edges concatenated.

The last two return ``(sizes, eptr, src, dst, weight, labels)``, ``weight`` None where the
caller asked for none (hop counts: nothing to join or check).  The per-graph cost left in
Python is a few attribute reads (0.1-1.5 us a graph); these forms cost 20-30x that before, a
Graph and a Numba call a graph.  Errors name the graph.
"""
from __future__ import annotations

import itertools
import operator
import sys

import numpy as np

from ..errors import FloydwarpError
from ..graph.edge_arrays import weight_input
from .dense import DenseSource


def from_list(graphs, missing=np.inf, weighted=True):
    """A :class:`DenseSource` of a list of NumPy matrices, else ``(sizes, eptr, src, dst,
    weight, labels)`` (``weight`` None unless ``weighted``); entries of dense matrices equal
    to ``missing`` (and ``+inf``) are no edge."""
    kinds = set(map(type, graphs))             # one C pass: each member's type
    if kinds == {np.ndarray}:
        found = _dense_list(graphs, missing)
        if found is not None:
            return found
    compressed = _compressed_types()
    if kinds and kinds <= compressed.keys():
        return (*_compressed_list(graphs, compressed, weighted), None)
    return _general_list(graphs, missing, kinds, weighted)


def from_padded_host(a, sizes, missing) -> DenseSource:
    """The matrices of a host (B, N, N) array and its checked sizes, read in place."""
    a = _readable(np.ascontiguousarray(a))
    count, size = a.shape[0], a.shape[1]
    block = size * size * a.itemsize
    addresses = a.ctypes.data + block * np.arange(count, dtype=np.int64)
    return DenseSource(a.reshape(-1)[:0], addresses, np.full(count, size, np.int64), sizes, missing, "entry", a)


# ---------------------------------------------------------------------- dense
def _readable(a):
    """``a`` in a dtype the passes read: booleans as bytes, float16 and other byte orders widened."""
    if a.dtype.kind == "b":
        return a.view(np.uint8)
    if not a.dtype.isnative or a.dtype.char == "e":
        return a.astype(np.float64 if a.dtype.kind == "f" else np.int64)
    return a


def _dense_list(mats, missing):
    """The fast path of a list of NumPy matrices, or None when they differ in dtype or one is
    not C-ordered (the general path takes those)."""
    dtype = mats[0].dtype
    addresses, sizes = [], []
    for g, m in enumerate(mats):
        if m.ndim != 2 or m.shape[0] != m.shape[1]:
            raise FloydwarpError(f"graph {g}: a weight matrix must be square (n x n); got shape {m.shape}")
        if (m.dtype is not dtype and m.dtype != dtype) or not m.flags.c_contiguous:
            return None
        sizes.append(m.shape[0])
        addresses.append(m.ctypes.data)
    if dtype.kind not in "biuf":
        raise FloydwarpError(f"graph 0: weight matrix has non-numeric dtype {dtype}")
    readable = _readable(mats[0])
    if readable.dtype != dtype and dtype.kind != "b":
        return None                             # converted one by one on the general path
    sizes = np.array(sizes, dtype=np.int64)
    return DenseSource(readable.reshape(-1)[:0], np.array(addresses, dtype=np.int64), sizes, sizes, missing,
                       "matrix entry", tuple(mats))


# ---------------------------------------------------------------------- SciPy CSR / CSC
def _compressed_types() -> dict:
    """SciPy's CSR and CSC classes (matrices and arrays), if SciPy is imported, each with
    whether it stores rows (CSR): a table a type is looked up in (0.05 us a member, where
    ``issparse`` and ``format`` took 1)."""
    sparse = sys.modules.get("scipy.sparse")
    if sparse is None:
        return {}
    names = {"csr_matrix": True, "csc_matrix": False, "csr_array": True, "csc_array": False}
    return {getattr(sparse, name): rows for name, rows in names.items() if hasattr(sparse, name)}


#: what is read of every member of a list (the per-member work is C's: map, zip, fromiter,
#: concatenate; a Python loop over the members cost 1-2 us of the 4-10 a graph took)
_COMPRESSED_PARTS = operator.attrgetter("shape", "indptr", "indices")
_COMPRESSED_VALUES = operator.attrgetter("shape", "indptr", "indices", "data")
_GRAPH_SIZE = operator.attrgetter("n")
_GRAPH_EDGES = operator.methodcaller("edges")
_GRAPH_LABELS = operator.attrgetter("labels")
_DTYPE = operator.attrgetter("dtype")


#: members read at a time.  Every member costs several passes (attributes, lengths, dtypes, bytes),
#: each touching the member's objects and arrays: over the whole list, each pass fetched them from
#: memory again; over a chunk, the passes after the first find them in the core's cache.  3,000
#: molecule-sized graphs, hop counts, the 2-core box: 2.4-2.9 -> 2.1-2.4 us a CSR matrix read,
#: 1.5-1.7 -> 1.3 us a Graph (64 members a chunk did as well; the chunks' own calls are ~20 us)
READ_CHUNK = 256


def _by_chunks(read, members, *args):
    """``read(chunk, *args)`` of the members ``READ_CHUNK`` at a time, a tuple of arrays (or lists,
    or None) each; every field's chunks joined."""
    chunks = [read(members[lo:lo + READ_CHUNK], *args) for lo in range(0, len(members), READ_CHUNK)]
    return [field[0] if len(field) == 1 or field[0] is None
            else list(itertools.chain.from_iterable(field)) if isinstance(field[0], list)
            else np.concatenate(field) for field in zip(*chunks)]


def _lengths(arrays, count):
    return np.fromiter(map(len, arrays), np.int64, count)


def _joined(arrays, dtype=None):
    """The 1-D arrays one after another in one new array of ``dtype`` (default: their common
    one).  Where they all have one native dtype of numbers, their bytes are joined by
    ``bytearray.join``, one C loop (0.1-0.3 us an array of 3,000; np.concatenate, which sets up
    an assignment per array, took 0.3-0.9), and cast to ``dtype`` afterwards in one pass where
    it differs (a Graph's int64 ids to int32: 0.13 us an array, against 0.55-0.7 for
    np.concatenate casting each); else (another byte order, whose bytes would be read as this
    machine's, objects, mixed dtypes), or when one is not contiguous, np.concatenate."""
    dtypes = set(map(_DTYPE, arrays))
    try:
        common = np.result_type(*dtypes)
    except TypeError:                   # no common type (text and numbers): objects, which the caller refuses
        common = np.dtype(object)
    dtype = common if dtype is None else np.dtype(dtype)
    if dtypes == {common} and not common.hasobject:     # result_type is native: {">f8"} is not {"<f8"}
        try:
            joined = np.frombuffer(bytearray().join(arrays), common)
        except TypeError:               # a member without a contiguous buffer
            pass
        else:
            return joined if dtype == common else joined.astype(dtype, casting="same_kind")
    return np.concatenate(arrays, dtype=dtype, casting="same_kind")


def _compressed_parts(mats, kinds, weighted):
    """Of a chunk of CSR/CSC matrices: shapes (c, 2), whether each stores rows, the offsets joined
    and their lengths, the indices joined and their lengths, the values joined and their lengths
    (None unless ``weighted``)."""
    count = len(mats)
    # hop counts leave ``data`` untouched (its array is one more object a member to fetch)
    shapes, indptrs, indices, *data = zip(*map(_COMPRESSED_VALUES if weighted else _COMPRESSED_PARTS, mats))
    shape = np.fromiter(itertools.chain.from_iterable(shapes), np.int64, 2 * count).reshape(count, 2)
    by_row = np.fromiter(map(kinds.__getitem__, map(type, mats)), bool, count)
    return (shape, by_row, _joined(indptrs), _lengths(indptrs, count), _joined(indices), _lengths(indices, count),
            *((_joined(data[0]), _lengths(data[0], count)) if weighted else (None, None)))


def _compressed_list(mats, kinds, weighted):
    """The fast path of a list of SciPy CSR and CSC matrices (``kinds``: _compressed_types());
    their stored entries are the edges, explicit zeros included, as
    :meth:`floydwarp.Graph.from_scipy` reads them."""
    from .convert import compressed_edges

    count = len(mats)
    shape, by_row, ip, ip_lengths, ind, stored, data, values = _by_chunks(_compressed_parts, mats, kinds, weighted)
    bad = np.flatnonzero(shape[:, 0] != shape[:, 1])
    if bad.size:
        g = int(bad[0])
        raise FloydwarpError(f"graph {g}: a sparse graph must be square (n x n); got shape {tuple(shape[g].tolist())}")
    for part, joined, allowed, rule in (("indptr", ip, "iu", "integers"), ("indices", ind, "iu", "integers"),
                                        ("data", data, "biuf", "real numbers")):
        if joined is not None and joined.dtype.kind not in allowed:
            dtypes = [getattr(m, part).dtype for m in mats]
            g = next((g for g, dt in enumerate(dtypes) if dt.kind not in allowed), None)
            if g is None:       # integers with no integer type in common (uint64 beside int64): NumPy's float64
                g = next(g for g, dt in enumerate(dtypes) if dt != dtypes[0])
                raise FloydwarpError(f"graph {g}: its {mats[g].format} matrix's {part} has dtype {dtypes[g]}, "
                                     f"which has no integer type in common with graph 0's {dtypes[0]}")
            raise FloydwarpError(f"graph {g}: its {mats[g].format} matrix's {part} has dtype {dtypes[g]}; "
                                 f"it must hold {rule}")
    if weighted and not np.array_equal(values, stored):
        g = int(np.flatnonzero(values != stored)[0])
        raise FloydwarpError(f"graph {g}: malformed {mats[g].format} matrix: {int(values[g])} values for its "
                             f"{int(stored[g])} stored indices")
    sizes = np.ascontiguousarray(shape[:, 0])
    at = np.zeros(count + 1, np.int64)
    np.cumsum(stored, out=at[1:])
    ip_at = np.zeros(count, np.int64)
    np.cumsum(sizes[:-1] + 1, out=ip_at[1:])
    bad = np.flatnonzero(ip_lengths != sizes + 1)
    counts = np.zeros(count, np.int64)
    if not bad.size:
        counts = ip[ip_at + sizes]
        bad = np.flatnonzero((counts < 0) | (counts > stored))
    if bad.size:
        g = int(bad[0])
        raise FloydwarpError(f"graph {g}: malformed {mats[g].format} matrix: its offsets do not rise from 0 to at "
                             f"most its {int(stored[g])} stored entries")
    eptr = np.zeros(count + 1, np.int64)
    np.cumsum(counts, out=eptr[1:])
    src, dst = np.empty(int(eptr[-1]), np.int32), np.empty(int(eptr[-1]), np.int32)
    codes, where = np.zeros(count, np.int64), np.zeros(count, np.int64)
    compressed_edges(ip, ip_at, ind, at, sizes, by_row, eptr, src, dst, codes, where)
    flagged = np.flatnonzero(codes)
    if flagged.size:
        g = int(flagged[0])
        if codes[g] == 1:
            raise FloydwarpError(f"graph {g}: malformed {mats[g].format} matrix: its offsets do not rise from 0 "
                                 f"to at most its {int(stored[g])} stored entries")
        raise FloydwarpError(f"graph {g}: stored entry {int(where[g])} has index {int(ind[at[g] + where[g]])}, out "
                             f"of range 0..{int(sizes[g]) - 1}")
    if not weighted:
        return sizes, eptr, src, dst, None
    weight = weight_input(data)
    if not np.array_equal(counts, stored):          # some matrix keeps spare room after its entries
        weight = weight[np.concatenate([np.arange(a, a + c) for a, c in zip(at[:-1], counts)])]
    _refuse_nonfinite(weight, eptr, src, dst)
    return sizes, eptr, src, dst, weight


def _refuse_nonfinite(weight, eptr, src, dst):
    """Refuse NaN and infinite weights, naming the graph and the edge."""
    if weight.dtype.kind != "f" or np.isfinite(weight).all():
        return
    e = int(np.flatnonzero(~np.isfinite(weight))[0])
    g = int(np.searchsorted(eptr, e, side="right")) - 1
    raise FloydwarpError(f"graph {g}: edge {int(src[e])} -> {int(dst[e])} has weight {float(weight[e])}: "
                         "weights must be finite numbers")


# ---------------------------------------------------------------------- anything else
def _general_list(graphs, missing, kinds, weighted):
    """A :class:`floydwarp.Graph` of each member (the members themselves where all are
    Graphs: ``kinds``, the members' types, says), their edges concatenated."""
    from ..graph import Graph
    from ..inputs import as_graph

    parts = graphs
    if not all(issubclass(kind, Graph) for kind in kinds):
        parts = []
        for g, graph in enumerate(graphs):
            try:
                parts.append(as_graph(graph, missing=missing))
            except FloydwarpError as exc:
                raise type(exc)(f"graph {g}: {exc}") from None
    if not parts:
        return np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32), \
            np.zeros(0, np.int64) if weighted else None, None
    sizes, edges, src, dst, weight, labels = _by_chunks(_graph_parts, parts, weighted)
    eptr = np.zeros(len(parts) + 1, np.int64)
    np.cumsum(edges, out=eptr[1:])
    return sizes, eptr, src, dst, None if weight is None else weight_input(weight), \
        labels if labels.count(None) < len(parts) else None


def _graph_parts(graphs, weighted):
    """Of a chunk of Graphs: sizes, edge counts, int32 sources and targets joined, weights joined
    (None unless ``weighted``), labels."""
    count = len(graphs)
    srcs, dsts, weights = zip(*map(_GRAPH_EDGES, graphs))
    return (np.fromiter(map(_GRAPH_SIZE, graphs), np.int64, count), _lengths(srcs, count), _joined(srcs, np.int32),
            _joined(dsts, np.int32), _joined(weights) if weighted else None, list(map(_GRAPH_LABELS, graphs)))
