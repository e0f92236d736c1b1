#!/usr/bin/env bash
# MazeRunner (envs:MazeRunner-v0, the reference's relabeling example): reach 3 goal cells in order in a random 11x11
# maze, 250 steps; +1 per goal. With and without hindsight relabeling (--relabel envs.mazerunner:relabel_some, AMAGO
# Alg. 1), side by side, one thread each. The CPU's budget: a 64-step context (the reference: the whole 250-step
# episode), whole episodes saved (--traj-save-len 251); everything else at the defaults.
# Usage: bash benchmarks/mazerunner.sh          (SEED=1, MINUTES=40)
#   MINUTES=2 TAG=check_ bash benchmarks/mazerunner.sh     # a short check of the commands
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${TAG:-}
recipe=${tag}mazerunner
seed=${SEED:-1}
if [[ ! -e benchmarks/results/$recipe/${recipe}_random.json ]]; then
  OMP_NUM_THREADS=1 python benchmarks/random_baseline.py --env-id envs:MazeRunner-v0 --episodes 64 \
    --record "benchmarks/results/$recipe/${recipe}_random.json" | tail -n 1
fi
for relabel in none some; do
  flag=()
  if [[ $relabel == some ]]; then flag=(--relabel envs.mazerunner:relabel_some); fi
  OMP_NUM_THREADS=1 python benchmarks/run.py --minutes "${MINUTES:-40}" --recipe "$recipe" \
    --name "${recipe}_relabel_${relabel}_s$seed" ${OVERWRITE:+--overwrite} -- \
    --env-id envs:MazeRunner-v0 --max-seq-len 64 --traj-save-len 251 --seed "$seed" "${flag[@]}" ${EXTRA:-} &
done
wait
