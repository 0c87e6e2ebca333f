# Four H200 (or H100) GPUs of one host, NVLink, 64 host cores: the multi-GPU steps of bench/device/run.sh
# (sourced by it; the step syntax is h100.sh's).  One device call: `bash bench/device/run.sh multigpu h200x4`
# (about 8 minutes); h200x2 / h200x8 runs: pass --gpus 1,2 or 1,2,4,8 after the step name's options.

# ---- multigpu: the tests on every GPU, then issue 38's goal rows (strong at n = 32768 and 65536, weak from
# 41344, int16), each with 1, 2 and 4 GPUs in one run, the round timeline in every multi-GPU record
ALL="multigpu"
step multigpu:tests      150 pytest -m gpu tests/test_multigpu.py
step multigpu:strong-32k  60 bench scaling --gpus 1,2,4 --n 32768 --mode strong --dtype int32 -r 3 -p 5
step multigpu:strong-64k 200 bench scaling --gpus 1,2,4 --n 65536 --mode strong --dtype int32 -r 3 -p 1
step multigpu:weak       120 bench scaling --gpus 1,2,4 --n 41344 --mode weak --dtype int32 -r 3 -p 1
step multigpu:int16-64k 110 bench scaling --gpus 1,2,4 --n 65536 --mode strong --dtype int16 -r 3 -p 1
step multigpu:int16-32k  50 bench scaling --gpus 1,2,4 --n 32768 --mode strong --dtype int16 -r 3 -p 5
# the size run: int32 n = 131072 (69 GB) over the GPUs, checked by Bellman's equations on every entry and 16
# rows of SciPy's Dijkstra (was run_h200x8.sh's last step)
step size                140 script checked_run.py --n 131072 --backend multigpu --dijkstra 16
