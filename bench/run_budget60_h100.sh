#!/usr/bin/env bash
# Seed 004's 60 s budget on the H100 (issue 22): `floydwarp bench budget --budgets 60`, graph on the
# device (25 % of the pairs), for the dtypes given (default int16), starting the doubling at n = 65536.
#   bash bench/run_budget60_h100.sh [DTYPES] [host]   ->  $OUT/budget-60s-<dtypes>-<graph>.json
set -u
cd "$(dirname "$0")/.."
OUTDIR="${OUT:-/tmp/budget60}"
mkdir -p "$OUTDIR"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
dtypes=${1:-int16}
graph=${2:-device}
percent=25
[ "$graph" = host ] && percent=1          # the host generator draws n^2 numbers: keep its edges few
name="budget-60s-${dtypes//,/-}-$graph"
python3 -m floydwarp bench budget --backend gpu --dtype "$dtypes" --budgets 60 --n 65536 --graph "$graph" \
    -p "$percent" --out "$OUTDIR/$name" 2>&1 | grep -vE "^ *$"
cp "$OUTDIR/$name/budget.json" "$OUTDIR/$name.json" && rm -rf "${OUTDIR:?}/$name"
