#!/usr/bin/env bash
# T-Maze H = 100: which of the tuned recipe's flags make it learn where AMAGO's defaults do not (memory_defaults.sh:
# 200 updates per epoch and AMAGO's epsilon, set below; the scripts' defaults learn it: memory_revisit.sh).
# Each variant is either the defaults plus one recipe flag (defaults_plus_<flag>) or the recipe less one flag, that
# flag back at its default (recipe_minus_<flag>). Two seeds side by side, 60 minutes (MINUTES), one thread each, as
# memory_defaults.sh; runs are named memory_ablation_tmaze_h100_<variant>_s<seed> under the recipe memory_ablation.
#   flags: explore      --exploration envs.tmaze:TMazeEpsilonGreedy (epsilon 0.5 / H in the corridor)
#          greedy       --train-greedy (argmax actions in training, exploration on top)
#          reward       --reward-multiplier 100 (default 10)
#          gamma        --gamma 0.9999 (default 0.999)
#          epoch        --timesteps-per-epoch 101 --batches-per-epoch 100 (default 100 and 200)
#          eps          --eps-anneal-steps 5000 --eps-end 0.01 (default 12,500 and 0.05)
#          sampling     --padded-sampling none (default right)
#          savelen      --traj-save-len 101 (default 256)
# Usage: bash benchmarks/memory_ablation.sh defaults_plus_explore     (MINUTES, SEEDS, TAG=check_, OVERWRITE=1 as
#        memory_defaults.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
variant=${1:?"which variant: defaults_plus_<flag> or recipe_minus_<flag>, flag one of explore greedy reward gamma epoch eps sampling savelen"}
tag=${TAG:-}
export OMP_NUM_THREADS=1
declare -A flag=(
  [explore]="--exploration envs.tmaze:TMazeEpsilonGreedy"
  [greedy]="--train-greedy"
  [reward]="--reward-multiplier 100"
  [gamma]="--gamma 0.9999"
  [epoch]="--timesteps-per-epoch 101 --batches-per-epoch 100"
  [eps]="--eps-anneal-steps 5000 --eps-end 0.01"
  [sampling]="--padded-sampling none"
  [savelen]="--traj-save-len 101"
)
name=${variant#defaults_plus_}
name=${name#recipe_minus_}
if [[ -z ${flag[$name]+set} || ($variant != defaults_plus_* && $variant != recipe_minus_*) ]]; then
  echo "unknown variant '$variant': defaults_plus_<flag> or recipe_minus_<flag>, flag one of ${!flag[*]}" >&2
  exit 2
fi
extra=""
if [[ $variant == defaults_plus_* ]]; then
  extra=${flag[$name]}
else
  for f in "${!flag[@]}"; do [[ $f == "$name" ]] || extra="$extra ${flag[$f]}"; done
fi
for seed in ${SEEDS:-1 2}; do
  python benchmarks/run.py --minutes "${MINUTES:-60}" --recipe ${tag}memory_ablation \
    --name ${tag}memory_ablation_tmaze_h100_${variant}_s$seed ${OVERWRITE:+--overwrite} --target 0.95 -- \
    --env-id envs:TMazePassive-H100-v0 --max-seq-len 101 --traj-encoder transformer --batches-per-epoch 200 --eps-revisit-power 0 $extra \
    --seed $seed &
done
wait
