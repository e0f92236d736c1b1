# Sourced by memory_defaults.sh and memory_revisit.sh: the memory tasks and how their seeds run.
#   tmaze_h50 / tmaze_h100 / tmaze_h500   T-Maze passive, corridor 50 / 100 / 500 (success: eval return >= 0.95)
#   popgym_countrecall                    POPGym CountRecallMedium, 103-step episodes
#   popgym_autoencode                     POPGym AutoencodeEasy, 103-step episodes
#   popgym_repeatfirst                    POPGym RepeatFirstMedium, 415-step episodes
# Only --max-seq-len (the whole episode in context) and, for episodes longer than the default 256-step snippets,
# --traj-save-len are set per task.

# run_memory_task RECIPE TASK NAME_SUFFIX SCRIPT_FLAGS...: seeds $SEEDS (default 1 2) side by side, $MINUTES (60)
# each, one thread each, as runs ${TAG}RECIPE_TASK[NAME_SUFFIX]_s<seed> (OVERWRITE=1 replaces recorded ones)
run_memory_task() {
  local recipe=${TAG:-}$1 what=$2 suffix=$3 flags target="--target 0.95"
  shift 3
  case $what in
  tmaze_h50) flags="--env-id envs:TMazePassive-v0 --max-seq-len 51" ;;
  tmaze_h100) flags="--env-id envs:TMazePassive-H100-v0 --max-seq-len 101" ;;
  tmaze_h500) flags="--env-id envs:TMazePassive-H500-v0 --max-seq-len 501 --traj-save-len 501" ;;
  popgym_countrecall) flags="--env-id envs:PopGym-CountRecallMedium-v0 --max-seq-len 104" target="" ;;
  popgym_autoencode) flags="--env-id envs:PopGym-AutoencodeEasy-v0 --max-seq-len 104" target="" ;;
  popgym_repeatfirst) flags="--env-id envs:PopGym-RepeatFirstMedium-v0 --max-seq-len 416 --traj-save-len 416" target="" ;;
  *) echo "unknown task '$what': tmaze_h50 tmaze_h100 tmaze_h500 popgym_countrecall popgym_autoencode" \
    "popgym_repeatfirst" >&2; exit 2 ;;
  esac
  export OMP_NUM_THREADS=1
  for seed in ${SEEDS:-1 2}; do
    python benchmarks/run.py --minutes "${MINUTES:-60}" --recipe "$recipe" --name "${recipe}_${what}${suffix}_s$seed" \
      ${OVERWRITE:+--overwrite} $target -- $flags "$@" --traj-encoder transformer --seed $seed &
  done
  wait
}
