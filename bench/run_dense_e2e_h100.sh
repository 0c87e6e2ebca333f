#!/usr/bin/env bash
# Issue #22 on one H100: the user's whole call from a host float64 matrix (Graph.from_dense, then
# solve on the GPU), for the tree in before-src.tar.gz (git archive REV src | gzip) and this one,
# alternated; SIZES (default 16384,32768).  Results under $OUT.
set -u
mkdir -p /tmp/before && tar xzf before-src.tar.gz -C /tmp/before
for tree in before after; do
    src=src; [ "$tree" = before ] && src=/tmp/before/src
    PYTHONPATH=$src python3 bench/e2e_gpu.py --input dense --sizes "${SIZES:-16384,32768}" --dtypes int32 \
        --repeats 3 --out "$OUT/e2e-dense-$tree-h100.json" | cut -c1-300
done
