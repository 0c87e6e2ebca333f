import numpy as np
import pytest

from floydwarp import casts, numeric
from floydwarp.errors import DtypeError
from floydwarp.numeric import WeightStats


def test_inf_values_add_without_overflow():
    assert numeric.inf_of("int16") == 16383
    assert numeric.inf_of("int32") == 1073741823
    for name in numeric.INTEGER_DTYPES:
        inf = numeric.inf_of(name)
        assert int(inf) * 2 <= np.iinfo(name).max
        assert int(-inf) * 2 >= np.iinfo(name).min
    assert numeric.inf_of("float32") == np.inf


@pytest.mark.parametrize("stats, expected", [
    (WeightStats(100, 1, 16, True), "int16"),        # 99 * 16 = 1584
    (WeightStats(1025, 1, 16, True), "int32"),       # 1024 * 16 = 16384 > 16383
    (WeightStats(1000, -3, 5, True), "int16"),       # span 999 * 8
    (WeightStats(10, 0.5, 2, False), "float64"),
    (WeightStats(2, 0, 2**40, True), "int64"),
    (WeightStats(3, 0, 2**62, True), "float64"),     # nothing integer holds it
    (WeightStats(0, 0, 0, True), "int16"),
])
def test_auto_picks_smallest_fitting(stats, expected):
    if stats.integral and expected == "float64":     # integers float64 may round: said aloud
        with pytest.warns(numeric.InexactWarning):
            assert numeric.choose_dtype("auto", stats).dtype.name == expected
    else:
        assert numeric.choose_dtype("auto", stats).dtype.name == expected


@pytest.mark.parametrize("name", numeric.INTEGER_DTYPES)
def test_every_weight_strictly_below_inf(name):
    """Issue 25: a weight at INF passes the span bound on 1 vertex and verify_after on 2."""
    inf = int(numeric.inf_of(name))
    for n in (1, 2):
        assert numeric.fits(name, WeightStats(n, 0, inf - 1, True))
        assert numeric.fits(name, WeightStats(n, -(inf - 1), 0, True))
        for stats in (WeightStats(n, 0, inf, True), WeightStats(n, -inf, 0, True)):
            assert not numeric.fits(name, stats) and not numeric.checkable_after_run(name, stats)
            with pytest.raises(DtypeError, match=f"cannot hold edge weight {stats.min_weight or stats.max_weight}"):
                numeric.choose_dtype(name, stats)
    # beyond the a-priori bound, verification after the run still needs every weight below INF
    assert numeric.checkable_after_run(name, WeightStats(5000, 1, inf - 1, True))
    assert not numeric.checkable_after_run(name, WeightStats(5000, 1, inf, True))


def test_explicit_dtype_refused_with_suggestion():
    stats = WeightStats(5000, -1, 16, True)
    with pytest.raises(DtypeError, match="use int32"):
        numeric.choose_dtype("int16", stats)


def test_explicit_narrow_dtype_verified_after_run_for_nonnegative_weights():
    choice = numeric.choose_dtype("int16", WeightStats(5000, 1, 16, True))
    assert choice.dtype.name == "int16" and choice.verify_after


def test_integer_dtype_refuses_fractional_weights():
    with pytest.raises(DtypeError, match="non-integer"):
        numeric.choose_dtype("int32", WeightStats(4, 0.5, 1.5, False))


def test_unknown_dtype():
    with pytest.raises(DtypeError, match="int8"):
        numeric.choose_dtype("int8", WeightStats(4, 1, 1, True))
    with pytest.raises(DtypeError, match="unknown"):
        numeric.choose_dtype("banana", WeightStats(4, 1, 1, True))


def test_float32_exact_only_below_2_24():
    assert numeric.fits("float32", WeightStats(100, 1, 1000, True))
    assert not numeric.fits("float32", WeightStats(100_000, 1, 1000, True))


def test_exact_arithmetic():
    assert numeric.exact_limit("int16") == 16383 and numeric.exact_limit("float32") == 2 ** 24
    assert numeric.exact_limit("float64") == 2 ** 53
    assert numeric.exact("int32", WeightStats(10, 0.5, 1, False))        # refused or exact, never rounded
    assert numeric.exact("float32", WeightStats(100, 1, 1000, True))
    assert not numeric.exact("float32", WeightStats(100_000, 1, 1000, True))
    assert numeric.exact("float64", WeightStats(100_000, 1, 1000, True))
    assert not numeric.exact("float64", WeightStats(10, 0.5, 1, False))


def test_verify_uncapped():
    inf = numeric.inf_of("int16")
    d = np.array([[0, 100], [inf, 0]], dtype=np.int16)
    assert numeric.verify_uncapped(d, inf, 16)
    d[0, 1] = inf - 10
    assert not numeric.verify_uncapped(d, inf, 16)


@pytest.mark.parametrize("where", [(0, 0), (1000, 7), (2047, 2047)])
def test_verify_uncapped_checks_every_band_of_a_large_matrix(where):
    inf = numeric.inf_of("int16")
    d = np.full((2048, 2048), 5, dtype=np.int16)          # 4M entries: checked band by band
    d[::3] = inf
    assert numeric.verify_uncapped(d, inf, 16)
    d[where] = inf - 16                                   # reachable, within a weight of INF
    assert not numeric.verify_uncapped(d, inf, 16)
    d[where] = inf - 17
    assert numeric.verify_uncapped(d, inf, 16)


def test_to_float64():
    inf = numeric.inf_of("int32")
    d = np.array([[0, inf], [-3, 0]], dtype=np.int32)
    out = casts.to_float64(d, inf)
    assert out.dtype == np.float64 and out[0, 1] == np.inf and out[1, 0] == -3


def test_saturating_fits():
    """uint8 with saturating sums (the batch CPU kernel) holds non-negative integer weights
    whose every shortest path stays below 255."""
    saturating_fits = numeric.saturating_fits
    assert saturating_fits("uint8", WeightStats(255, 1, 1, True))          # 254 hops
    assert not saturating_fits("uint8", WeightStats(256, 1, 1, True))      # 255 hops: INF
    assert saturating_fits("uint8", WeightStats(3, 0, 127, True))          # 254
    assert not saturating_fits("uint8", WeightStats(3, 0, 128, True))
    assert saturating_fits("uint8", WeightStats(1, 0, 254, True))          # a lone self-loop
    assert not saturating_fits("uint8", WeightStats(1, 0, 255, True))      # the weight itself is INF
    assert not saturating_fits("uint8", WeightStats(3, -1, 2, True))
    assert not saturating_fits("uint8", WeightStats(3, 0.5, 2, False))
    assert not saturating_fits("int16", WeightStats(3, 1, 1, True))


@pytest.mark.parametrize("source", ["int16", "int32", "int64", "uint8", "float32", "float64"])
@pytest.mark.parametrize("target", ["float64", "float32"])
def test_cast_to_float_in_one_pass_matches_numpy(source, target, monkeypatch):
    """Host casts to a float type run in one Numba pass (passes.to_float_rows), split over threads for
    large matrices: the same values as NumPy's cast and masked copy, for any INF given."""
    from floydwarp import team

    monkeypatch.setattr(team, "GRAIN", 1)
    rng = np.random.default_rng(4)
    d = rng.integers(0, 120, (33, 17)).astype(source)
    for inf in (numeric.inf_of(source), 100, 100.0, np.int64(100), np.float32(99.5), np.inf):
        got = casts.cast_distances(d, inf, target)
        want = d.astype(target)
        want[d >= inf] = np.inf
        assert got.dtype == np.dtype(target) and np.array_equal(got, want)
    big = np.array([[2 ** 62 - 2, 2 ** 62 - 1]], np.int64)       # compared as integers, not as rounded floats
    assert casts.cast_distances(big, 2 ** 62 - 1, np.float64).tolist() == [[float(2 ** 62 - 2), np.inf]]


# ---------------------------------------------------------------------- issue 35, item 5
HUGE = np.array([[0, 1e308, np.inf], [np.inf, 0, 1e308], [np.inf, np.inf, 0]])


def test_auto_dtype_with_weights_near_float64s_limit():
    """``dtype="auto"`` raised OverflowError (int too large to convert to float) writing its
    warning: integral weights of 1e308 span paths of 2e308, beyond float64."""
    import floydwarp as fw
    from scipy.sparse.csgraph import floyd_warshall

    with pytest.warns(fw.InexactWarning, match=r"from 1\.00000e\+308 to 1\.00000e\+308 .* reach 2\.00000e\+308"):
        r = fw.solve(HUGE)
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r.to_dense(), fw.solve(HUGE, dtype="float64").to_dense())
    np.testing.assert_array_equal(r.to_dense(), floyd_warshall(HUGE))
    with pytest.raises(DtypeError, match=r"cannot hold edge weight 1\.00000e\+308: every"):
        fw.solve(HUGE, dtype="int64")
    with pytest.raises(DtypeError, match=r"paths can reach 2\.00000e\+308 and 0,"):
        fw.solve(HUGE, dtype="float32")


def test_cli_solves_a_npy_of_weights_near_float64s_limit(tmp_path):
    from floydwarp.cli.app import app

    from cli_runner import cli_runner

    np.save(tmp_path / "huge.npy", HUGE)
    result = cli_runner().invoke(app, ["solve", str(tmp_path / "huge.npy"), "-V"])
    assert result.exit_code == 0, (result.stderr, result.exception)
    assert result.stderr.startswith("warning: integer edge weights") and "Traceback" not in result.stderr
    assert "1e+308" in result.stdout
