#!/usr/bin/env bash
# Recipe pixel_tmaze: T-Maze learned from pixels (envs/pixel_tmaze.py, PixelTMaze-v0: 24x24 RGB frames, corridor 10,
# the cue in the first frame only), CNN timestep encoder, transformer against ff (no memory), <= 60 min each on the
# 2-core CPU. T-Maze recipe of benchmarks/memory.sh (AMAGO's examples/04_tmaze.py) with H = 10: reward x100,
# gamma 0.9999, max_seq_len = H + 1 (the whole episode in context), eps 0.5/H in the corridor (--exploration envs.tmaze:TMazeEpsilonGreedy),
# argmax actions in training and eval (--train-greedy), eps_end 0.01. The CNN is tiny for speed on 2 cores: Nature-
# style, 3x3 convs of 8 and 16 channels at stride 2 (24 -> 11 -> 5), no augmentation (a shift of a few pixels would
# move the agent by cells on this 2-pixel-per-cell map).
# Targets: transformer greedy success >= 0.9 over 400 eval episodes (eval return >= 0.9 implies it: penalties are
# <= 0), 30 min budget; ff success <= 0.6 at every eval of its 60 min (it reaches the junction but cannot remember the
# cue: 0.5 +- 0.025 over 400 episodes, so 0.6 is 4 sigma away).
# Runs: pixel_tmaze_{transformer,ff}, recorded in benchmarks/results/pixel_tmaze/. A rerun never replaces them:
# OVERWRITE=1 does, TAG=check_ writes under the recipe check_pixel_tmaze instead.
# The RESULT line's `last_evals` holds the last three values of each eval metric (eval/PixelTMaze-v0/success, ...).
# Usage: bash benchmarks/pixel_tmaze.sh [transformer|ff|all]
#   MINUTES=3 TAG=check_ EXTRA="--eval-interval 4" bash benchmarks/pixel_tmaze.sh transformer   # a short check
# --padded-sampling none: these runs were recorded when none was the scripts' default (now right).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
extra=${EXTRA:-}  # appended to every command (a later flag overrides an earlier one)
tag=${TAG:-}  # prefix of the recipe and run names
over=${OVERWRITE:+--overwrite}


for enc in transformer ff; do
  if [[ $what == "$enc" || $what == all ]]; then
    target=$([[ $enc == transformer ]] && echo "--target 0.9" || true)
    minutes=${MINUTES:-$([[ $enc == transformer ]] && echo 30 || echo 60)}
    python benchmarks/run.py --minutes "$minutes" --recipe ${tag}pixel_tmaze --name ${tag}pixel_tmaze_$enc $over $target -- \
      --env-id envs:PixelTMaze-v0 --traj-encoder $enc --tstep-encoder cnn --cnn nature --cnn-channels 8 16 \
      --cnn-kernels 3 3 --cnn-strides 2 2 --exploration envs.tmaze:TMazeEpsilonGreedy --train-greedy \
      --reward-multiplier 100 --gamma 0.9999 --max-seq-len 11 --traj-save-len 11 --timesteps-per-epoch 11 \
      --batches-per-epoch 50 --total-timesteps 60000 --eps-anneal-steps 1500 --eps-end 0.01 \
      --eval-interval 20 --eval-episodes 400 --padded-sampling none --eps-revisit-power 0 $extra
  fi
done
