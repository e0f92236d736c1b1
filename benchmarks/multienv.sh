#!/usr/bin/env bash
# Recipe multienv: one amago_multitask.py run over three env ids at once (--env-id a,b,c: the 8 actors take them
# round-robin, 3 / 3 / 2), the bandit of the multitask recipe split into one id per reward scale:
# MultiScaleBandit-x1-v0, -x10-v0, -x100-v0 (envs/multiscale.py). Eval runs the same three ids and logs each one
# apart (eval/<env>/success); run.py --per-env writes them to benchmarks/results/multienv/<run>_per_env.csv, which
# plot.py draws as one curve per env. Flags as the multitask recipe (benchmarks/multitask.sh), 25 minutes.
# Target: success >= 0.9 on every env (a policy that does not adapt: ~1/3).
# Usage: bash benchmarks/multienv.sh          MINUTES=2 TAG=check_ bash benchmarks/multienv.sh  (a short check)
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${TAG:-}
export OMP_NUM_THREADS=1
ids=envs:MultiScaleBandit-x1-v0,envs:MultiScaleBandit-x10-v0,envs:MultiScaleBandit-x100-v0
python benchmarks/run.py --minutes "${MINUTES:-25}" --script amago_multitask.py --recipe ${tag}multienv \
  --name ${tag}multienv_amago2_s1 --per-env success ${OVERWRITE:+--overwrite} -- \
  --env-id $ids --traj-encoder transformer --seed 1 --max-seq-len 8 --traj-save-len 8 --timesteps-per-epoch 24 \
  --batches-per-epoch 48 --total-timesteps 200000 --eps-anneal-steps 2500 --critic-hidden 64 --eval-interval 10 \
  --eval-episodes 96 --eps-revisit-power 0
