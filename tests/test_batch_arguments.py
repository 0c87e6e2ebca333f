"""solve_batch's arguments from issue 35: a PyG ``Batch`` with both ``batch`` and ``ptr``
(items 7) and ``max_distance`` NaN or infinite (item 8)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import floydwarp as fw
from batch_model import check, pyg_of, random_batch
from floydwarp.cli.app import app
from floydwarp.errors import FloydwarpError

from cli_runner import cli_runner


def _collated(mats, **changes):
    """What PyTorch Geometric's ``collate`` makes: edge_index, edge_weight, batch and ptr (and num_graphs)."""
    edge_index, weight, ptr = pyg_of(mats)
    fields = dict(edge_index=edge_index, edge_weight=weight, ptr=ptr,
                  batch=np.repeat(np.arange(len(mats)), np.diff(ptr)), num_graphs=len(mats))
    return SimpleNamespace(**{**fields, **changes})


def test_pyg_batch_with_both_batch_and_ptr():
    """A real PyG ``Batch`` was refused: "give exactly one of batch= ... and ptr=".  Both are
    accepted when they agree, trailing empty graphs included."""
    mats = random_batch(np.random.default_rng(35), 12, 8, "pos") + [np.zeros((0, 0))]
    check(fw.solve_batch(_collated(mats)), mats)
    b = _collated(mats)
    check(fw.solve_batch(fw.GraphBatch.from_pyg(b.edge_index, b.edge_weight, batch=b.batch, ptr=b.ptr)), mats)


def test_pyg_batch_and_ptr_that_disagree_are_refused():
    mats = random_batch(np.random.default_rng(7), 4, 6, "pos")
    good = _collated(mats)
    moved = good.batch.copy()
    v = int(good.ptr[2])                       # the first vertex of graph 2, put in graph 1
    moved[v] = 1
    with pytest.raises(FloydwarpError, match=rf"batch and ptr disagree: batch\[{v}\] = 1 but ptr puts vertex {v} "
                                             r"in graph 2"):
        fw.solve_batch(_collated(mats, batch=moved))
    with pytest.raises(FloydwarpError, match="batch and ptr disagree: batch has .* vertices, ptr"):
        fw.solve_batch(_collated(mats, batch=good.batch[:-1]))


def test_real_pyg_batch():
    pyg = pytest.importorskip("torch_geometric.data")
    torch = pytest.importorskip("torch")
    mats = random_batch(np.random.default_rng(3), 6, 7, "pos")
    graphs = []
    for m in mats:
        i, j = np.nonzero(np.isfinite(m) & ~np.eye(len(m), dtype=bool))
        graphs.append(pyg.Data(edge_index=torch.from_numpy(np.stack([i, j])), edge_weight=torch.from_numpy(m[i, j]),
                               num_nodes=len(m)))
    batch = pyg.Batch.from_data_list(graphs)
    assert batch.batch is not None and batch.ptr is not None
    check(fw.solve_batch(batch), mats)


# ---------------------------------------------------------------------- max_distance
def _hops():
    return [np.array([[0, 1, np.inf, np.inf], [np.inf, 0, 1, np.inf], [np.inf, np.inf, 0, 1],
                      [np.inf, np.inf, np.inf, 0]]),
            np.array([[0, 2.5], [np.inf, 0]])]


@pytest.mark.parametrize("graphs", [_hops()[:1], _hops()[1:]], ids=["integer", "fractional"])
def test_max_distance_nan_is_refused(graphs):
    """NaN gave NaN distances (float weights) or a bare ValueError (integer weights)."""
    with pytest.raises(FloydwarpError, match="max_distance must be a non-negative .*got nan"):
        fw.solve_batch(graphs, max_distance=float("nan"))


@pytest.mark.parametrize("graphs", [_hops()[:1], _hops()[1:]], ids=["integer", "fractional"])
@pytest.mark.parametrize("unweighted", [False, True])
def test_max_distance_inf_clips_nothing(graphs, unweighted):
    """``max_distance=inf`` raised OverflowError; it is no clipping."""
    want = fw.solve_batch(graphs, unweighted=unweighted)
    got = fw.solve_batch(graphs, unweighted=unweighted, max_distance=np.inf)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.dist, want.dist)


def test_cli_max_distance_inf_and_nan(tmp_path):
    graph = tmp_path / "g.csv"
    graph.write_text("source,target,weight\n0,1,3\n1,2,4\n")
    runner = cli_runner()
    ok = runner.invoke(app, ["batch", str(graph), "-o", str(tmp_path / "out.npz"), "--max-distance", "inf"])
    assert ok.exit_code == 0, (ok.stderr, ok.exception)
    assert fw.BatchResult.load(tmp_path / "out.npz").dist[0, 0, 2] == 7
    bad = runner.invoke(app, ["batch", str(graph), "-o", str(tmp_path / "out.npz"), "--max-distance", "nan"])
    assert bad.exit_code == 2 and bad.stderr.startswith("error: max_distance must be"), (bad.stderr, bad.exception)


# ---------------------------------------------------------------------- progress
@pytest.mark.parametrize("asked", [None, "--no-progress", "--progress"])
def test_cli_batch_draws_progress_only_on_a_terminal_or_when_asked(tmp_path, monkeypatch, asked):
    """A ``reading: 100%`` bar was drawn on a non-terminal stderr before the error line."""
    import time

    import floydwarp.io

    read = floydwarp.io.read_graph

    def slow_read(path, **options):
        time.sleep(0.6)                  # past tqdm's 1 s delay by the second file
        return read(path, **options)

    monkeypatch.setattr(floydwarp.io, "read_graph", slow_read)
    files = []
    for k, text in enumerate(["0,1,3\n", "0,1,4\n", "0,1,5\n", "0,1,x\n"]):
        files.append(tmp_path / f"g{k}.csv")
        files[-1].write_text("source,target,weight\n" + text)
    args = ["batch", *map(str, files), "-o", str(tmp_path / "out.npz")] + ([asked] if asked else [])
    result = cli_runner().invoke(app, args)
    assert result.exit_code == 2
    if asked == "--progress":
        assert "reading" in result.stderr and "error: " in result.stderr
    else:
        assert result.stderr.startswith("error: ") and "g3.csv" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
