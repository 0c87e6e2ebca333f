#!/usr/bin/env bash
# The GPU main job as a process, before/after in one run (issue 37); about 4 minutes on an H100.
#
# For a before/after, on this machine first (the device gets the working tree; the base tree travels
# as an ignored tarball; without it only this tree is measured):
#   git archive --format=tar.gz -o bench/device/base/base.tar.gz <base commit> src
# then on the device (run's carry: ["bench/device/base"]):
#   bash bench/device/process_gpu.sh [--gpus 2,4]     (--gpus: also the job on N GPUs, threads and mpiexec)
# It prints every process's lines and writes $OUT/process_gpu.json (bench/device/process_gpu.py says what).
set -euo pipefail
cd "$(dirname "$0")/../.."
base=bench/device/base/base.tar.gz
work=$(mktemp -d /tmp/fw-process-XXXXXX)
before=()
if [ -f "$base" ]; then
    mkdir -p "$work/before"
    tar -xzf "$base" -C "$work/before"
    before=(--before "$work/before/src")
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
python3 bench/device/process_gpu.py "${before[@]}" --after src --work "$work" \
    --out "${OUT:-$work}/process_gpu.json" "$@"
