#!/usr/bin/env bash
# Pivot closures by min-plus squaring (pipe.cu's fw_pipe_p12), measured on one GPU:
#   bench/run_p12_h100.sh RESULTS_DIR
# RESULTS_DIR/ceilings.json: the add-min ceilings;
# RESULTS_DIR/phases-DTYPE.json: `fast` at n = 16384 per variant ("wide", "pipe"), phase times;
# RESULTS_DIR/final/: `fast` and the seed-style `blocked` for int16, int32, float32, SciPy at n = 2048.
# Graphs are built on the device (25 % of the pairs, weights 1..16), median of 3 after a warm-up.
set -eu
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
OUTDIR="$1"
mkdir -p "$OUTDIR"
python3 -m floydwarp.gpu.ceilings > "$OUTDIR/ceilings.json"
for dt in int16 int32 float32; do
    python3 "$ROOT/bench/gpu_phases.py" --n 16384 --dtype "$dt" --sweep fast_variant=wide,pipe \
        --out "$OUTDIR/phases-$dt.json"
done
python3 -m floydwarp bench sizes --backend gpu --graph device --repeats 3 -a fast,blocked \
    --sizes 1024,2048,16384,32768 --dtype int16,int32,float32 --scipy-max-n 2048 --out "$OUTDIR/final"
