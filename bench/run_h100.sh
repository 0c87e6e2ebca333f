#!/usr/bin/env bash
# Every floydwarp benchmark study, sized for one H100 (80 GB) host with 16 cores, in about 8 minutes,
# then `floydwarp report` -> docs/benchmarks.md.  See bench/README.md.
#
#   bench/run_h100.sh [RESULTS_DIR] [STUDY ...]
#
# RESULTS_DIR  where the study folders go (default bench/results/h100-<timestamp>); each study writes
#              RESULTS_DIR/<study>[-cpu|-gpu]/ (STUDY.json, STUDY.csv, PNG plots, report.md).
# STUDY ...    a subset of: ceilings sizes kernels block-size budget threads scaling breakdown report
#              (default: all, in that order).
#
# The whole run stops within FLOYDWARP_BENCH_SECONDS (default 540): each study gets at most its own limit
# and what is left of that total (less 60 s kept for the report); a study stopped early keeps the records
# it made (its JSON is rewritten after every record) and the report says it is incomplete.
# When $OUT is set (the device tool), the results folder, docs/benchmarks.md and its plots are packed into
# $OUT/bench-h100.tar.gz, and benchmarks.md and run.log are copied to $OUT.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
PY="${PYTHON:-python3}"
FW=("$PY" -m floydwarp)
ALL="ceilings sizes kernels block-size budget threads scaling breakdown report"

RESULTS="bench/results/h100-$(date +%Y%m%d-%H%M%S)"
if [ $# -gt 0 ] && [[ " $ALL " != *" $1 "* ]]; then
    RESULTS="$1"; shift
fi
STUDIES=" ${*:-$ALL} "
mkdir -p "$RESULTS"
LOG="$RESULTS/run.log"
START=$(date +%s)
TOTAL="${FLOYDWARP_BENCH_SECONDS:-540}"
RESERVE=60

want() { [[ "$STUDIES" == *" $1 "* ]]; }
step() {   # step LIMIT NAME -- command...: run it for at most LIMIT s and what the total allows
    local limit=$1 name=$2; shift 3
    local left=$(( TOTAL - ($(date +%s) - START) - RESERVE ))
    [ "$name" = report ] && left=$(( left + RESERVE ))
    [ "$left" -lt "$limit" ] && limit=$left
    if [ "$limit" -lt 15 ]; then
        echo "=== $name skipped: the run's $TOTAL s are spent (FLOYDWARP_BENCH_SECONDS)" | tee -a "$LOG"
        return 0
    fi
    echo "=== [$(( $(date +%s) - START )) s] $name (at most $limit s): $*" | tee -a "$LOG"
    timeout --signal=INT --kill-after=15 "$limit" "$@" 2>&1 | tee -a "$LOG"
    local rc=${PIPESTATUS[0]}
    case $rc in
        0) ;;
        124|130|137) echo "=== $name: stopped at $limit s; the records made so far are kept" | tee -a "$LOG" ;;
        *) echo "=== $name: failed with exit status $rc" | tee -a "$LOG" ;;
    esac
    return 0
}

{ echo "floydwarp benchmark run $(date -u +%FT%TZ) into $RESULTS (studies:$STUDIES)"
  nvidia-smi -L 2>&1
  nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv 2>&1
  "$PY" -c 'import sys, numpy, numba, scipy; print("python", sys.version.split()[0], "numpy", numpy.__version__, "numba", numba.__version__, "scipy", scipy.__version__)'
  "$PY" -c 'import cupy; print("cupy", cupy.__version__)' 2>&1 | tail -1
  "${FW[@]}" info 2>&1; } | tee -a "$LOG"

# The device's ceilings first: every later study finds them beside its --out and draws them.
want ceilings && step 90 ceilings -- "${FW[@]}" bench ceilings --backend cpu,gpu --dtype int16,int32 \
    --out "$RESULTS/ceilings"

# Time vs n for every algorithm, SciPy up to 1024; a case predicted over 2 s per solve ends its line.
want sizes && step 170 sizes -- "${FW[@]}" bench sizes --backend cpu,gpu -a all \
    --sizes 256,512,1024,2048,4096,8192,16384 --max-seconds 2 --scipy-max-n 1024 -r 3 --out "$RESULTS/sizes"

# Every GPU kernel at n = 8192 in three types: GB/s, relax/s, % of the ceilings, rooflines.
want kernels && step 160 kernels -- "${FW[@]}" bench kernels --backend gpu --n 8192 --dtype int16,int32,float32 \
    -r 2 --out "$RESULTS/kernels"

# Tile sizes (blocked, blocked-vec), R (pseudo-blocked), threads per block (work-per-thread, grid-sync);
# then the CPU's tile sizes.
want block-size && step 75 block-size-gpu -- "${FW[@]}" bench block-size --backend gpu --n 8192 -r 2 \
    --out "$RESULTS/block-size-gpu"
want block-size && step 30 block-size-cpu -- "${FW[@]}" bench block-size --backend cpu --n 2048 -r 2 \
    -b 16,32,64,128,256 --out "$RESULTS/block-size-cpu"

# Largest n within 2 s and 20 s on the GPU (graphs made on the device; GPU memory caps it); 2 s on the CPU.
want budget && step 110 budget-gpu -- "${FW[@]}" bench budget --backend gpu --budgets 2,20 --graph device \
    --n 4096 --out "$RESULTS/budget-gpu"
want budget && step 45 budget-cpu -- "${FW[@]}" bench budget --backend cpu --budgets 2 --n 1024 \
    --out "$RESULTS/budget-cpu"

want threads && step 45 threads -- "${FW[@]}" bench threads --n 2048 -r 2 --out "$RESULTS/threads"

# MPI ranks, one thread each: strong at n = 2048, weak from it.  Needs mpiexec and an mpi4py that loads.
if want scaling; then
    if command -v mpiexec >/dev/null && "$PY" -c 'from mpi4py import MPI' 2>/dev/null; then
        step 90 scaling -- "${FW[@]}" bench scaling --ranks 1,2,4,8,16 --n 2048 -r 2 --out "$RESULTS/scaling"
    else
        echo "=== scaling skipped: no mpiexec or no loadable mpi4py here (bench/README.md: carrying MPI)" | tee -a "$LOG"
    fi
fi

# File to file: read .in, h2d, phases 1-3, d2h, write .out.
want breakdown && step 75 breakdown -- "${FW[@]}" bench breakdown --backend cpu,gpu --sizes 2048,8192 -r 2 \
    --out "$RESULTS/breakdown"

want report && step 90 report -- "${FW[@]}" report "$RESULTS" -o docs/benchmarks.md \
    --title "floydwarp benchmarks: H100"
echo "=== done in $(( $(date +%s) - START )) s; results in $RESULTS" | tee -a "$LOG"

if [ -n "${OUT:-}" ]; then
    if [[ "$RESULTS" == /* ]]; then                 # outside the repository: packed by its own name
        items=(-C "$(dirname "$RESULTS")" "$(basename "$RESULTS")")
    else                                            # bench/results/h100-*: extract with -C <repo root>
        items=(-C "$ROOT" "$RESULTS")
    fi
    if want report && [ -f docs/benchmarks.md ]; then
        items+=(-C "$ROOT" docs/benchmarks.md)
        [ -d docs/benchmarks ] && items+=(docs/benchmarks)
        cp docs/benchmarks.md "$OUT/benchmarks.md"
    fi
    tar -czf "$OUT/bench-h100.tar.gz" "${items[@]}"
    cp "$LOG" "$OUT/run.log"
    ls -la "$OUT"
fi
