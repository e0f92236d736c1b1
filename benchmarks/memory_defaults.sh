#!/usr/bin/env bash
# Memory tasks at AMAGO's fixed epoch and epsilon (--batches-per-epoch 200 --eps-revisit-power 0, set below;
# memory_revisit.sh runs the same tasks at the scripts' defaults): otherwise only --max-seq-len (the whole episode in
# context) and, where the episode is longer than the default 256-step snippets, --traj-save-len are set.
# Two seeds, 60 minutes each, one thread each (side by side on the 2 cores). The tuned recipes: memory.sh, popgym.sh.
#   tmaze_h50 / tmaze_h100 / tmaze_h500   T-Maze passive, corridor 50 / 100 / 500 (success: eval return >= 0.95)
#   popgym_countrecall                    POPGym CountRecallMedium, 103-step episodes
#   popgym_autoencode                     POPGym AutoencodeEasy, 103-step episodes
#   popgym_repeatfirst                    POPGym RepeatFirstMedium, 415-step episodes
# A second argument, log_eps, adds --eps-scale-min 1e-3: each episode's epsilon scale drawn log-uniformly in [1e-3, 1]
# instead of the default U[0,1) (AMAGO's); those runs are named memory_defaults_<task>_log_eps_s<seed>.
# Runs are named memory_defaults_<task>_s<seed> and recorded in benchmarks/results/memory_defaults/; a rerun never
# replaces a recorded one (OVERWRITE=1 does; TAG=check_ writes under the recipe check_memory_defaults instead).
# Usage: bash benchmarks/memory_defaults.sh tmaze_h50 [log_eps]   (MINUTES=2 TAG=check_: a short check)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:?"which task: tmaze_h50 tmaze_h100 tmaze_h500 popgym_countrecall popgym_autoencode popgym_repeatfirst"}
tag=${TAG:-}
variant=${2:-}
case $variant in
"") extra="" suffix="" ;;
log_eps) extra="--eps-scale-min 1e-3" suffix="_log_eps" ;;
*) echo "unknown variant '$variant': leave it out (the defaults) or log_eps" >&2; exit 2 ;;
esac
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
  python benchmarks/run.py --minutes "${MINUTES:-60}" --recipe ${tag}memory_defaults \
    --name ${tag}memory_defaults_${what}${suffix}_s$seed ${OVERWRITE:+--overwrite} $target -- \
    $flags --batches-per-epoch 200 --eps-revisit-power 0 $extra --traj-encoder transformer --seed $seed &
done
wait
