#!/usr/bin/env bash
# Issue 22 on the H100, one device command (each step has its own limit):
#   1. the GPU tests of what the end-to-end path touches (transfers, locked host pages, the
#      compile stage, post-run checks, batches' uint8 kernels);
#   2. bench/e2e_gpu.py: n = 32768 int32 and int16 from host edges to a host Result, first
#      call and medians -> $OUT/e2e-h100.json;
#   3. seed 004's 2 s budget: `floydwarp bench budget --budgets 2`, int16 and int32, graph
#      on the device (25 % of the pairs) and from a host edge list (5 %: the edges of n = 40,000
#      at 25 % would not fit the host's memory twice) -> $OUT/budget-2s-{device,host}.json.
set -u
cd "$(dirname "$0")/.."
OUTDIR="${OUT:-/tmp/e2e-h100}"
mkdir -p "$OUTDIR"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
start=$SECONDS
step() { echo "== $1 ($((SECONDS - start)) s)"; }

step "GPU tests"
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_transfer.py tests/test_gpu_host.py \
    tests/test_gpu_dtype_bounds.py tests/test_batch_gpu.py 2>&1 | grep -E "^E |Error|passed|failed" | head -30
step "end to end, n = 32768"
timeout 150 python3 bench/e2e_gpu.py --sizes 32768 --dtypes int32,int16 --repeats 3 --out "$OUTDIR/e2e-h100.json"
for case in device:25 host:5; do
    graph=${case%:*}
    step "budget 2 s, graph on the $graph"
    timeout 120 python3 -m floydwarp bench budget --backend gpu --dtype int16,int32 --budgets 2 --n 16384 \
        --graph "$graph" -p "${case#*:}" --out "$OUTDIR/budget-2s-$graph" 2>&1 | grep -E "within|memory|rror" | head
    cp "$OUTDIR/budget-2s-$graph/budget.json" "$OUTDIR/budget-2s-$graph.json" 2>/dev/null
    rm -rf "$OUTDIR/budget-2s-$graph"
done
step "done"
