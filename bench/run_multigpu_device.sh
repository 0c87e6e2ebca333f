#!/bin/bash
# One device call for the multi-GPU work (2-GPU kind): environment, GPU tests, scaling study.
# Usage on the device, from the repository root: bash bench/run_multigpu_device.sh  (writes into $OUT)
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 PYTHONPATH=src
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
TEST_S=${TEST_S:-230}; STUDY_S=${STUDY_S:-200}
{ nvidia-smi -L; nvidia-smi topo -m; python3 -c "import cupy; print('cupy', cupy.__version__)";
  python3 -c "from floydwarp.dist import nccl; print('nccl probe:', nccl.probe())"; } 2>&1 | tee "$OUT/env.log"
timeout "$TEST_S" python3 -m pytest -q -m gpu tests/test_multigpu.py -p no:cacheprovider --timeout=120 \
    --maxfail=6 -ra 2>&1 | tee "$OUT/pytest.log" | tail -40
timeout "$STUDY_S" python3 bench/gpu_scaling.py --strong-n "${STRONG_N:-65536}" --strong-gpus 2 \
    --weak-n "${WEAK_N:-32768}" --weak-gpus 1 2 --out "$OUT/gpu_scaling.json" 2>&1 | tee "$OUT/study.log" | tail -20
