#!/usr/bin/env bash
# Recipe speed_cnn: the update's speed with the default CNN, by frame size. benchmarks/speed.py times the default
# transformer agent's update (batch 24 x 33 steps) and acting step on the pixel T-Maze drawn at 16, 24, 48 and 84
# pixels (envs:PixelTMaze-{16px,,48px,84px}-v0), with no CNN flags: DQN's Nature CNN from 36 px up (84x84: the
# reference's), below it 3x3 convs of 8, 16, 16 channels at strides 2, 2, 1. Below 36 px two more CNNs beside it:
# `nature_widths`, the Nature widths 32, 64, 64 with the same 3x3 convs (the default there before), and `two_conv`,
# 8 and 16 channels at stride 2 (the smallest CNN that learns the pixel T-Maze, pixel_tmaze's archived runs).
# One thread (OMP_NUM_THREADS=1), so that the one process beside it on a 2-core machine does not halve it. One RESULT
# per frame size and CNN, recorded as benchmarks/results/speed_cnn/speed_cnn_<px>px_<cnn>.json.
# Usage: bash benchmarks/speed_cnn.sh   (UPDATES=100 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p benchmarks/results/speed_cnn
for px in 16 24 48 84; do
  env=envs:PixelTMaze-${px}px-v0
  [[ $px == 24 ]] && env=envs:PixelTMaze-v0
  cnns=default
  ((px < 36)) && cnns="default nature_widths two_conv"
  for cnn in $cnns; do
    case $cnn in
      default) set -- ;;
      nature_widths) set -- --set "cnn_channels=(32,64,64)" "cnn_kernels=(3,3,3)" "cnn_strides=(2,2,1)" ;;
      two_conv) set -- --set "cnn_channels=(8,16)" "cnn_kernels=(3,3)" "cnn_strides=(2,2)" ;;
    esac
    out=$(OMP_NUM_THREADS=1 python benchmarks/speed.py --env-id $env --encoders transformer --updates "${UPDATES:-100}" "$@")
    grep '^RESULT ' <<<"$out" | cut -c8- > benchmarks/results/speed_cnn/speed_cnn_${px}px_$cnn.json
    echo "$px px, $cnn: $(grep '^RESULT ' <<<"$out" | cut -c1-160)"
  done
done
