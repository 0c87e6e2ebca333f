# The 2-core development box (no GPU): the steps of bench/device/run.sh (sourced by it; the step syntax is in
# h100.sh).  The box is shared: the run holds /tmp/fw-cpu.lock (LOCK= runs without it).
LOCK=${LOCK-/tmp/fw-cpu.lock}
ALL="startup small inputs sizes threads"
# the README's main job as a process, warm and first run after install, the floor, each kernel's cold compile
step startup          600 bench startup --n 2048 -p 25 -s 1 -r 7
# microseconds a call on small graphs against SciPy (the README's small-graph table)
step small            300 bench small -p 30 -r 5
# edge arrays and text edge lists to graphs, and the generator
step inputs           300 bench inputs --sizes 32768 -p 1 -r 5
# the compute rates (one process; the in-process part of an A/B of two trees)
step sizes            300 bench sizes --backend cpu -a blocked --sizes 2048 --dtype int32,int16,float32 -r 7 --no-scipy
step threads          120 bench threads --n 2048 -r 3
