"""The cpu backend's tile kernels on their own, against plain-loop references: the min-plus tile
product for every shape around its 4 x 4 (2 x 4 with predecessors) register blocks, and the
``select_min`` / ``select_max`` intrinsics against Python's ``min`` / ``max``."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

K = pytest.importorskip("floydwarp.cpu.kernels")

SIZES = (0, 1, 2, 3, 4, 5, 7, 8, 9, 13)


def plain_minplus(c, a, b, pc=None, pb=None):
    """``c = min(c, a (x) b)`` in increasing k with a strict ``<`` (the kernels' tie rule)."""
    c, pc = c.copy(), None if pc is None else pc.copy()
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            for k in range(a.shape[1]):
                x = a.dtype.type(a[i, k] + b[k, j])
                if x < c[i, j]:
                    c[i, j] = x
                    if pc is not None:
                        pc[i, j] = pb[k, j]
    return c, pc


def operands(rng, dtype, m, kk, w):
    if np.dtype(dtype).kind == "f":
        draw = lambda shape: rng.choice(np.array([-3.5, -0.0, 0.0, 1.25, 2.0, 7.0, np.inf], dtype), shape)  # noqa: E731
    else:
        draw = lambda shape: rng.integers(-20, 40, shape).astype(dtype)  # noqa: E731
    return draw((m, w)), draw((m, kk)), draw((kk, w))


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
def test_minplus_every_shape_near_the_blocks(dtype):
    rng = np.random.default_rng(5)
    for m, kk, w in itertools.product(SIZES, SIZES, (1, 8, 11)):
        c, a, b = operands(rng, dtype, m, kk, w)
        got = c.copy()
        K.minplus(got, a, b)
        want, _ = plain_minplus(c, a, b)
        assert got.tobytes() == want.tobytes(), (m, kk, w)      # bit-identical, signs of zero too


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_minplus_pred_every_shape_near_the_blocks(dtype):
    rng = np.random.default_rng(6)
    for m, kk, w in itertools.product(SIZES, SIZES, (1, 9)):
        c, a, b = operands(rng, dtype, m, kk, w)
        pc = rng.integers(0, 100, (m, w)).astype(np.int32)
        pb = rng.integers(100, 200, (kk, w)).astype(np.int32)
        got, got_p = c.copy(), pc.copy()
        K.minplus_pred(got, got_p, a, b, pb)
        want, want_p = plain_minplus(c, a, b, pc, pb)
        assert got.tobytes() == want.tobytes() and np.array_equal(got_p, want_p), (m, kk, w)


@pytest.fixture(scope="module")
def selects():
    from numba import njit

    from floydwarp.jit import select_max, select_min

    @njit
    def both(a, b):
        return select_min(a, b), select_max(a, b)

    return both


VALUES = (-2.5, -0.0, 0.0, 1.0, math.inf, -math.inf, math.nan)


def test_select_min_max_are_pythons_min_max_for_floats(selects):
    for a, b in itertools.product(VALUES, VALUES):
        got = selects(a, b)
        for g, want in zip(got, (min(a, b), max(a, b))):
            assert (math.isnan(g) and math.isnan(want)) or (g == want and math.copysign(1, g) == math.copysign(1, want))


def test_select_min_max_integers_and_mixed_types(selects):
    for a, b in itertools.product((-7, 0, 3, 2**40), repeat=2):
        assert selects(a, b) == (min(a, b), max(a, b))
    from numba import types

    assert selects(np.int16(-3), np.int32(5)) == (-3, 5)
    sig = (types.int16, types.int32)
    assert selects.overloads[sig].signature.return_type == types.UniTuple(types.int32, 2)   # the common type
