#!/usr/bin/env bash
# Issue-2 benchmarks: CartPole (transformer and gru, 3 seeds, <= 30 min each), Pendulum (transformer, <= 60 min),
# LunarLander with our user's exact command (curve to 120 min). AMAGO's structure is kept everywhere (7 gammas acting
# on the last, 4 critics / 2 for TD, PopArt, both actor terms, rl2 inputs, max_seq_len 32). Besides the budget, the
# eval cadence and the exploration anneal (scaled to the budget):
#   CartPole  --padded-sampling right (the reference's option; its default is none): training windows may run past
#             an episode's end, so the step before a termination is sampled as often as any other. Without it that
#             step is in 1 of every T-31 windows, and the critic valued the step before the track's edge at ~33
#             where the truth is 1 (benchmarks/cartpole_edge_q.py; README, "What fixed CartPole"). Also 32 actors (4x the env steps per update), lr 1e-3 annealed
#             linearly to 0 over 96 epochs (19,200 updates, ~30 min) and the transformer's learned time table
#             cut to one row (a size: no absolute time, which CartPole has no use for). Outside "sizes, lr,
#             schedule, exploration", as documented deviations: --reward-multiplier 1 (the reference's own gym
#             example, 01_basic_gym, uses 1; the Agent's default is 10) and --n-step 3 --tau 0.01 (Agent options,
#             not its defaults). One encoder or seed alone: ENCS="gru" SEEDS="2" bash benchmarks/classic_control.sh cartpole
#   cartpole-amago  the same with AMAGO's Agent defaults n_step 1 and tau 0.003 (reward multiplier 1 and padded
#             sampling kept). tau 0.003 moves the target critic 0.3% of the way per update, so what counts is the
#             number of updates: --batch-size 8 (a size) runs ~20 updates/s with two runs on the 2 cores instead of
#             ~12, and lr 1e-3 anneals over 180 epochs (36,000 updates). Runs sat at ~100 until 21k-30k updates;
#             5 of 6 seeds met (README, "CartPole with AMAGO's n-step 1 and tau 0.003").
#   Pendulum  --critic-hidden 64: the Box critic runs over B*L*7 gamma rows per critic; at width 64 an update
#             takes 91 ms instead of 159 ms (benchmarks/speed.py, alone on 2 cores).
# CartPole and Pendulum stop at the first eval at or above the target (--stop-at-target); LunarLander runs its full
# 120 minutes.
# Usage: bash benchmarks/classic_control.sh [cartpole|cartpole-amago|pendulum|lunarlander|all]
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
# cartpole NAME_PREFIX FLAGS...: 3 seeds x {transformer, gru} with the flags both CartPole recipes share
cartpole() {
  local prefix=$1; shift
  for enc in ${ENCS:-transformer gru}; do
    for seed in ${SEEDS:-1 2 3}; do
      python benchmarks/run.py --minutes 30 --name ${prefix}_${enc}_s${seed} --target 475 --stop-at-target -- \
        --env-id CartPole-v1 --traj-encoder $enc --seed $seed --num-envs 32 --eval-interval 5 --anneal-lr \
        --learning-rate 1e-3 --reward-multiplier 1 --pos-emb learned --max-time-idx 1 --padded-sampling right "$@"
    done
  done
}
if [[ $what == cartpole || $what == all ]]; then
  cartpole cartpole --total-timesteps 307200 --eps-anneal-frac 0.15 --n-step 3 --tau 0.01
fi
if [[ $what == cartpole-amago ]]; then
  cartpole cartpole_amago --total-timesteps 576000 --eps-anneal-frac 0.08 --batch-size 8
fi
if [[ $what == pendulum || $what == all ]]; then
  python benchmarks/run.py --minutes 60 --name pendulum_transformer --target -250 --stop-at-target -- \
    --env-id Pendulum-v1 --traj-encoder transformer --total-timesteps 100000 --eps-anneal-frac 0.3 --eval-interval 5 \
    --critic-hidden 64
fi
if [[ $what == lunarlander || $what == all ]]; then
  python benchmarks/run.py --minutes 120 --name lunarlander_default --target 100 -- --env-id LunarLander-v2 --traj-encoder transformer
fi
