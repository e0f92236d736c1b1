#!/usr/bin/env bash
# HalfCheetah-Vel (envs:HalfCheetahVel-v0): a hidden target velocity v* ~ U[0, 3] per 1000-step episode, reward
# -|v - v*| - 0.05 |a|^2. At the defaults; the evaluation runs on one fixed, even set of targets, the midpoints of 8
# equal bins of [0, 3] (envs:HalfCheetahVel-Even8-v0: 0.19, 0.56, ..., 2.81, one per actor of the 8-actor eval),
# and logs the env's metric, the target-velocity error over the final 50 steps (--per-env). Memory (transformer)
# against memory-free (ff: it still reads the last reward, a one-step memory), side by side, one thread each.
# Baselines on the same set: the uniform-random policy (random_baseline.py), holding still (--policy zero) and the
# best velocity-blind speed: any speed in [1.3125, 1.6875] has mean error 0.75 on the 8 targets, and none does better.
# The budget is counted in env steps (STEPS, default 160,000: 160 episodes per run), so the verdict does not depend on
# what else shares the machine; MINUTES only caps the wall clock.
# Usage: bash benchmarks/halfcheetah_vel.sh          (ENCS="transformer ff", SEED=1, STEPS=160000, MINUTES=170)
#   MINUTES=2 TAG=check_ bash benchmarks/halfcheetah_vel.sh     # a short check of the commands
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${TAG:-}
recipe=${tag}halfcheetah_vel
seed=${SEED:-1}
metric="target velocity error (final 50 steps)"
eval_id=envs:HalfCheetahVel-Even8-v0
for policy in uniform_random zero; do
  name=${recipe}_${policy/uniform_/}  # halfcheetah_vel_random, halfcheetah_vel_zero
  if [[ ! -e benchmarks/results/$recipe/$name.json ]]; then
    OMP_NUM_THREADS=1 python benchmarks/random_baseline.py --env-id $eval_id --episodes 16 --policy $policy \
      --record "benchmarks/results/$recipe/$name.json" | tail -n 1
  fi
done
if [[ ! -e benchmarks/results/$recipe/${recipe}_baselines.json ]]; then  # the velocity-blind best, computed
  python - "benchmarks/results/$recipe/${recipe}_baselines.json" <<'PY'
import json, sys
import numpy as np
from envs import EVEN_TARGETS  # the eval set
speeds = np.linspace(0, 3, 3001)  # a policy blind to v* can at best hold one speed
error = np.abs(speeds[:, None] - np.array(EVEN_TARGETS)[None]).mean(1)  # mean |speed - v*| over the eval set
best = {"speed": round(float(speeds[error.argmin()]), 2), "target velocity error (final 50 steps)": round(float(error.min()), 4)}
json.dump({"env_id": "envs:HalfCheetahVel-Even8-v0", "velocity_blind": best}, open(sys.argv[1], "w"), indent=1)
print("velocity-blind best:", best)
PY
fi
for enc in ${ENCS:-transformer ff}; do
  OMP_NUM_THREADS=1 python benchmarks/run.py --minutes "${MINUTES:-170}" --recipe "$recipe" \
    --name "${recipe}_${enc}_s$seed" --per-env "$metric" ${OVERWRITE:+--overwrite} -- \
    --env-id envs:HalfCheetahVel-v0 --eval-env-id $eval_id --traj-encoder "$enc" --seed "$seed" \
    --total-timesteps "${STEPS:-160000}" --eval-episodes 8 ${EXTRA:-} &
done
wait
