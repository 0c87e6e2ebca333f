#!/usr/bin/env bash
# Seed 004's 60 s budget on the H100 (issue 22): `floydwarp bench budget --budgets 60`, for the dtypes
# given (default int16), the graph on the device (25 % of the pairs) or from a host edge list (5 %, like
# the 2 s study: at n = 120,000 the edges are 17 GB of host memory, at 25 % they would be 86 GB), the
# doubling starting at START_N (default 65536; start ~2 % below the expected answer: the search then
# takes about 4-5 solves of ~60 s, one dtype per 600 s device call).
#   bash bench/run_budget60_h100.sh [DTYPES] [device|host] [START_N]  ->  $OUT/budget-60s-<dtypes>-<graph>.json
# The study saves its records as it goes: a run stopped by LIMIT (seconds, default 570) keeps them
# ("complete": false).
set -u
cd "$(dirname "$0")/.."
OUTDIR="${OUT:-/tmp/budget60}"
mkdir -p "$OUTDIR"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
dtypes=${1:-int16}
graph=${2:-device}
start_n=${3:-65536}
percent=25
[ "$graph" = host ] && percent=5
name="budget-60s-${dtypes//,/-}-$graph"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
timeout "${LIMIT:-570}" python3 -m floydwarp bench budget --backend gpu --dtype "$dtypes" --budgets 60 \
    --n "$start_n" --graph "$graph" -p "$percent" --out "$OUTDIR/$name" 2>&1 | grep -vE "^ *$"
cp "$OUTDIR/$name/budget.json" "$OUTDIR/$name.json" && rm -rf "${OUTDIR:?}/$name"
