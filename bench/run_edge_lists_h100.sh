#!/usr/bin/env bash
# Issue #22 on one H100: Graph.from_edges (16 cores) and the user's whole call from host edge arrays,
# in the generator's order and shuffled, for the tree in before-src.tar.gz (git archive REV src | gzip)
# and this one (TREES="after" measures this one only).  Results under $OUT.
set -u
if [ -f before-src.tar.gz ]; then mkdir -p /tmp/before && tar xzf before-src.tar.gz -C /tmp/before; fi
nproc > "$OUT/host.txt"
for tree in ${TREES:-before after}; do
    src=src; [ "$tree" = before ] && src=/tmp/before/src
    PYTHONPATH=$src python3 bench/edge_list_build.py --repeats 3 --out "$OUT/edge-list-build-$tree-h100.json"
    for order in sorted shuffled; do
        PYTHONPATH=$src python3 bench/e2e_gpu.py --sizes 32768 --dtypes int32 --repeats 3 --order "$order" \
            --out "$OUT/e2e-edges-$tree-$order-h100.json" | cut -c1-400
    done
done
