#!/usr/bin/env bash
# The one runner of floydwarp's measurements on a machine (bench/README.md, "Running on a machine").
#
#   bench/device/run.sh WHAT MACHINE [OPTION ...]
#
# WHAT     all    the machine's standard set (the profile's ALL groups, in order);
#          GROUP  the profile's steps of that group: a study (sizes, block-size, ...) or a recipe of the
#                 notes (pred, witness, e2e, ...); GROUP:NAME runs one step;
#          STUDY  any other `floydwarp bench` study, run once with OPTION...;
#          SCRIPT a device script bench/device/SCRIPT.sh (dashes read as underscores), run with OPTION...
#                 (it finds MACHINE, RESULTS and the environment below exported).
# MACHINE  a profile, bench/device/machines/MACHINE.sh: the steps sized for that machine.
# OPTION   appended to every `floydwarp bench` command and every script step WHAT runs (e.g. -r 5).
#
# Environment: RESULTS (default bench/results/MACHINE-TIMESTAMP), FLOYDWARP_BENCH_SECONDS (the whole run's
# limit, default 540; each step also has its own), BEFORE (an older tree's src/: every bench and script step
# runs ROUNDS times, default 2, on each tree in turn, into NAME-before-R and NAME-after-R; pytest steps run on
# this tree only), OUT (when set: RESULTS, and docs/benchmarks.md when a report ran, packed into
# $OUT/bench-MACHINE.tar.gz, run.log copied beside), DRY_RUN=1 (print the commands, run nothing),
# LOCK (a file to hold with flock -x for the whole run; the cpu profile sets /tmp/fw-cpu.lock).
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}" >&2; exit 2; }
[ $# -ge 2 ] || usage
WHAT=$1 MACHINE=$2
shift 2
OPTIONS=("$@")
PROFILE="bench/device/machines/$MACHINE.sh"
if [ ! -f "$PROFILE" ]; then
    echo "run.sh: no profile $PROFILE; the machines are:" $(ls bench/device/machines | sed 's/\.sh$//') >&2
    exit 2
fi
PY="${PYTHON:-python3}"
STEPS=()          # one entry per step: "GROUP:NAME<TAB>LIMIT<TAB>KIND ARGS" (ARGS shell-quoted)
ALL=""
step() {          # step GROUP[:NAME] LIMIT_S KIND ARGS...   (called by the profile)
    local name=$1 limit=$2 kind=$3
    shift 3
    STEPS+=("$name"$'\t'"$limit"$'\t'"$kind$(printf ' %q' "$@")")
}
# shellcheck source=/dev/null
. "$PROFILE"
if [ -n "${LOCK:-}" ] && [ -z "${FLOYDWARP_BENCH_LOCKED:-}" ] && [ -z "${DRY_RUN:-}" ]; then
    FLOYDWARP_BENCH_LOCKED=1 exec flock -x "$LOCK" bash "$ROOT/bench/device/run.sh" "$WHAT" "$MACHINE" "$@"
fi

group_of() { echo "${1%%:*}"; }
selected=()
for entry in "${STEPS[@]}"; do
    name=${entry%%$'\t'*}
    group=$(group_of "$name")
    if [ "$WHAT" = "$name" ] || [ "$WHAT" = "$group" ] || { [ "$WHAT" = all ] && [[ " $ALL " == *" $group "* ]]; }; then
        selected+=("$entry")
    fi
done
SCRIPT="bench/device/${WHAT//-/_}.sh"
if [ ${#selected[@]} -eq 0 ]; then
    if [ -f "$SCRIPT" ] && [ "$SCRIPT" != bench/device/run.sh ]; then     # `run` is the bench study
        selected=("$WHAT"$'\t'"${FLOYDWARP_BENCH_SECONDS:-540}"$'\t'"sh $(printf '%q' "$SCRIPT")")
    else                                            # any study of floydwarp bench: the CLI refuses unknown ones
        selected=("$WHAT"$'\t'"${FLOYDWARP_BENCH_SECONDS:-540}"$'\t'"bench $(printf '%q' "$WHAT")")
    fi
fi

RESULTS="${RESULTS:-bench/results/$MACHINE-$(date +%Y%m%d-%H%M%S)}"
TOTAL="${FLOYDWARP_BENCH_SECONDS:-540}"
RESERVE=60                                          # kept for a report step at the end
START=$(date +%s)
export MACHINE RESULTS PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NetworkX finds the floydwarp backend through an entry point; without `pip install -e .` one is declared here.
ENTRY="${TMPDIR:-/tmp}/floydwarp-nx-entry"
DIST="$ENTRY/floydwarp_nx_entry-0.dist-info"
mkdir -p "$DIST"
printf 'Metadata-Version: 2.1\nName: floydwarp-nx-entry\nVersion: 0\n' > "$DIST/METADATA"
printf '[networkx.backends]\nfloydwarp = floydwarp.nx_backend:BackendInterface\n' \
    > "$DIST/entry_points.txt"
tree_path() { [ "$1" = before ] && echo "$BEFORE" || echo "$ROOT/src"; }

# command_of TREE NAME KIND ARGS...: the command line of one step, as words in CMD (TREE: this, before, after)
command_of() {
    local tree=$1 name=$2 kind=$3
    shift 3
    local out="$RESULTS/${name//:/-}"
    case $kind in
        bench)  CMD=("$PY" -m floydwarp bench "$@" "${OPTIONS[@]}" --out "$out") ;;
        script) CMD=("$PY" "bench/$1" "${@:2}" "${OPTIONS[@]}" --out "$out.json") ;;
        report) CMD=("$PY" -m floydwarp report "$RESULTS" -o docs/benchmarks.md "$@") ;;
        pytest) local envs=()
                while [ $# -gt 0 ] && [[ "$1" =~ ^[A-Z_]+= ]]; do envs+=("$1"); shift; done
                CMD=(env "${envs[@]}" "$PY" -m pytest -q -p no:cacheprovider "$@") ;;
        sh)     CMD=(bash "$@" "${OPTIONS[@]}") ;;
        *)      echo "run.sh: $PROFILE: unknown step kind '$kind'" >&2; exit 2 ;;
    esac
}

run_step() {      # run_step LIMIT TREE NAME KIND ARGS...
    local limit=$1 tree=$2 name=$3
    shift 3
    command_of "$tree" "$name" "$@"
    if [ -n "${DRY_RUN:-}" ]; then
        printf '%q ' "$tree" "$limit" "${CMD[@]}"; echo
        return 0
    fi
    local left=$(( TOTAL - ($(date +%s) - START) - RESERVE ))
    [ "$1" = report ] && left=$(( left + RESERVE ))
    [ "$left" -lt "$limit" ] && limit=$left
    if [ "$limit" -lt 15 ]; then
        echo "=== $name skipped: the run's $TOTAL s are spent (FLOYDWARP_BENCH_SECONDS)" | tee -a "$LOG"
        return 0
    fi
    if [ "$1" = bench ] && [ "$2" = scaling ] \
            && ! { command -v mpiexec >/dev/null && "$PY" -c 'from mpi4py import MPI' 2>/dev/null; }; then
        echo "=== $name skipped: no mpiexec or no loadable mpi4py (bench/README.md: MPI on the device)" | tee -a "$LOG"
        return 0
    fi
    echo "=== [$(( $(date +%s) - START )) s] $name (at most $limit s): ${CMD[*]}" | tee -a "$LOG"
    PYTHONPATH="$(tree_path "$tree"):$ENTRY${PYTHONPATH_REST:+:$PYTHONPATH_REST}" \
        timeout --signal=INT --kill-after=15 "$limit" "${CMD[@]}" 2>&1 | tee -a "$LOG"
    local rc=${PIPESTATUS[0]}
    case $rc in
        0) ;;
        124|130|137) echo "=== $name: stopped at $limit s; the records made so far are kept" | tee -a "$LOG" ;;
        *) echo "=== $name: failed with exit status $rc" | tee -a "$LOG"; FAILED=1 ;;
    esac
}

PYTHONPATH_REST="${PYTHONPATH:-}"
FAILED=0
LOG=/dev/null
if [ -z "${DRY_RUN:-}" ]; then
    mkdir -p "$RESULTS"
    LOG="$RESULTS/run.log"
    { echo "floydwarp measurements $(date -u +%FT%TZ): $WHAT on $MACHINE into $RESULTS${BEFORE:+, before = $BEFORE}"
      if command -v nvidia-smi >/dev/null; then
          nvidia-smi -L 2>&1
          nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv 2>&1
      fi
      echo "host: $(nproc) cores"
      PYTHONPATH="$ROOT/src" "$PY" -m floydwarp info 2>&1; } | tee -a "$LOG"
fi
for entry in "${selected[@]}"; do
    IFS=$'\t' read -r name limit line <<< "$entry"
    eval "words=($line)"                              # the profile's words, quoted by step()
    if [ -n "${BEFORE:-}" ] && [ "${words[0]}" != pytest ] && [ "${words[0]}" != report ]; then
        for round in $(seq 1 "${ROUNDS:-2}"); do      # alternate the order: neither tree always goes first
            trees="before after"; [ $(( round % 2 )) -eq 0 ] && trees="after before"
            for tree in $trees; do run_step "$limit" "$tree" "$name-$tree-$round" "${words[@]}"; done
        done
    else
        run_step "$limit" this "$name" "${words[@]}"
    fi
done
[ -n "${DRY_RUN:-}" ] && exit 0
echo "=== done in $(( $(date +%s) - START )) s; results in $RESULTS" | tee -a "$LOG"

if [ -n "${OUT:-}" ]; then
    if [[ "$RESULTS" == /* ]]; then items=(-C "$(dirname "$RESULTS")" "$(basename "$RESULTS")")
    else items=(-C "$ROOT" "$RESULTS")               # extract with -C <repository root>
    fi
    if grep -q "floydwarp report" "$LOG" && [ -f docs/benchmarks.md ]; then
        items+=(-C "$ROOT" docs/benchmarks.md)
        [ -d docs/benchmarks ] && items+=(docs/benchmarks)
    fi
    mkdir -p "$OUT"
    tar -czf "$OUT/bench-$MACHINE.tar.gz" "${items[@]}"
    cp "$LOG" "$OUT/run.log"
    ls -la "$OUT"
fi
exit "$FAILED"
