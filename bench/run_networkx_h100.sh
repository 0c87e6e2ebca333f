#!/usr/bin/env bash
# Issue 24 on the H100 in one device command of at most 8 minutes (each step has its own limit):
#   1. the GPU tests of gpu/bfs (all-pairs breadth-first search, what the study's unweighted graphs
#      now run), of the metrics and of the backend (its result stays on the GPU), NetworkX's own
#      tests through the backend;
#   2. `floydwarp bench networkx` at n = 1,000 / 5,000 / 20,000 (sparse and dense)
#      -> $OUT/networkx-h100/ (JSON with per-stage seconds and first calls, CSV, plots, report.md);
#   3. every function split into convert / solve / reduce / build (bench/networkx_stages.py):
#      n = 20,000 sparse and dense -> $OUT/networkx-stages-20000.json, then n = 5,000 sparse with the
#      n^2-object functions too -> $OUT/networkx-stages-5000.json (cut at its limit, keeps what it did).
set -u
cd "$(dirname "$0")/.."
OUTDIR="${OUT:-/tmp/networkx-h100}"
mkdir -p "$OUTDIR"
# without `pip install -e .` NetworkX finds the backend through an entry point declared here
ep=$(mktemp -d)
mkdir -p "$ep/floydwarp_nx_entry-0.dist-info"
printf 'Metadata-Version: 2.1\nName: floydwarp-nx-entry\nVersion: 0\n' > "$ep/floydwarp_nx_entry-0.dist-info/METADATA"
printf '[networkx.backends]\nfloydwarp = floydwarp.nx_backend:BackendInterface\n' \
    > "$ep/floydwarp_nx_entry-0.dist-info/entry_points.txt"
export PYTHONPATH=$PWD/src:$ep PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
start=$SECONDS
step() { echo "== $1 ($((SECONDS - start)) s)"; }

step "GPU tests: gpu/bfs against the CPU's searches (about 45 s on a fresh machine)"
timeout 75 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_bfs.py 2>&1 \
    | grep -E "^E |Error|passed|failed" | head -20
step "GPU tests: metrics and the backend"
timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_metrics.py tests/test_nx_allpairs.py 2>&1 \
    | grep -E "^E |Error|passed|failed" | head -30
step "NetworkX's tests through the backend"
NETWORKX_TEST_BACKEND=floydwarp NETWORKX_FALLBACK_TO_NX=1 timeout 40 python3 -m pytest -q -p no:cacheprovider \
    --pyargs networkx.algorithms.shortest_paths networkx.algorithms.tests.test_distance_measures \
    networkx.algorithms.centrality.tests.test_closeness_centrality \
    networkx.algorithms.tests.test_wiener networkx.algorithms.tests.test_efficiency 2>&1 | tail -2
step "bench networkx"
timeout 140 python3 -m floydwarp bench networkx --sizes 1000,5000,20000 -r 5 --max-seconds 3 \
    -o "$OUTDIR/networkx-h100" 2>&1 | tail -22
step "stages, n = 20,000"
timeout 60 python3 bench/networkx_stages.py --n 20000 --graph sparse,dense --out "$OUTDIR/networkx-stages-20000.json"
step "stages, n = 5,000 (n^2-object functions included)"
timeout 30 python3 bench/networkx_stages.py --n 5000 --graph sparse --out "$OUTDIR/networkx-stages-5000.json"
step "done"
