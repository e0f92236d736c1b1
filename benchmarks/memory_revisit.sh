#!/usr/bin/env bash
# Memory tasks at the scripts' defaults, which spend epsilon where an episode is new (--eps-revisit-power 2) and train
# as many timesteps per env step whatever the context (--replay-ratio 192: 63 updates per epoch at 101 steps, 13 at
# 501). Only --max-seq-len (the whole episode in context) and, for episodes longer than the default 256-step snippets,
# --traj-save-len are set. Two seeds, 60 minutes each, one thread each (side by side on the 2 cores). The same tasks
# at AMAGO's fixed epoch and epsilon are memory_defaults.sh; the tuned recipes are memory.sh and popgym.sh.
#   tmaze_h50 / tmaze_h100 / tmaze_h500   T-Maze passive, corridor 50 / 100 / 500 (success: eval return >= 0.95)
#   popgym_countrecall                    POPGym CountRecallMedium, 103-step episodes
#   popgym_autoencode                     POPGym AutoencodeEasy, 103-step episodes
#   popgym_repeatfirst                    POPGym RepeatFirstMedium, 415-step episodes
# Runs are named memory_revisit_<task>_s<seed> and recorded in benchmarks/results/memory_revisit/; a rerun never
# replaces a recorded one (OVERWRITE=1 does; TAG=check_ writes under the recipe check_memory_revisit instead).
# Usage: bash benchmarks/memory_revisit.sh tmaze_h100   (SEEDS="1 2" by default; MINUTES=2 TAG=check_: a short check)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:?"which task: tmaze_h50 tmaze_h100 tmaze_h500 popgym_countrecall popgym_autoencode popgym_repeatfirst"}
tag=${TAG:-}
export OMP_NUM_THREADS=1
case $what in
tmaze_h50) flags="--env-id envs:TMazePassive-v0 --max-seq-len 51" target="--target 0.95" ;;
tmaze_h100) flags="--env-id envs:TMazePassive-H100-v0 --max-seq-len 101" target="--target 0.95" ;;
tmaze_h500) flags="--env-id envs:TMazePassive-H500-v0 --max-seq-len 501 --traj-save-len 501" target="--target 0.95" ;;
popgym_countrecall) flags="--env-id envs:PopGym-CountRecallMedium-v0 --max-seq-len 104" target="" ;;
popgym_autoencode) flags="--env-id envs:PopGym-AutoencodeEasy-v0 --max-seq-len 104" target="" ;;
popgym_repeatfirst) flags="--env-id envs:PopGym-RepeatFirstMedium-v0 --max-seq-len 416 --traj-save-len 416" target="" ;;
*) echo "unknown task $what" >&2; exit 2 ;;
esac
for seed in ${SEEDS:-1 2}; do
  python benchmarks/run.py --minutes "${MINUTES:-60}" --recipe ${tag}memory_revisit \
    --name ${tag}memory_revisit_${what}_s$seed ${OVERWRITE:+--overwrite} $target -- \
    $flags --traj-encoder transformer --seed $seed &
done
wait
