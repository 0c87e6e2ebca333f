#!/usr/bin/env bash
# Issue 35, item 1: the GPU tests under concurrency, 12 pytest-xdist processes sharing one GPU.
#
#   bash bench/device/ooc_concurrency.sh ooc      three runs of the out-of-core tests   (< 9 minutes)
#   bash bench/device/ooc_concurrency.sh all      the whole GPU suite once             (< 9 minutes)
#   bash bench/device/ooc_concurrency.sh both     the two in one call (more than one device command's 10 minutes)
#   (or through the runner: bench/device/run.sh ooc-concurrency h100 ooc)
#
# ooc: the out-of-core and dtype-bound tests (654 tests that failed 10, 9 and 12 times under -n 12
#      before the fix), three runs; all: the whole GPU suite once under -n 12.  Logs go to $RESULTS
#      (set by the runner), else $OUT, else ./ooc-concurrency-logs, one per run; the summary lines
#      are printed at the end.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD/src
OUT=${RESULTS:-${OUT:-$PWD/ooc-concurrency-logs}}
mkdir -p "$OUT"
part=${1:-both}
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv > "$OUT/gpu.txt" 2>&1 || true
python3 -c "import cupy, xdist; print('cupy', cupy.__version__, 'xdist', xdist.__version__)" > "$OUT/versions.txt" 2>&1

if [ "$part" = ooc ] || [ "$part" = both ]; then
    for i in 1 2 3; do
        timeout 170 python3 -m pytest -q -p no:cacheprovider -p no:randomly -m gpu -n 12 \
            tests/test_gpu_ooc.py tests/test_gpu_dtype_bounds.py > "$OUT/ooc-run$i.log" 2>&1
        echo "ooc run $i: exit $?" >> "$OUT/summary.txt"
    done
fi
if [ "$part" = all ] || [ "$part" = both ]; then
    timeout 500 python3 -m pytest -q -p no:cacheprovider -p no:randomly -m gpu -n 12 > "$OUT/gpu-all.log" 2>&1
    echo "whole GPU suite: exit $?" >> "$OUT/summary.txt"
fi
for log in "$OUT"/ooc-run*.log "$OUT"/gpu-all.log; do
    [ -f "$log" ] && echo "$(basename "$log"): $(grep -E '^(FAILED|ERROR)|[0-9]+ (passed|failed)' "$log" | tail -4 | tr '\n' ' ')" \
        >> "$OUT/summary.txt"
done
cat "$OUT/summary.txt"
