# One H100 (80 GB) with 16 host cores: the steps of bench/device/run.sh (sourced by it).
#   step GROUP[:NAME] LIMIT_S KIND ARGS...
# KIND bench: `floydwarp bench ARGS --out RESULTS/GROUP-NAME`; script: `python3 bench/SCRIPT ARGS --out
# RESULTS/GROUP-NAME.json`; report: `floydwarp report RESULTS -o docs/benchmarks.md ARGS`; pytest: `python -m
# pytest -q ARGS` (leading VAR=VALUE words are its environment); sh: `bash ARGS` (a device script).

# ---- all: every study, about 8 minutes in one device call, then docs/benchmarks.md (was run_h100.sh)
ALL="ceilings sizes kernels block-size budget threads scaling breakdown report"
# the device's ceilings first: every later study finds them beside its --out and draws them
step ceilings          90 bench ceilings --backend cpu,gpu --dtype int16,int32
# time vs n for every algorithm, SciPy up to 1024; a case predicted over 2 s per solve ends its line
step sizes            170 bench sizes --backend cpu,gpu -a all --sizes 256,512,1024,2048,4096,8192,16384 \
                          --max-seconds 2 --scipy-max-n 1024 -r 3
# every GPU kernel at n = 8192 in three types: GB/s, relax/s, % of the ceilings, rooflines
step kernels          160 bench kernels --backend gpu --n 8192 --dtype int16,int32,float32 -r 2
# tile sizes, R (pseudo-blocked), threads per block (work-per-thread, grid-sync); then the CPU's tiles
step block-size:gpu    75 bench block-size --backend gpu --n 8192 -r 2
step block-size:cpu    30 bench block-size --backend cpu --n 2048 -r 2 -b 16,32,64,128,256
# the largest n within 2 s and 20 s on the GPU (graphs made on the device; memory caps it); 2 s on the CPU
step budget:gpu       110 bench budget --backend gpu --budgets 2,20 --graph device --n 4096
step budget:cpu        45 bench budget --backend cpu --budgets 2 --n 1024
step threads           45 bench threads --n 2048 -r 2
# MPI ranks, one thread each: strong at n = 2048, weak from it (skipped without mpiexec and mpi4py)
step scaling           90 bench scaling --ranks 1,2,4,8,16 --n 2048 -r 2
# file to file: read .in, h2d, phases 1-3, d2h, write .out
step breakdown         75 bench breakdown --backend cpu,gpu --sizes 2048,8192 -r 2
step report            90 report --title "floydwarp benchmarks: H100"

# ---- the recipes of bench/NOTES.md and docs/, one device call each.  Graphs built on the device (25 % of
# the pairs, weights 1..16), median of 3 after a warm-up.
GPU=(--backend gpu --graph device -r 3)
# pred: fast with predecessors against fast without and against predecessor_method=blocked (was run_pred_h100.sh)
step pred:16384       150 bench sizes "${GPU[@]}" -a fast,blocked --sizes 16384 --dtype int16,int32,float32 \
                          -O predecessors=true
step pred:fast        200 bench sizes "${GPU[@]}" -a fast --sizes 16384,32768 --dtype int16,int32,float32 \
                          -O predecessors=true
step pred:nopred      150 bench sizes "${GPU[@]}" -a fast --sizes 16384,32768 --dtype int16,int32,float32
step pred:blocked     100 bench sizes "${GPU[@]}" -a fast --sizes 16384 --dtype int16,int32,float32 \
                          -O predecessors=true -O predecessor_method=blocked
# witness: witness predecessors against keys and the blocked kernels, and what they cost (was run_witness_h100.sh)
step witness:phases-int16        120 bench block-size "${GPU[@]}" -a fast --n 16384 --dtype int16 \
                                     --sweep predecessor_method=witness,keyed -O predecessors=true -O phases=true
step witness:phases-float32-real 120 bench block-size "${GPU[@]}" -a fast --n 16384 --dtype float32 --real-weights \
                                     --sweep predecessor_method=witness,blocked -O predecessors=true -O phases=true
step witness:pred                150 bench sizes "${GPU[@]}" -a fast --no-scipy --sizes 16384,32768 \
                                     --dtype int16,int32 -O predecessors=true
step witness:nopred              120 bench sizes "${GPU[@]}" -a fast --no-scipy --sizes 16384,32768 --dtype int16,int32
step witness:real-pred           120 bench sizes "${GPU[@]}" -a fast --no-scipy --sizes 16384,32768 --dtype float32 \
                                     --real-weights -O predecessors=true
step witness:real-nopred         100 bench sizes "${GPU[@]}" -a fast --no-scipy --sizes 16384,32768 --dtype float32 \
                                     --real-weights
step witness:real-pred-f64       150 bench sizes "${GPU[@]}" -a fast --no-scipy --sizes 8192,16384 --dtype float64 \
                                     --real-weights -O predecessors=true
step witness:real-nopred-f64     120 bench sizes "${GPU[@]}" -a fast --no-scipy --sizes 8192,16384 --dtype float64 \
                                     --real-weights
# nonneg: float32 panel products on non-negative entries (was run_nonneg_h100.sh)
step nonneg:panel      60 bench panel --n 16384 --dtype int16,int32,float32,int64,float64
step nonneg:ceilings   60 bench ceilings --backend gpu --dtype int16,int32
step nonneg:signed    120 bench sizes "${GPU[@]}" -a fast --sizes 16384,32768 --dtype float32 -O nonneg_products=false
step nonneg:final     240 bench sizes "${GPU[@]}" -a fast,blocked --sizes 2048,16384,32768 --dtype int16,int32,float32 \
                          --scipy-max-n 2048
# p12: pivot closures by min-plus squaring, phase times per fast variant (was run_p12_h100.sh)
step p12:ceilings      60 bench ceilings --backend gpu --dtype int16,int32
step p12:phases       200 bench block-size "${GPU[@]}" -a fast --n 16384 --dtype int16,int32,float32 \
                          --sweep fast_variant=wide,pipe -O phases=true
step p12:final        300 bench sizes "${GPU[@]}" -a fast,blocked --sizes 1024,2048,16384,32768 \
                          --dtype int16,int32,float32 --scipy-max-n 2048
# budget60: seed 004's 60 s budget, int16, graph on the device, the doubling from 65536 (was run_budget60_h100.sh;
# from host edges: append --graph host -p 5; another dtype: --dtype int32)
step budget60         570 bench budget --backend gpu --dtype int16 --budgets 60 --n 65536 --graph device
# e2e: the user's whole call from host edges to a host Result, and seed 004's 2 s budget (was run_e2e_h100.sh;
# with BEFORE=old/src, e2e:gpu is the before/after of run_e2e_ab_h100.sh; append --input dense --sizes
# 16384,32768 --dtypes int32 for run_dense_e2e_h100.sh)
step e2e:tests        200 pytest -m gpu tests/test_gpu_transfer.py tests/test_gpu_host.py \
                          tests/test_gpu_dtype_bounds.py tests/test_batch_gpu.py
step e2e:gpu          150 script e2e_gpu.py --sizes 32768 --dtypes int32,int16 --repeats 3
step e2e:budget-device 120 bench budget --backend gpu --dtype int16,int32 --budgets 2 --n 16384 --graph device
step e2e:budget-host  120 bench budget --backend gpu --dtype int16,int32 --budgets 2 --n 16384 --graph host -p 5
# edges: building graphs from edge arrays on 16 cores, and the whole call from sorted and shuffled edges
# (was run_edge_lists_h100.sh)
step edges:build      200 bench inputs --sizes 32768 -p 1 -r 3
step edges:sorted     150 script e2e_gpu.py --sizes 32768 --dtypes int32 --repeats 3 --order sorted
step edges:shuffled   150 script e2e_gpu.py --sizes 32768 --dtypes int32 --repeats 3 --order shuffled
# networkx: the GPU tests of the backend, NetworkX's own tests through it, the study and every function's stages
# (was run_networkx_h100.sh)
step networkx:tests-bfs 75 pytest -m gpu tests/test_gpu_bfs.py
step networkx:tests   120 pytest -m gpu tests/test_metrics.py tests/test_nx_allpairs.py
step networkx:nx-tests 40 pytest NETWORKX_TEST_BACKEND=floydwarp NETWORKX_FALLBACK_TO_NX=1 --pyargs \
                          networkx.algorithms.shortest_paths networkx.algorithms.tests.test_distance_measures \
                          networkx.algorithms.centrality.tests.test_closeness_centrality \
                          networkx.algorithms.tests.test_wiener networkx.algorithms.tests.test_efficiency
step networkx:study   140 bench networkx --sizes 1000,5000,20000 -r 5 --max-seconds 3
step networkx:stages  120 bench networkx-stages --sizes 5000,20000
# learn: the GPU tests of the batch engine and the graph-learning drop-ins, then the batch study's PyG and
# learn sections on the GPU beside the CPU engines (Graphormer's Cython is not built there: docs/graph-learning.md
# takes the ratio against its 2-core time)
step learn:tests      120 pytest -m gpu tests/test_batch_gpu.py tests/test_learn_gpu.py tests/test_pyg.py \
                          tests/test_learn_graphormer.py tests/test_learn_dgl.py
step learn:study      150 bench batch --backend gpu,cpu --batches 1000,100000 -O parts=pyg,learn -O loop_max=1000 -r 5
