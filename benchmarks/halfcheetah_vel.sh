#!/usr/bin/env bash
# HalfCheetah-Vel (envs:HalfCheetahVel-v0): a hidden target velocity v* ~ U[0, 3] per 1000-step episode, reward
# -|v - v*| - 0.05 |a|^2. The reference's example (gamma 0.99, reward multiplier 1, tau 0.005, lr 3e-4, grad clip 2,
# a 32-step context) at the CPU's sizes: the critic at width 64 and noise annealed over 30,000 env steps, as the
# DMC cheetah-run recipe. Memory (transformer) against memory-free (ff), side by side, one thread each, so both get
# the same share of the machine; the eval logs the env's metric, the target-velocity error over the final 50 steps
# (--per-env). Baselines: the uniform-random policy (random_baseline.py), and velocity-blind running: the best single
# speed for v* ~ U[0, 3] is 1.5, whose expected error E|1.5 - v*| is 0.75 (no policy that ignores v* does better).
# The budget is counted in env steps (STEPS, default 120,000: 120 episodes, ~29,000 updates at the 32-step context), so
# the verdict does not depend on what else shares the machine; MINUTES only caps the wall clock.
# Usage: bash benchmarks/halfcheetah_vel.sh          (ENCS="transformer ff", SEED=1, STEPS=120000, MINUTES=170)
#   MINUTES=2 TAG=check_ bash benchmarks/halfcheetah_vel.sh     # a short check of the commands
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${TAG:-}
recipe=${tag}halfcheetah_vel
seed=${SEED:-1}
metric="target velocity error (final 50 steps)"
if [[ ! -e benchmarks/results/$recipe/${recipe}_random.json ]]; then
  OMP_NUM_THREADS=1 python benchmarks/random_baseline.py --env-id envs:HalfCheetahVel-v0 --episodes 16 \
    --record "benchmarks/results/$recipe/${recipe}_random.json" | tail -n 1
fi
if [[ ! -e benchmarks/results/$recipe/${recipe}_baselines.json ]]; then  # the velocity-blind best, computed
  python - "benchmarks/results/$recipe/${recipe}_baselines.json" <<'EOF'
import json, sys
import numpy as np
targets = np.linspace(0, 3, 30001)  # v* ~ U[0, 3], the env's task range
speeds = np.linspace(0, 3, 301)  # a policy blind to v* can at best hold one speed
error = np.abs(speeds[:, None] - targets[None]).mean(1)  # E|speed - v*| for each speed
best = {"speed": round(float(speeds[error.argmin()]), 2), "target velocity error (final 50 steps)": round(float(error.min()), 4)}
json.dump({"env_id": "envs:HalfCheetahVel-v0", "velocity_blind": best}, open(sys.argv[1], "w"), indent=1)
print("velocity-blind best:", best)
EOF
fi
for enc in ${ENCS:-transformer ff}; do
  OMP_NUM_THREADS=1 python benchmarks/run.py --minutes "${MINUTES:-170}" --recipe "$recipe" \
    --name "${recipe}_${enc}_s$seed" --per-env "$metric" ${OVERWRITE:+--overwrite} -- \
    --env-id envs:HalfCheetahVel-v0 --traj-encoder "$enc" --seed "$seed" --total-timesteps "${STEPS:-120000}" \
    --gamma 0.99 --reward-multiplier 1 --tau 0.005 --learning-rate 3e-4 --grad-clip 2 \
    --critic-hidden 64 --eps-anneal-steps 3750 --eval-episodes 8 &
done
wait
