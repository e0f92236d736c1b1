#!/usr/bin/env bash
# Recipe popgym: POPGym RepeatPreviousEasy (envs/popgym_env.py). Each of the 51 steps deals a card; from the 4th on,
# the agent must name the suit of the card dealt 4 steps earlier (+-1/48 per step, returns in [-1, 1], random ~ -0.5).
# Target: greedy eval return >= 0.9 (>= 95% of the calls right) over 104 episodes (13 per eval actor) within 90 min on
# the 2-core CPU; the run stops at the first such eval.
#   --max-seq-len 64 holds a whole episode (52 timesteps) and each episode is saved as one file, so every training
#             window is a full episode from its first card: the answer is always in context (pure recall).
#   AMAGO's structure and the scripts' CPU defaults otherwise (lr 6e-4, reward multiplier 10, tau 0.003; the reference's POPGym
#   example: lr 1e-4, multiplier 100, tau 0.0025, which learned 4x slower on LunarLander at these sizes).
#   --eps-anneal-steps 2500: exploration anneals over 20k env steps (8 actors); 90 min ends the run first.
# Run: popgym_transformer, recorded in benchmarks/results/popgym/. A rerun never replaces it: OVERWRITE=1 does,
# TAG=check_ writes under the recipe check_popgym instead.
# Usage: bash benchmarks/popgym.sh
#   MINUTES=2 TAG=check_ bash benchmarks/popgym.sh     # a short check of the command
# --padded-sampling none: these runs were recorded when none was the scripts' default (now right).
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${TAG:-}  # prefix of the recipe and run names
python benchmarks/run.py --minutes "${MINUTES:-90}" --recipe ${tag}popgym --name ${tag}popgym_transformer \
  ${OVERWRITE:+--overwrite} --target 0.9 --stop-at-target -- \
  --env-id envs:PopGym-RepeatPreviousEasy-v0 --traj-encoder transformer --max-seq-len 64 --total-timesteps 200000 \
  --eps-anneal-steps 2500 --eval-interval 2 --eval-episodes 100 --padded-sampling none \
  --batches-per-epoch 200
