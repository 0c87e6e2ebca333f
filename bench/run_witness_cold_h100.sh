#!/usr/bin/env bash
# The witness candidate lists built by kernels of witness.cu, against the tree before (CuPy array code):
#   bench/run_witness_cold_h100.sh BEFORE_SRC_DIR
# $OUT/pred-cold-{before,after}-{empty,second}.json: first solves with predecessors on an empty CuPy
# cache, then a second process on that cache (bench/pred_cold_probe.py, NVRTC per kernel);
# $OUT/witness-{int16,float32-real}-n*.json: the witness pass alone (bench/gpu_witness.py), this tree.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BEFORE="$1"
export PYTHONUNBUFFERED=1
for tree in before after; do
    src="$ROOT/src"; [ "$tree" = before ] && src="$BEFORE"
    cache=$(mktemp -d)
    for run in empty second; do
        CUPY_CACHE_DIR=$cache PYTHONPATH="$src:$ROOT/bench" python3 "$ROOT/bench/pred_cold_probe.py" 300,517,2500 "$tree-$run"
    done
done
export PYTHONPATH="$ROOT/src"
for n in 16384 32768; do
    python3 "$ROOT/bench/gpu_witness.py" --n $n --dtype int16 > "$OUT/witness-int16-n$n.json"
    python3 "$ROOT/bench/gpu_witness.py" --n $n --dtype float32 --real-weights > "$OUT/witness-float32-real-n$n.json"
done
