#!/bin/bash
# Issue #11 in one device call on the 8-GPU kind (nvidia-h200-x8): GPU tests on all eight GPUs, weak
# scaling 1 -> 2 -> 4 -> 8 GPUs (n^3 per GPU constant), strong scaling of int32 n = 65536 against one GPU
# running gpu/fast in the same study, and the size run: int32 n = 131072 (69 GB) over 8 GPUs, checked
# by Bellman's equations on every entry and 16 rows of SciPy's Dijkstra.
#
#   bash bench/run_h200x8.sh            (on the device, from the repository root; results go to $OUT)
#   GPUS="1 2" SIZE_N=16384 SIZE_GPUS=2 STRONG_N=16384 bash bench/run_h200x8.sh   (a smaller rehearsal)
#
# Budget: tests <= TEST_S, study <= STUDY_S, size run <= SIZE_S seconds (each stops at its limit, keeping
# the JSON records made so far).
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 PYTHONPATH=src
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
GPUS=${GPUS:-"1 2 4 8"}
TEST_S=${TEST_S:-150}; STUDY_S=${STUDY_S:-300}; SIZE_S=${SIZE_S:-140}
{ nvidia-smi -L; nvidia-smi topo -m; } > "$OUT/env.log" 2>&1
timeout "$TEST_S" python3 -m pytest -q -m gpu tests/test_multigpu.py -p no:cacheprovider -ra \
    2>&1 | tee "$OUT/pytest.log" | tail -5
timeout "$STUDY_S" python3 bench/gpu_scaling.py --strong-n "${STRONG_N:-65536}" --strong-gpus $GPUS \
    --weak-n "${WEAK_N:-32768}" --weak-gpus $GPUS --out "$OUT/gpu_scaling_h200x8.json" 2>&1 | tail -12
timeout "$SIZE_S" python3 bench/checked_run.py --n "${SIZE_N:-131072}" --backend multigpu \
    --gpus "${SIZE_GPUS:-8}" --dijkstra 16 --out "$OUT/size_run_h200x8.json" 2>&1 | grep -v "^  round" | tail -6
