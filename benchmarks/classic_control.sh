#!/usr/bin/env bash
# Issue-2 benchmarks: CartPole (transformer and gru, 3 seeds, <= 30 min each), Pendulum (transformer, <= 60 min),
# LunarLander with our user's exact command (curve to 120 min). AMAGO's structure is kept everywhere (7 gammas acting
# on the last, 4 critics / 2 for TD, PopArt, both actor terms, rl2 inputs, max_seq_len 32). Besides the budget, the
# eval cadence and the exploration anneal (scaled to the budget):
#   CartPole  --n-step 3 --tau 0.01: with 1-step targets and tau 0.003, gamma=0.999's value grows by only ~10 raw
#             units per ~1/tau updates, so inside a CPU budget it sees ~30 steps ahead and CartPole fails by letting
#             the cart drift off the track (README, "Results"). This goes beyond "sizes, lr, schedule, exploration":
#             n_step is an option of AMAGO's Agent, not its default. Target missed on 3 of the 4 seeds run so far.
#   Pendulum  --critic-hidden 64: the Box critic runs over B*L*7 gamma rows per critic; at width 64 an update
#             takes 91 ms instead of 159 ms (benchmarks/speed.py, alone on 2 cores).
# CartPole and Pendulum stop at the first eval at or above the target (--stop-at-target); LunarLander runs its full
# 120 minutes.
# Usage: bash benchmarks/classic_control.sh [cartpole|pendulum|lunarlander|all]
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
if [[ $what == cartpole || $what == all ]]; then
  for enc in transformer gru; do
    for seed in 1 2 3; do
      python benchmarks/run.py --minutes 30 --name cartpole_${enc}_s${seed} --target 475 --stop-at-target -- \
        --env-id CartPole-v1 --traj-encoder $enc --seed $seed --total-timesteps 60000 --eps-anneal-frac 0.3 \
        --eval-interval 5 --n-step 3 --tau 0.01
    done
  done
fi
if [[ $what == pendulum || $what == all ]]; then
  python benchmarks/run.py --minutes 60 --name pendulum_transformer --target -250 --stop-at-target -- \
    --env-id Pendulum-v1 --traj-encoder transformer --total-timesteps 100000 --eps-anneal-frac 0.3 --eval-interval 5 \
    --critic-hidden 64
fi
if [[ $what == lunarlander || $what == all ]]; then
  python benchmarks/run.py --minutes 120 --name lunarlander_default --target 100 -- --env-id LunarLander-v2 --traj-encoder transformer
fi
