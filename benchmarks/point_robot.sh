#!/usr/bin/env bash
# Sparse Point Robot (envs:SparsePointRobot-v0): a goal hidden on the upper half circle, reward only within 0.2 of it,
# 3 attempts of 60 steps at one goal per rollout. The whole 180-step rollout in context (--max-seq-len 180), so that
# later attempts can read where the first one found the goal; everything else at the defaults. Memory (transformer)
# against memory-free (ff), side by side, one thread each. Baselines (benchmarks/probes/point_robot_baselines.py):
# uniform random steps, a memory-free sweep of the circle that stops on reward, and search-then-return.
# NOISE=pink runs the same with pink Box noise (--exploration benchmarks.probes.pink_noise:pink), named *_pink_*.
# WIDTH=64 runs the same with the critic at width 64 (--critic-hidden 64, as every other Box recipe), named *_critic64_*.
# ONE_GAMMA=1 runs the same with one discount (--multigammas with none: only --gamma), named *_one_gamma_*.
# Usage: bash benchmarks/point_robot.sh          (ENCS="transformer ff", SEED=1, MINUTES=60)
#   MINUTES=2 TAG=check_ bash benchmarks/point_robot.sh     # a short check of the commands
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${TAG:-}
recipe=${tag}point_robot
seed=${SEED:-1}
if [[ ! -e benchmarks/results/$recipe/${recipe}_baselines.json ]]; then
  OMP_NUM_THREADS=1 python benchmarks/probes/point_robot_baselines.py --record \
    "benchmarks/results/$recipe/${recipe}_baselines.json" | tail -n 1
fi
variant=() suffix=""  # a variant's flags and name suffix
if [[ ${NOISE:-white} == pink ]]; then variant=(--exploration benchmarks.probes.pink_noise:pink) suffix=_pink; fi
if [[ -n ${WIDTH:-} ]]; then variant+=(--critic-hidden "$WIDTH") suffix=${suffix}_critic$WIDTH; fi
if [[ -n ${ONE_GAMMA:-} ]]; then variant+=(--multigammas) suffix=${suffix}_one_gamma; fi
for enc in ${ENCS:-transformer ff}; do
  OMP_NUM_THREADS=1 python benchmarks/run.py --minutes "${MINUTES:-60}" --recipe "$recipe" \
    --name "${recipe}${suffix}_${enc}_s$seed" ${OVERWRITE:+--overwrite} -- \
    --env-id envs:SparsePointRobot-v0 --traj-encoder "$enc" --max-seq-len 180 --seed "$seed" "${variant[@]}" ${EXTRA:-} &
done
wait
