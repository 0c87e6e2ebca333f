#!/usr/bin/env bash
# `fast` with witness predecessors (gpu/predecessors/witness.py) against `fast` without and with keys, on one GPU:
#   bench/run_witness_h100.sh RESULTS_DIR [SIZES]
# RESULTS_DIR/witness-*.json: the witness pass alone at n = 16384 (candidates, lists, kernel);
# RESULTS_DIR/phases-*.json: where the time goes at n = 16384 (int16: witnesses against keys;
# float32 with real weights: witnesses against the blocked kernels);
# RESULTS_DIR/{pred,nopred}/: int16 and int32 on the usual graphs (25 % of the pairs, weights 1..16);
# RESULTS_DIR/{real-pred,real-nopred}/: float32 with real weights drawn from [1, 16);
# RESULTS_DIR/{real-pred,real-nopred}-f64/: float64 likewise, n = 8192 and 16384.
# Graphs are built on the device, median of 3 after a warm-up.
set -eu
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
OUTDIR="$1"
SIZES="${2:-16384,32768}"
mkdir -p "$OUTDIR"
python3 "$ROOT/bench/gpu_witness.py" --dtype int16 > "$OUTDIR/witness-int16.json"
python3 "$ROOT/bench/gpu_witness.py" --dtype float32 --real-weights > "$OUTDIR/witness-float32-real.json"
PH=(python3 "$ROOT/bench/gpu_phases.py" --n 16384)
"${PH[@]}" --dtype int16 --sweep predecessor_method=witness,keyed --predecessors --out "$OUTDIR/phases-int16-pred.json"
"${PH[@]}" --dtype float32 --real-weights --sweep predecessor_method=witness,blocked --predecessors \
    --out "$OUTDIR/phases-float32-real-pred.json"
FW=(python3 -m floydwarp bench sizes --backend gpu --graph device --repeats 3 -a fast --no-scipy)
"${FW[@]}" --sizes "$SIZES" --dtype int16,int32 -O predecessors=true --out "$OUTDIR/pred"
"${FW[@]}" --sizes "$SIZES" --dtype int16,int32 --out "$OUTDIR/nopred"
"${FW[@]}" --sizes "$SIZES" --dtype float32 --real-weights -O predecessors=true --out "$OUTDIR/real-pred"
"${FW[@]}" --sizes "$SIZES" --dtype float32 --real-weights --out "$OUTDIR/real-nopred"
"${FW[@]}" --sizes 8192,16384 --dtype float64 --real-weights -O predecessors=true --out "$OUTDIR/real-pred-f64"
"${FW[@]}" --sizes 8192,16384 --dtype float64 --real-weights --out "$OUTDIR/real-nopred-f64"
