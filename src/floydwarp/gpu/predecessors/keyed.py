"""``fast`` with predecessors: each predecessor rides in the low bits of its distance.

A *key* is one int32, ``key = d * 2**b + p``: the distance ``d`` above ``b =
n.bit_length()`` bits that hold the predecessor ``p`` (``2**b - 1`` for none).  The
Floyd-Warshall update with predecessors, ``if d[i,k] + d[k,j] < d[i,j]: d[i,j] = ...;
p[i,j] = p[k,j]``, then becomes ONE integer add-min on keys::

    key[i,j] = min(key[i,j], (key[i,k] & -2**b) + key[k,j])

the left operand's predecessor bits cleared, so the sum is ``(d[i,k] + d[k,j]) * 2**b +
p[k,j]``.  The cleared left operands are exactly the words that ``panel.to_words``
writes for the panel products, so the whole run is ``wide.Rounds`` on keys with the
int32 product kernels (VIADDMNMX) -- the rate of int32 ``fast`` without predecessors,
against 2-3 integer instructions per relaxation for a predecessor register beside each
cell (the ``blocked`` kernels).  Pivot blocks close in rounds of 64 whose 64 x 64 tiles
``fw_key_close64`` (kernels/keyed.cu) closes.

Ties go to the smaller predecessor instead of the first one found: still the
second-to-last vertex of a shortest walk, so every predecessor edge is tight.  Around a
zero-weight cycle such choices can form a loop, which ``solve()`` detects (as for the
blocked kernels) and recomputes in k order.

Range: two keys add without overflow when distances stay below ``2**(30 - b)``; the key
INF is the smaller of that and the dtype's INF.  int16 (n < 65536) keeps its own INF, so
the distances are the int16 arithmetic, bit for bit.  int32 keys are exact when the
weights bound every path below the key INF, or, with no negative weights, when the run
proves ``max finite + max weight < INF`` (numeric.py); otherwise the run is refused here
and the blocked kernels take it.

float32 and float64 take keys when every weight is a non-negative integer: their
arithmetic on such weights is integer arithmetic as long as the sums stay exact
(below ``2**24`` for float32), so the key INF is capped there and the same proofs apply;
the distances are the float run's, bit for bit.  Fractional or negative float weights
keep the blocked kernels (a negative cycle clamps keys at -INF, which float runs do not).
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ... import numeric, schedule
from ...arrays import array_module
from ...predecessors import NO_PREDECESSOR
from .. import modules, panel, wide

#: integer distance dtypes whose values and a predecessor fit in one int32
KEY_DTYPES = ("int16", "int32")


@dataclasses.dataclass(frozen=True)
class KeyPlan:
    #: predecessor bits: vertex ids and NONE = 2**bits - 1 (> every id)
    bits: int
    #: the keys' distance INF
    inf: int
    #: distances at or above this are unreachable pairs (INF less the negative bound)
    unreachable: int
    #: the run must prove max finite + max weight < inf before it is used
    verify: bool

    @property
    def none(self) -> int:
        return (1 << self.bits) - 1

    @property
    def keep(self) -> int:
        """The mask that clears a key's predecessor bits."""
        return -(1 << self.bits)

    @property
    def ninf(self) -> np.int32:
        """The key of distance -INF: where clamped runs stop."""
        return np.int32(-self.inf << self.bits)


def plan_keys(plan, n: int) -> KeyPlan | None:
    """How to run ``plan`` on keys, or None where its predecessors do not fit beside the distances."""
    dt = np.dtype(plan.dtype)
    stats = plan.stats
    if stats is None or not _keyable(dt, stats):
        return None
    bits = max(1, int(n).bit_length())
    if bits > 28:
        return None
    limit = numeric.exact_limit(dt)
    kinf = min(limit, (1 << (30 - bits)) - 1)
    own_inf = dt.kind == "i" and kinf == limit
    if own_inf or numeric.holds(stats, kinf):
        verify = False             # the dtype's own arithmetic, or provably in range
    elif stats.integral and not stats.has_negative and stats.max_weight < kinf:
        verify = True
    else:
        return None
    neg = int(stats.neg_bound) if stats.has_negative else 0
    return KeyPlan(bits, kinf, kinf - neg, verify)


def _keyable(dt: np.dtype, stats) -> bool:
    return dt.name in KEY_DTYPES or (dt.kind == "f" and stats.integral and not stats.has_negative)


#: the pack and unpack grids' rows (each block then strides over the matrix), and the
#: band that ``in_range`` reduces at a time
_ROW_STRIDE = 4096


def _elementwise(name, dtype, n, args):
    kern = modules.kernel("keyed.cu", modules.name_expression(name, dtype), _group(dtype))
    kern((-(-n // 256), min(n, _ROW_STRIDE)), (256,), args)


@functools.lru_cache(maxsize=None)
def _group(dtype):
    return tuple(modules.name_expression(k, dtype) for k in ("fw_key_pack", "fw_key_unpack")) + ("fw_key_close64",)


def pack(d, keys, kp: KeyPlan) -> None:
    """``keys`` (N x N int32) from the start matrix ``d`` (N x N, INF for no edge):
    predecessor ``i`` on every edge ``i -> j``, none on the diagonal and for no edge."""
    dt = d.dtype
    n = keys.shape[0]
    if n:
        _elementwise("fw_key_pack", dt, n, (*panel.pitched(d), *panel.pitched(keys), np.int32(n),
                                            np.int32(kp.bits), dt.type(numeric.inf_of(dt)), np.int32(kp.inf)))


def in_range(keys, kp: KeyPlan, max_weight) -> bool:
    """``numeric.verify_uncapped`` on keys: no finite distance may have come within the
    largest weight of the key INF (a walk through it would then have been capped)."""
    xp = array_module(keys)
    finite = np.int32(kp.inf << kp.bits)         # keys below this have finite distances
    largest = int(kp.ninf)
    for lo in range(0, keys.shape[0], _ROW_STRIDE):     # bands: the temporary stays small
        band = keys[lo:lo + _ROW_STRIDE]
        largest = max(largest, int(xp.where(band < finite, band, kp.ninf).max()))
    return (largest >> kp.bits) + int(max_weight) < kp.inf


def unpack(keys, kp: KeyPlan, d, pred) -> None:
    """Distances (INF where unreachable) into ``d``, predecessors into ``pred``: views
    of the shape of ``keys``."""
    dt = d.dtype
    n = keys.shape[0]
    if n:
        _elementwise("fw_key_unpack", dt, n, (*panel.pitched(keys), *panel.pitched(d), *panel.pitched(pred),
                                              np.int32(n), np.int32(kp.bits), np.int32(kp.unreachable),
                                              dt.type(numeric.inf_of(dt)), np.int32(NO_PREDECESSOR)))


def _close64(tile, kp: KeyPlan, clamp: bool):
    kern = modules.kernel("keyed.cu", "fw_key_close64", _group(np.dtype(np.int32)))
    kern((1,), (32, 32), (*panel.pitched(tile), np.int32(kp.keep), kp.ninf, np.int32(clamp)))


def _close(pivot, kp: KeyPlan, arith: panel.Arith):
    """A pivot block of keys closed in rounds of 64 (untimed: inside the outer round's phase 1)."""
    schedule.run(wide.Rounds(pivot, panel.UNIT, functools.partial(_close64, kp=kp, clamp=arith.clamp), arith,
                             keep=kp.keep))


def run(ctx, kp: KeyPlan) -> bool:
    """Distances and predecessors of ``ctx`` (``ctx.d``, ``ctx.pr``) through keys.  False,
    with both untouched, when the keys do not fit in GPU memory or int32 keys turned out
    too narrow (``kp.verify``): the caller then runs the blocked kernels."""
    cp, plan = ctx.cp, ctx.plan
    n_pad = ctx.lay.N
    try:
        keys = cp.empty((n_pad, n_pad), dtype=cp.int32)
    except cp.cuda.memory.OutOfMemoryError:
        return False
    with ctx.phase("keys"):
        pack(ctx.d[:, :n_pad], keys, kp)
    arith = panel.Arith(kp.ninf, ctx.clamp)
    ctx.rounds(wide.Rounds(keys, wide.width(plan), functools.partial(_close, kp=kp, arith=arith), arith, keep=kp.keep))
    with ctx.phase("keys"):
        if kp.verify and not in_range(keys, kp, plan.stats.max_weight):
            return False
        unpack(keys, kp, ctx.d[:, :n_pad], ctx.pr[:, :n_pad])
    return True
