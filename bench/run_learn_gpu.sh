#!/usr/bin/env bash
# Issue 36 on one GPU (run from the repository root on the device machine: CUDA, CuPy, torch and
# torch_geometric installed, no network): the GPU tests of the batch engine and the graph-learning
# drop-ins, then the batch study with its learn section on the GPU.  Results: bench/results/learn-gpu/.
set -uo pipefail
export PYTHONPATH=src
out=${OUT:-bench/results/learn-gpu}
mkdir -p "$out"
python3 -m pytest -q -p no:cacheprovider tests/test_batch_gpu.py tests/test_learn_gpu.py tests/test_pyg.py \
    tests/test_learn_graphormer.py tests/test_learn_dgl.py 2>&1 | tee "$out/pytest.log" | tail -25
# Graphormer's collate of 256 molecules (n = 10..60) on the GPU and the CPU engines side by side;
# the Cython baseline is not built there (no network): the ratio is taken against its 2-core number
# in docs/graph-learning.md.  -O parts=learn keeps it short; add pyg,inputs for the rest.
python3 -m floydwarp bench batch --backend gpu,cpu --batches 1000,100000 -O parts=pyg,learn -O loop_max=1000 \
    -r 5 --out "$out" 2>&1 | tail -30
