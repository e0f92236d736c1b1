#!/usr/bin/env bash
# Plain MuJoCo HalfCheetah (gymnasium HalfCheetah-v5, reward: forward speed - 0.1 |a|^2, 1000-step episodes) at the
# defaults: the transformer, 8 actors, 200 updates per 800 env steps, gamma 0.999, 100,000 env steps (24,600 updates),
# one thread. The bar: a greedy return of 2,000 by 100,000 env steps. Baselines: the uniform-random policy and holding
# still (random_baseline.py --policy zero). The budget is counted in env steps; MINUTES only caps the wall clock.
# Usage: bash benchmarks/halfcheetah.sh                 (SEED=1, STEPS=100000, MINUTES=150)
set -euo pipefail
cd "$(dirname "$0")/.."
recipe=halfcheetah
seed=${SEED:-1}
for policy in uniform_random zero; do
  name=${recipe}_${policy/uniform_/}  # halfcheetah_random, halfcheetah_zero
  if [[ ! -e benchmarks/results/$recipe/$name.json ]]; then
    OMP_NUM_THREADS=1 python benchmarks/random_baseline.py --env-id HalfCheetah-v5 --episodes 16 --policy $policy \
      --record "benchmarks/results/$recipe/$name.json" | tail -n 1
  fi
done
OMP_NUM_THREADS=1 python benchmarks/run.py --minutes "${MINUTES:-150}" --recipe $recipe \
  --name "${recipe}_transformer_s$seed" ${OVERWRITE:+--overwrite} -- \
  --env-id HalfCheetah-v5 --seed "$seed" --total-timesteps "${STEPS:-100000}"
