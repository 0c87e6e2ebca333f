"""The one place that knows distance dtypes, their INF sentinels and their bounds.

Integer dtypes reserve ``INF = max // 2``: two INFs add without overflow, so a
kernel may add any two entries of the matrix without a branch.  Entries never
grow above INF (a relaxation only lowers them) and, when the graph has negative
weights, kernels clamp every entry at ``-INF``, so sums stay in ``[-2 INF, 2 INF]``
even on graphs with negative cycles, whose distances otherwise grow
exponentially.

A shortest path has at most ``n - 1`` edges, so reachable distances lie in
``[-neg_bound, pos_bound]`` with ``pos_bound = (n-1) * max(w, 0)`` and
``neg_bound = (n-1) * max(-w, 0)``.  An unreachable pair ends at a value of at
least ``INF - neg_bound`` (a sum through at least one INF entry).  The dtype
therefore holds the answer exactly when ``pos_bound + neg_bound < INF``; the
unreachable threshold is then ``INF - neg_bound``.

Every kernel also adds an edge weight to an INF entry, so every ``|weight|`` must
lie strictly below INF whatever else holds: the check after the run (below)
assumes it, and a lone negative self-loop has a span of 0.  A weight at or above
INF would overflow that sum, or read as "unreachable".

With no negative weights there is also an exact check after the run: capped
arithmetic computes ``min(true distance, INF)``, and a reachable pair can only
have been capped if some finite distance plus an edge weight reaches INF.  So
``max finite + max weight < INF`` proves the result right, and lets an explicit
narrow dtype (int16 for large sparse-diameter graphs) run where the a-priori
bound is too pessimistic.

Integer weights that no integer dtype holds leave ``dtype="auto"`` with float64,
whose sums round above 2**53: it solves them with an :class:`InexactWarning`
(the CLI prints it as one ``warning:`` line), and an explicit ``dtype="float64"``
accepts the rounding silently.  A warning, not a refusal, because the answer is
still float64's (what SciPy and NetworkX compute for these weights) and float
inputs with integral values above 2**52 would otherwise need the flag for no gain.
"""
from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from .arrays import array_module, device_helper
from .errors import DtypeError, InexactWarning

DTYPES = ("int16", "int32", "int64", "float32", "float64")
INTEGER_DTYPES = ("int16", "int32", "int64")
#: The order in which ``dtype="auto"`` tries integer types.
_AUTO_INTEGER_ORDER = ("int16", "int32", "int64")
#: float32 adds integers exactly up to 2**24.
_FLOAT32_EXACT = 2 ** 24
_FLOAT64_EXACT = 2 ** 53
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def canonical_dtype(dtype) -> np.dtype:
    """Return the NumPy dtype for a name or dtype, refusing unsupported ones."""
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise DtypeError(f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)} or 'auto'") from exc
    if dt.name not in DTYPES:
        raise DtypeError(f"dtype {dt.name} is not supported; choose one of {', '.join(DTYPES)} or 'auto'")
    return dt


def is_integer(dtype) -> bool:
    return np.dtype(dtype).kind == "i"


@functools.lru_cache(maxsize=64)
def inf_of(dtype):
    """The value that means "unreachable" in a distance matrix of this dtype."""
    dt = np.dtype(dtype)
    if dt.kind == "u":                     # storage, or saturating sums (saturating_fits)
        return dt.type(np.iinfo(dt).max)
    if dt.kind == "i":
        return dt.type(np.iinfo(dt).max // 2)
    return dt.type(np.inf)


@dataclass(frozen=True)
class WeightStats:
    """What the dtype choice needs to know about a graph's edge weights."""

    n: int
    min_weight: float
    max_weight: float
    integral: bool

    def __init__(self, n, min_weight, max_weight, integral):
        # a frozen dataclass sets its fields through object.__setattr__: twice the time, and
        # every graph makes one
        self.__dict__.update(n=n, min_weight=min_weight, max_weight=max_weight, integral=integral)

    @property
    def has_negative(self) -> bool:
        return self.min_weight < 0

    @property
    def pos_bound(self) -> int | float:
        return max(self.n - 1, 0) * max(self.max_weight, 0)

    @property
    def neg_bound(self) -> int | float:
        return max(self.n - 1, 0) * max(-self.min_weight, 0)

    @property
    def span(self) -> int | float:
        """Width of the interval every reachable distance lies in."""
        return self.pos_bound + self.neg_bound


def fits(dtype, stats: WeightStats) -> bool:
    """True when the dtype provably holds every shortest path (a-priori bound)."""
    dt = np.dtype(dtype)
    if dt.kind == "i":
        return holds(stats, int(inf_of(dt)))
    if dt.name == "float32":
        # real weights: every sum must stay finite (1e39 cast to float32 is inf: an edge lost)
        return _int_span(stats) <= _FLOAT32_EXACT if stats.integral else stats.span <= _FLOAT32_MAX
    return True


def holds(stats: WeightStats, inf: int) -> bool:
    """True when integer arithmetic with the sentinel ``inf`` provably holds every shortest
    path (integral weights, every weight and the span below ``inf``; also for the narrower
    keys of gpu/keyed.py)."""
    return stats.integral and weights_below(stats, inf) and _int_span(stats) < inf


def weights_below(stats: WeightStats, inf: int) -> bool:
    """True when every ``|weight|`` is strictly below ``inf``: INF + weight cannot overflow."""
    return max(int(stats.max_weight), -int(stats.min_weight)) < int(inf)


def exact_limit(dtype) -> int:
    """Integers below this are exact in the dtype, and a float sum at or above it cannot
    round below it: the INF of an integer dtype, 2**24 for float32, 2**53 for float64."""
    dt = np.dtype(dtype)
    if dt.kind == "i":
        return int(inf_of(dt))
    return _FLOAT32_EXACT if dt.name == "float32" else _FLOAT64_EXACT


def exact(dtype, stats: WeightStats) -> bool:
    """True when a run in this dtype is integer arithmetic: integer dtypes (whatever they
    cannot hold is refused, widened or rerun in float64), and floats whose integral weights
    provably keep every path below ``exact_limit``."""
    return is_integer(dtype) or holds(stats, exact_limit(dtype))


def _int_span(stats: WeightStats) -> int:
    # Python integers: the bound itself must not overflow.
    return int(max(stats.n - 1, 0)) * (int(max(stats.max_weight, 0)) + int(max(-stats.min_weight, 0)))


def checkable_after_run(dtype, stats: WeightStats) -> bool:
    """True when a result in this dtype can be proven exact after the run."""
    dt = np.dtype(dtype)
    return dt.kind == "i" and stats.integral and not stats.has_negative and weights_below(stats, inf_of(dt))


@functools.lru_cache(maxsize=256)
def smallest_fitting(stats: WeightStats) -> np.dtype:
    """The dtype ``dtype="auto"`` picks: the narrowest that provably holds the answer."""
    if stats.integral:
        for name in _AUTO_INTEGER_ORDER:
            if fits(name, stats):
                return np.dtype(name)
    return np.dtype("float64")


@dataclass(frozen=True)
class DtypeChoice:
    dtype: np.dtype
    #: the result must pass :func:`verify_uncapped` before it is returned
    verify_after: bool


def is_auto(requested) -> bool:
    """True for ``dtype="auto"`` (or None): the narrowest type that holds the answer."""
    return requested is None or (isinstance(requested, str) and requested == "auto")


def choose_dtype(requested, stats: WeightStats) -> DtypeChoice:
    """Pick the distance dtype, or refuse a requested one that cannot hold the answer."""
    if is_auto(requested):
        choice, inexact = _auto_choice(stats)
        if inexact:
            warnings.warn(_inexact_message(stats), InexactWarning, stacklevel=3)
        return choice
    dt = canonical_dtype(requested)
    if dt.kind == "i" and not stats.integral:
        raise DtypeError(
            f"dtype {dt.name} cannot hold non-integer edge weights; use float32 or float64")
    if dt.kind == "i" and not weights_below(stats, inf_of(dt)):
        weight = stats.max_weight if stats.max_weight >= -stats.min_weight else stats.min_weight
        raise DtypeError(
            f"dtype {dt.name} cannot hold edge weight {_shown(weight)}: every |weight| must be below "
            f"{int(inf_of(dt))}, its value for unreachable; use {smallest_fitting(stats).name}")
    if fits(dt, stats):
        return DtypeChoice(dt, False)
    if checkable_after_run(dt, stats):
        return DtypeChoice(dt, True)
    held = f"|d| < {exact_limit(dt)}" if stats.integral else f"|d| <= {np.finfo(dt).max:.6g}"
    raise DtypeError(
        f"dtype {dt.name} cannot provably hold every shortest path of this graph "
        f"(paths can reach {_shown(stats.pos_bound)} and {_shown(-stats.neg_bound)}, "
        f"{dt.name} holds {held}); use {smallest_fitting(stats).name}")


@functools.lru_cache(maxsize=256)
def _auto_choice(stats: WeightStats) -> tuple[DtypeChoice, bool]:
    """``dtype="auto"``'s choice, and whether its sums may round (integer weights no integer
    dtype holds)."""
    dt = smallest_fitting(stats)
    return DtypeChoice(dt, False), bool(stats.integral and not exact(dt, stats))


def _shown(x, exact_below=10 ** 20) -> str:
    """A weight or a bound as text: an integer of ``exact_below`` or more in 6 significant digits
    (Decimal, not float: integral weights of 1e308 span paths beyond float64's range)."""
    return f"{Decimal(x):.6g}" if isinstance(x, int) and abs(x) >= exact_below else str(x)


def _inexact_message(stats: WeightStats) -> str:
    def show(x):
        return _shown(int(x), _FLOAT64_EXACT)
    return (f"integer edge weights from {show(stats.min_weight)} to {show(stats.max_weight)} on {stats.n} vertices: "
            f"shortest paths can reach {show(_int_span(stats))}, more than any integer dtype holds and more than "
            f"float64 adds exactly (2**53); solving in float64, whose sums may round "
            f"(dtype='float64' / --dtype float64 accepts this without the warning)")


#: Batches (floydwarp.batch) may also store non-negative distances (hop counts) in these:
#: kernels compute in a dtype of DTYPES and store into them, INF = the type's max.
STORAGE_DTYPES = ("uint8",)


def choose_storage(requested, stats: WeightStats, *, hops: bool, cap=None) -> tuple[DtypeChoice, np.dtype]:
    """``(arithmetic dtype, stored dtype)`` of a batch: ``dtype="auto"`` stores hop counts in
    uint8 when every reachable value (at most ``cap`` when distances are clipped) is
    non-negative and below 255; an explicit uint8 must hold them likewise."""
    bound = stats.pos_bound if cap is None else min(stats.pos_bound, cap)
    small = stats.integral and not stats.has_negative and bound < int(inf_of(STORAGE_DTYPES[0]))
    named = not is_auto(requested)
    if named and _name_of(requested) in STORAGE_DTYPES:
        if not small:
            raise DtypeError(f"dtype {np.dtype(requested).name} holds non-negative integer distances below "
                             f"{int(inf_of(requested))}; this batch's reach {-stats.neg_bound}..{bound} "
                             "(use int16, or max_distance below 255)")
        return DtypeChoice(smallest_fitting(stats), False), np.dtype(requested)
    choice = choose_dtype(requested, stats)
    stored = np.dtype(STORAGE_DTYPES[0]) if (hops and not named and small) else choice.dtype
    return choice, stored


@functools.lru_cache(maxsize=64)
def hop_storage(dtype, narrow: bool) -> tuple:
    """The dtypes an engine whose distances are hop counts (non-negative integers it finds
    level by level: all-pairs breadth-first search) stores them in, narrowest first.

    ``narrow`` (``dtype="auto"``): uint8 first (INF 255; STORAGE_DTYPES), then every integer
    dtype up to ``dtype`` (the a-priori choice, which holds every path): the engine moves to
    the next one when a distance reaches the current one's INF, so a result is as narrow as
    its largest distance allows.  An explicit ``dtype`` is used alone; a distance reaching its
    INF is the engine's :func:`too_narrow` error (it can only be asked for where
    :func:`checkable_after_run` holds)."""
    dtype = np.dtype(dtype)
    if not narrow:
        return (dtype,)
    wider = _AUTO_INTEGER_ORDER[:_AUTO_INTEGER_ORDER.index(dtype.name) + 1]
    return (np.dtype(STORAGE_DTYPES[0]), *map(np.dtype, wider))


def saturating_fits(dtype, stats: WeightStats) -> bool:
    """True when saturating unsigned arithmetic in ``dtype`` (INF = its maximum, and INF + x
    stays INF: no sum wraps) provably holds every shortest path: integral non-negative
    weights, every weight and ``pos_bound`` below INF.  The batch CPU kernels add hop counts
    this way in uint8 (batch/vectors.py), twice the lanes of int16."""
    return (np.dtype(dtype).kind == "u" and stats.integral and not stats.has_negative
            and weights_below(stats, int(inf_of(dtype))) and stats.pos_bound < int(inf_of(dtype)))


def _name_of(dtype) -> str | None:
    try:
        return np.dtype(dtype).name
    except TypeError:
        return None


#: entries from which :func:`verify_uncapped` checks a host matrix band by band in threads
BAND_CHECK_MIN = 1 << 22


def verify_uncapped(dist, inf, max_weight) -> bool:
    """Exact post-run check for non-negative integer weights (see module docstring): no
    reachable distance lies within ``max_weight`` of INF.  A host matrix is checked in row
    bands on all cores (NumPy releases the GIL): a 2 GB int16 result took 2.7 s in one pass."""
    limit = dist.dtype.type(int(inf) - int(max_weight))     # weights are below INF: in range

    def near_inf(band) -> bool:
        return bool(((band >= limit) & (band < inf)).any())

    if array_module(dist) is not np:
        return not device_helper("any_in_range")(dist, limit, inf)
    if dist.ndim != 2 or dist.size < BAND_CHECK_MIN:
        return not near_inf(dist)
    import os
    from concurrent.futures import ThreadPoolExecutor

    step = -(-dist.shape[0] // (os.cpu_count() or 1))
    with ThreadPoolExecutor() as pool:
        return not any(pool.map(near_inf, (dist[r:r + step] for r in range(0, dist.shape[0], step))))


def too_narrow(dtype, stats: WeightStats) -> DtypeError:
    """The error for a result that failed :func:`verify_uncapped`."""
    return DtypeError(f"dtype {np.dtype(dtype).name} was too narrow for this graph's shortest paths; "
                      f"use {smallest_fitting(stats).name}")


def unreachable_threshold(dtype, stats: WeightStats):
    """Entries at or above this value are unreachable pairs."""
    inf = inf_of(dtype)
    if np.dtype(dtype).kind != "i":
        return inf
    return int(inf) - int(stats.neg_bound) if stats.has_negative else int(inf)


def normalize_unreachable(dist, dtype, stats: WeightStats):
    """Set every unreachable entry to exactly INF (in place) and return the matrix."""
    if np.dtype(dtype).kind == "i" and stats.has_negative:
        # copyto, not a boolean-mask assignment: CuPy masks stop at 2**31 entries
        array_module(dist).copyto(dist, inf_of(dtype), where=dist >= unreachable_threshold(dtype, stats))
    return dist


def from_float64(dist, dtype, inf):
    """float64 distances (a redo of a clamped integer run) cast back to the integer dtype, within +-INF."""
    xp = array_module(dist)
    inf = np.dtype(dtype).type(inf)
    # clip in float, cast, clip again: float64 rounds int64's INF up past it
    return xp.clip(xp.clip(dist, -float(inf), float(inf)).astype(dtype), -inf, inf)
