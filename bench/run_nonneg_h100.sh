#!/usr/bin/env bash
# float32 products on non-negative entries (panel.Arith.nonneg), measured on one GPU:
#   bench/run_nonneg_h100.sh RESULTS_DIR
# RESULTS_DIR/panel.json: every dtype's panel product (M = 16384, K = 4096), float32 both ways;
# RESULTS_DIR/ceilings.json: the add-min ceilings, float32-nonneg included;
# RESULTS_DIR/signed/: `fast` float32 with nonneg_products=false (the kernel before), same graphs;
# RESULTS_DIR/final/: `fast` and the seed-style `blocked` for int16, int32, float32, SciPy at n = 2048.
# Graphs are built on the device (25 % of the pairs, weights 1..16), median of 3 after a warm-up.
set -eu
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
OUTDIR="$1"
mkdir -p "$OUTDIR"
python3 "$ROOT/bench/gpu_panel.py" --out "$OUTDIR/panel.json"
python3 -m floydwarp.gpu.ceilings > "$OUTDIR/ceilings.json"
FW=(python3 -m floydwarp bench sizes --backend gpu --graph device --repeats 3)
"${FW[@]}" -a fast --sizes 16384,32768 --dtype float32 -O nonneg_products=false --out "$OUTDIR/signed"
"${FW[@]}" -a fast,blocked --sizes 2048,16384,32768 --dtype int16,int32,float32 --scipy-max-n 2048 \
    --out "$OUTDIR/final"
