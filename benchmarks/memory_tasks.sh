# Sourced by memory_defaults.sh and memory_revisit.sh: the memory tasks and how their seeds run.
#   tmaze_h50 / tmaze_h100 / tmaze_h500   T-Maze passive, corridor 50 / 100 / 500 (success: eval return >= 0.95)
#   popgym_countrecall                    POPGym CountRecallMedium, 103-step episodes
#   popgym_autoencode                     POPGym AutoencodeEasy, 103-step episodes
#   popgym_repeatfirst                    POPGym RepeatFirstMedium, 415-step episodes
# Only --max-seq-len (the whole episode in context) and, for episodes longer than the default 256-step snippets,
# --traj-save-len are set per task.

# wait_all PID...: waits for every run; fails with the last failure's exit code (a refused or crashed run)
wait_all() {
  local rc=0 pid
  for pid in "$@"; do wait "$pid" || rc=$?; done
  return $rc
}

# task_flags TASK: sets $flags (the task's script flags) and $target (run.py's --target: T-Maze's bar, success 0.95)
task_flags() {
  target="--target 0.95"
  case $1 in
  tmaze_h50) flags="--env-id envs:TMazePassive-v0 --max-seq-len 51" ;;
  tmaze_h100) flags="--env-id envs:TMazePassive-H100-v0 --max-seq-len 101" ;;
  tmaze_h500) flags="--env-id envs:TMazePassive-H500-v0 --max-seq-len 501 --traj-save-len 501" ;;
  popgym_countrecall) flags="--env-id envs:PopGym-CountRecallMedium-v0 --max-seq-len 104" target="" ;;
  popgym_autoencode) flags="--env-id envs:PopGym-AutoencodeEasy-v0 --max-seq-len 104" target="" ;;
  popgym_repeatfirst)
    flags="--env-id envs:PopGym-RepeatFirstMedium-v0 --max-seq-len 416 --traj-save-len 416" target="" ;;
  *) echo "unknown task '$1': tmaze_h50 tmaze_h100 tmaze_h500 popgym_countrecall popgym_autoencode" \
    "popgym_repeatfirst" >&2; exit 2 ;;
  esac
}

# run_memory_task RECIPE TASK NAME_SUFFIX SCRIPT_FLAGS...: seeds $SEEDS (default 1 2) side by side, $MINUTES (60)
# each, one thread each, as runs ${TAG}RECIPE_TASK[NAME_SUFFIX]_s<seed> (OVERWRITE=1 replaces recorded ones)
run_memory_task() {
  local recipe=${TAG:-}$1 what=$2 suffix=$3 flags target pids=()
  shift 3
  task_flags "$what"
  export OMP_NUM_THREADS=1
  for seed in ${SEEDS:-1 2}; do
    python benchmarks/run.py --minutes "${MINUTES:-60}" --recipe "$recipe" --name "${recipe}_${what}${suffix}_s$seed" \
      ${OVERWRITE:+--overwrite} $target -- $flags "$@" --traj-encoder transformer --seed $seed &
    pids+=($!)
  done
  wait_all "${pids[@]}"
}

# resume_memory_task RECIPE TASK: each seed's recorded run RECIPE_TASK_s<seed> continues from its last checkpoint for
# another $MINUTES (60), side by side, as RECIPE_TASK_s<seed>_resumed (its curve goes on from the earlier run's)
resume_memory_task() {
  local recipe=${TAG:-}$1 what=$2 flags target pids=()
  task_flags "$what"
  export OMP_NUM_THREADS=1
  for seed in ${SEEDS:-1 2}; do
    python benchmarks/run.py --minutes "${MINUTES:-60}" --recipe "$recipe" --name "${recipe}_${what}_s${seed}_resumed" \
      --resume-from "${recipe}_${what}_s$seed" ${OVERWRITE:+--overwrite} $target &
    pids+=($!)
  done
  wait_all "${pids[@]}"
}

# run_memory_task_alone RECIPE TASK [NAME_SUFFIX SCRIPT_FLAGS...]: seeds $SEEDS (default 1 2) one after another, each
# alone on the machine with torch's default threads (a thread per core: a caller's OMP_NUM_THREADS is dropped),
# $MINUTES (60) each, as RECIPE_TASK[NAME_SUFFIX]_alone_s<seed>
run_memory_task_alone() {
  local recipe=${TAG:-}$1 what=$2 suffix=${3:-} flags target
  shift 2
  [ $# -gt 0 ] && shift
  task_flags "$what"
  unset OMP_NUM_THREADS
  for seed in ${SEEDS:-1 2}; do
    python benchmarks/run.py --minutes "${MINUTES:-60}" --recipe "$recipe" \
      --name "${recipe}_${what}${suffix}_alone_s$seed" ${OVERWRITE:+--overwrite} $target -- $flags "$@" \
      --traj-encoder transformer --seed $seed
  done
}
