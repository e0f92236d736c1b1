#!/usr/bin/env bash
# Recipe pixel_tmaze: T-Maze learned from pixels (envs/pixel_tmaze.py, PixelTMaze-v0: 24x24 RGB frames, corridor 10,
# the cue in the first frame only) through the scripts' default CNN (below 36 px: 3x3 convs of 8, 16, 16 channels at
# strides 2, 2, 1), transformer (2 seeds side by side, one thread each) against ff (no memory, one seed), on the 2-core
# CPU. The T-Maze recipe of benchmarks/memory.sh (AMAGO's examples/04_tmaze.py) with H = 10: reward x100, gamma
# 0.9999, max_seq_len = H + 1 (the whole episode in context), eps 0.5/H in the corridor (--exploration
# envs.tmaze:TMazeEpsilonGreedy), argmax actions in training and eval (--train-greedy), eps_end 0.01, no revisit
# count; no augmentation (a shift of a few pixels would move the agent by cells on this 2-pixel-per-cell map).
# Targets: transformer greedy success >= 0.9 over 400 eval episodes (eval return >= 0.9 implies it: penalties are
# <= 0), 20 min each; ff's success stays near 0.5 for its 20 min (it reaches the junction but cannot remember the cue:
# 0.5 +- 0.025 over 400 episodes).
# Runs: pixel_tmaze_transformer_s{1,2}, pixel_tmaze_ff, recorded in benchmarks/results/pixel_tmaze/ (the same recipe
# with a two-conv (8, 16) CNN: results/archive/pixel_tmaze/). A rerun never replaces them: OVERWRITE=1 does,
# TAG=check_ writes under the recipe check_pixel_tmaze instead.
# The RESULT line's `last_evals` holds the last three values of each eval metric (eval/PixelTMaze-v0/success, ...).
# Usage: SEEDS="1 2" bash benchmarks/pixel_tmaze.sh [transformer|ff|all]
#   MINUTES=3 TAG=check_ EXTRA="--eval-interval 4" bash benchmarks/pixel_tmaze.sh transformer   # a short check
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
if [[ ! $what =~ ^(transformer|ff|all)$ ]]; then
  echo "usage: bash benchmarks/pixel_tmaze.sh [transformer|ff|all], got '$what'" >&2
  exit 2
fi
extra=${EXTRA:-}  # appended to every command (a later flag overrides an earlier one)
tag=${TAG:-}  # prefix of the recipe and run names
over=${OVERWRITE:+--overwrite}
minutes=${MINUTES:-20}

run() {  # $1: encoder, $2: run name, $3: run.py's own options, then the script's
  local enc=$1 name=$2 opts=$3
  shift 3
  OMP_NUM_THREADS=1 python benchmarks/run.py --minutes "$minutes" --recipe ${tag}pixel_tmaze --name $tag$name $over $opts -- "$@" \
    --env-id envs:PixelTMaze-v0 --traj-encoder $enc --exploration envs.tmaze:TMazeEpsilonGreedy --train-greedy \
    --reward-multiplier 100 --gamma 0.9999 --max-seq-len 11 --traj-save-len 11 --timesteps-per-epoch 11 \
    --batches-per-epoch 50 --total-timesteps 60000 --eps-anneal-steps 1500 --eps-end 0.01 \
    --eval-interval 20 --eval-episodes 400 --eps-revisit-power 0 $extra
}

if [[ $what == transformer || $what == all ]]; then
  for seed in ${SEEDS:-1 2}; do  # side by side
    run transformer pixel_tmaze_transformer_s$seed "--target 0.9" --seed $seed &
  done
  wait
fi
if [[ $what == ff || $what == all ]]; then
  run ff pixel_tmaze_ff ""
fi
