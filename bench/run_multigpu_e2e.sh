#!/usr/bin/env bash
# Issue 22 (several GPUs) and issue 21's multi-GPU tests on the 2-GPU kind, in two device commands:
#   bash bench/run_multigpu_e2e.sh tests   every multi-GPU test (`pytest -m gpu tests/test_multigpu.py`,
#                                          -> $OUT/pytest-multigpu.log), the transfer tests, and
#                                          bench/e2e_gpu.py one GPU against `--gpus 2` at n = 32768 (5 %)
#                                          -> $OUT/e2e-multigpu-32768.json;
#   bash bench/run_multigpu_e2e.sh large   the same at n = 65536 (1 %) -> $OUT/e2e-multigpu-65536.json,
#                                          and the CLI as a user runs it, one process each:
#                                          `floydwarp solve --generate 32768 -p 5 --dtype int32` with
#                                          --backend gpu and with --gpus 2 (a new process starts its workers).
set -u
cd "$(dirname "$0")/.."
OUTDIR="${OUT:-/tmp/multigpu-e2e}"
mkdir -p "$OUTDIR"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
nvidia-smi -L
start=$SECONDS
step() { echo "== $1 ($((SECONDS - start)) s)"; }
if [ "${1:-tests}" = tests ]; then
    step "multi-GPU tests"
    timeout 270 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_multigpu.py 2>&1 \
        | tee "$OUTDIR/pytest-multigpu.log" | grep -E "^E |Error|passed|failed" | head -30
    step "GPU transfer tests"
    timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_transfer.py 2>&1 \
        | grep -E "^E |Error|passed|failed" | head -20
    step "end to end, n = 32768"
    timeout 160 python3 bench/e2e_gpu.py --sizes 32768 -p 5 --dtypes int32 --gpus 1,2 --repeats 3 \
        --out "$OUTDIR/e2e-multigpu-32768.json" | cut -c1-700
else
    step "end to end, n = 65536"
    timeout 300 python3 bench/e2e_gpu.py --sizes 65536 -p 1 --dtypes int32 --gpus 1,2 --repeats 2 \
        --out "$OUTDIR/e2e-multigpu-65536.json" | cut -c1-700
    for how in "--backend gpu" "--gpus 2"; do
        step "CLI: floydwarp solve --generate 32768 -p 5 --dtype int32 $how"
        /usr/bin/time -f "process: %e s" timeout 100 python3 -m floydwarp solve --generate 32768 -p 5 -s 1 \
            --dtype int32 $how 2>&1 | grep -vE "^ *$"
    done
fi
step "done"
