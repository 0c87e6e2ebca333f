#!/usr/bin/env bash
# A change to the one-GPU end-to-end path against the tree before it, in one device command:
#   bash bench/run_e2e_ab_h100.sh BEFORE_SRC [TESTS]
# BEFORE_SRC is the older tree's src/ (e.g. before_src/src after
# `mkdir before_src && git archive REV src | tar -x -C before_src`); TESTS: pytest's -k
# expression for step 1 (default: the end-to-end path's tests).  GPUS: bench/e2e_gpu.py's --gpus
# (default 1; "1,w1" adds the multigpu backend's worker path on this GPU).  DTYPES: --dtypes (int32,int16).
#   1. the GPU tests of the path (transfers, locked pages, wide rounds) on this tree;
#   2. bench/e2e_gpu.py at n = 32768, int32 and int16 from host edges to a host Result,
#      before / after / before / after (3 calls each) -> $OUT/e2e-{before,after}-{1,2}.json.
GPUS=${GPUS:-1}
DTYPES=${DTYPES:-int32,int16}
set -u
cd "$(dirname "$0")/.."
BEFORE=$(realpath "$1")
OUTDIR="${OUT:-/tmp/e2e-ab}"
mkdir -p "$OUTDIR"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
start=$SECONDS
step() { echo "== $1 ($((SECONDS - start)) s)"; }

step "GPU tests"
PYTHONPATH=$PWD/src timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_transfer.py \
    tests/test_gpu_host.py tests/test_gpu.py tests/test_multigpu.py -k "${2:-transfer or host or wide or fast or pitch}" 2>&1 \
    | grep -E "^E |Error|passed|failed" | head -30
for pass in 1 2; do
    for which in before after; do
        src=$PWD/src; [ $which = before ] && src=$BEFORE
        step "end to end, n = 32768, $which ($pass)"
        PYTHONPATH=$src timeout 150 python3 bench/e2e_gpu.py --sizes 32768 --dtypes "$DTYPES" --repeats 3 \
            --gpus "$GPUS" --out "$OUTDIR/e2e-$which-$pass.json" | cut -c1-400
    done
done
step "done"
