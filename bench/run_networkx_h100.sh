#!/usr/bin/env bash
# Issue 24 on the H100: the GPU tests of the metrics, NetworkX's answers through the backend
# (solver on the GPU), then `floydwarp bench networkx` at n = 1,000 / 5,000 / 20,000.
set -u
cd "$(dirname "$0")/.."
# without `pip install -e .` NetworkX finds the backend through an entry point declared here
ep=$(mktemp -d)
mkdir -p "$ep/floydwarp_nx_entry-0.dist-info"
printf 'Metadata-Version: 2.1\nName: floydwarp-nx-entry\nVersion: 0\n' > "$ep/floydwarp_nx_entry-0.dist-info/METADATA"
printf '[networkx.backends]\nfloydwarp = floydwarp.nx_backend:BackendInterface\n' \
    > "$ep/floydwarp_nx_entry-0.dist-info/entry_points.txt"
export PYTHONPATH=$PWD/src:$ep
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
python3 -m pytest -q -p no:cacheprovider -m gpu -x tests/test_metrics.py 2>&1 | grep -E "^E |Error|passed|failed" | head -30
python3 -m pytest -q -p no:cacheprovider tests/test_nx_allpairs.py -k "closeness or measures or lengths" 2>&1 | tail -2
NETWORKX_TEST_BACKEND=floydwarp NETWORKX_FALLBACK_TO_NX=1 python3 -m pytest -q -p no:cacheprovider --pyargs \
    networkx.algorithms.shortest_paths networkx.algorithms.tests.test_distance_measures \
    networkx.algorithms.centrality.tests.test_closeness_centrality \
    networkx.algorithms.tests.test_wiener networkx.algorithms.tests.test_efficiency 2>&1 | tail -2
python3 -m floydwarp bench networkx --sizes 1000,5000,20000 -r 3 --max-seconds 3 -o "${OUT:-/tmp}/networkx-h100" 2>&1 | tail -25
