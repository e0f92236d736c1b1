#!/usr/bin/env bash
# Classic control recipes (README, "Results"; benchmarks/README.md). AMAGO's structure is kept everywhere (7 gammas
# acting on the last, 4 critics / 2 for TD, PopArt, both actor terms, rl2 inputs, max_seq_len 32). Each recipe
# writes runs named <recipe>_<encoder>[_s<seed>] and records them in benchmarks/results/<recipe>/.
#   cartpole     CartPole-v1, transformer and gru, seeds 1-3, <= 30 min each, target 475. AMAGO's update unchanged
#                (n_step 1, tau 0.003, reward_multiplier 10). tau 0.003 moves the target critic 0.3% of the way per
#                update, so the critic's horizon grows ~1 step per 333 updates: updates per minute count. So smaller
#                sizes (batch 8, one encoder layer, 64-wide MLPs, d_ff 128), lr 1e-3 annealed linearly to 0 over
#                57,600 updates, 32 actors, and the transformer's learned time table cut to one row (no absolute
#                time, which CartPole has no use for). One encoder or seed alone:
#                ENCS="gru" SEEDS="2" bash benchmarks/classic_control.sh cartpole
#   pendulum     Pendulum-v1, transformer, <= 60 min, target -250. --critic-hidden 64: the Box critic runs over
#                B*L*7 gamma rows per critic; at width 64 an update takes 91 ms instead of 159 ms (benchmarks/speed.py).
#   lunarlander  LunarLander-v2 with the defaults (the README's command), curve to 120 min, target 100.
#   lunarlander_alone  the same command alone on the machine (nothing else running), seeds 1 and 2 one after the
#                other, curve to 35 min, target 200, with torch's default threads as the user's command gets them
#                (OMP_NUM_THREADS unset: 2 here). --seed 1 is the default, so seed 1 is the command as typed.
#                MACHINE=xeon names the runs lunarlander_alone_xeon_transformer_s<seed>: the same command recorded on
#                a second processor (an Intel Xeon, beside the AMD EPYC of the first runs).
# cartpole and pendulum stop at the first eval at or above the target (--stop-at-target); lunarlander runs 120 min.
# A recipe never replaces its recorded results: OVERWRITE=1 does, TAG=check_ writes under another recipe name.
# Usage: bash benchmarks/classic_control.sh [cartpole|pendulum|lunarlander|all|lunarlander_alone]
#   MINUTES=2 TAG=check_ bash benchmarks/classic_control.sh pendulum     # a short check of the commands
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case $what in
cartpole | pendulum | lunarlander | all | lunarlander_alone) ;;
*) echo "unknown recipe '$what': cartpole pendulum lunarlander all lunarlander_alone" >&2; exit 2 ;;
esac
tag=${TAG:-}  # prefix of the recipe and run names
over=${OVERWRITE:+--overwrite}
run() {  # run RECIPE NAME MINUTES RUN_PY_FLAGS... -- SCRIPT_FLAGS...
  local recipe=$tag$1 name=$tag$2 minutes=${MINUTES:-$3}; shift 3
  python benchmarks/run.py --minutes "$minutes" --recipe "$recipe" --name "$name" $over "$@"
}
if [[ $what == cartpole || $what == all ]]; then
  for enc in ${ENCS:-transformer gru}; do
    for seed in ${SEEDS:-1 2 3}; do
      run cartpole cartpole_${enc}_s$seed 30 --target 475 --stop-at-target -- \
        --env-id CartPole-v1 --traj-encoder $enc --seed $seed --num-envs 32 --eval-interval 5 --anneal-lr \
        --learning-rate 1e-3 --pos-emb learned --max-time-idx 1 --total-timesteps 921600 --eps-anneal-steps 1440 \
        --batch-size 8 --n-layers 1 --critic-hidden 64 --actor-hidden 64 --tstep-hidden 64 --d-ff 128 \
        --batches-per-epoch 200
    done
  done
fi
if [[ $what == pendulum || $what == all ]]; then
  run pendulum pendulum_transformer 60 --target -250 --stop-at-target -- \
    --env-id Pendulum-v1 --traj-encoder transformer --total-timesteps 100000 --eps-anneal-steps 3750 --eval-interval 5 \
    --critic-hidden 64
fi
if [[ $what == lunarlander || $what == all ]]; then
  run lunarlander lunarlander_transformer 120 --target 100 -- --env-id LunarLander-v2 --traj-encoder transformer
fi
if [[ $what == lunarlander_alone ]]; then  # not in `all`: the machine to itself
  unset OMP_NUM_THREADS
  for seed in ${SEEDS:-1 2}; do  # one run after the other, never two at once
    run lunarlander_alone lunarlander_alone_${MACHINE:+${MACHINE}_}transformer_s$seed 35 --target 200 -- \
      --env-id LunarLander-v2 --traj-encoder transformer --seed $seed
  done
fi
