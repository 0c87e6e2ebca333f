#!/usr/bin/env bash
# `fast` with predecessors against `fast` without and the seed-style `blocked`, on one GPU:
#   bench/run_pred_h100.sh RESULTS_DIR [SIZES]
# RESULTS_DIR/{pred-16384,pred}/: predecessors on (fast = keyed: int16, int32, and float32 with these
# integer weights);
# RESULTS_DIR/nopred/: the same graphs without predecessors; RESULTS_DIR/blocked-pred/: fast
# with predecessor_method=blocked (the kernels keyed replaced).  Graphs are built on the device (25 %
# of the pairs, weights 1..16), median of 3 after a warm-up.
set -eu
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
OUTDIR="$1"
SIZES="${2:-16384,32768}"
mkdir -p "$OUTDIR"
FW=(python3 -m floydwarp bench sizes --backend gpu --graph device --repeats 3)
"${FW[@]}" -a fast,blocked --sizes 16384 --dtype int16,int32,float32 -O predecessors=true \
    --out "$OUTDIR/pred-16384"
"${FW[@]}" -a fast --sizes "$SIZES" --dtype int16,int32,float32 -O predecessors=true --out "$OUTDIR/pred"
"${FW[@]}" -a fast --sizes "$SIZES" --dtype int16,int32,float32 --out "$OUTDIR/nopred"
"${FW[@]}" -a fast --sizes 16384 --dtype int16,int32,float32 -O predecessors=true -O predecessor_method=blocked \
    --out "$OUTDIR/blocked-pred"
