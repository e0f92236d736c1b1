#!/usr/bin/env bash
# The guide's "Watch it remember" figures (docs/amago_agent.md), from scratch: the runs it names, trained afresh, then
# every benchmarks/watch.py command it shows. T-Maze H = 50 at memory_revisit's flags (transformer 24,000 env steps,
# gru and ff 16,000 each): the attention of the transformer at the junction, and the probe of the cue in all three
# memories beside their untrained controls. Meta-Frozen-Lake at frozenlake's AT_DEFAULTS flags (transformer 48,000 env
# steps; ff with --hide-rl2, 24,000): success per attempt through training (its rows recorded as a CSV that redraws
# the figure) and the transformer's attention on the earlier attempts' ends. The runs live in a scratch folder
# (benchmarks/out/watch_figures: runs/, buffers/ and each run's log); a run's folders are removed before it trains, so
# no earlier run's logs or buffers mix in. The figures and their JSON go to benchmarks/results/watch/. Two runs side
# by side, one thread each, on the 2 cores: T-Maze's transformer beside gru then ff, Frozen Lake's two together.
# About 30-40 minutes in all on 2 cores.
# Usage: bash benchmarks/watch_figures.sh     (ONLY=tmaze or ONLY=frozenlake: one part; RESULTS: the figures' folder)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
only=${ONLY:-tmaze frozenlake}
results=${RESULTS:-benchmarks/results/watch}
scratch=$root/benchmarks/out/watch_figures
export OMP_NUM_THREADS=1
for part in $only; do
  case $part in
  tmaze | frozenlake) ;;
  *) echo "unknown part '$part' in ONLY: tmaze, frozenlake" >&2; exit 2 ;;
  esac
done
mkdir -p "$scratch" "$results"
results=$(cd "$results" && pwd)  # absolute: the watch commands run in the scratch folder
cd "$scratch"  # watch.py reads ./runs, where the script writes them

# train NAME FLAGS...: a fresh run NAME of amago_agent.py (any earlier one of that name removed), its output in NAME.log
train() {
  local name=$1
  shift
  rm -rf "runs/$name" "buffers/$name"
  echo "training $name (log: $scratch/$name.log)"
  python "$root/amago_agent.py" "$@" --buffer-dir buffers --run-name "$name" >"$name.log" 2>&1 ||
    { echo "run $name failed; the end of its log:" >&2; tail -n 20 "$name.log" >&2; return 1; }
}

# wait_all PID...: waits for every run; fails if any failed
wait_all() {
  local rc=0 pid
  for pid in "$@"; do wait "$pid" || rc=$?; done
  return $rc
}

if [[ " $only " == *" tmaze "* ]]; then
  tmaze=(--env-id envs:TMazePassive-v0 --max-seq-len 51 --seed 1)
  train watch_tmaze_h50_transformer "${tmaze[@]}" --traj-encoder transformer --total-timesteps 24000 &
  first=$!
  { train watch_tmaze_h50_gru "${tmaze[@]}" --traj-encoder gru --total-timesteps 16000 &&
    train watch_tmaze_h50_ff "${tmaze[@]}" --traj-encoder ff --total-timesteps 16000; } &
  wait_all "$first" $!
  python "$root/benchmarks/watch.py" attention --run-name watch_tmaze_h50_transformer \
    --out "$results/tmaze_h50_attention.png"
  python "$root/benchmarks/watch.py" probe --run-name watch_tmaze_h50_transformer watch_tmaze_h50_gru \
    watch_tmaze_h50_ff --out "$results/tmaze_h50_probe.png"
fi

if [[ " $only " == *" frozenlake "* ]]; then
  lake=(--env-id envs:MetaFrozenLake-HideK-v0 --max-seq-len 80 --traj-save-len 80 --eps-anneal-steps 6250
    --eval-interval 5 --eval-episodes 200 --padded-sampling none)
  train watch_frozenlake_transformer "${lake[@]}" --total-timesteps 48000 --traj-encoder transformer &
  first=$!
  train watch_frozenlake_ff "${lake[@]}" --total-timesteps 24000 --traj-encoder ff --hide-rl2 &
  wait_all "$first" $!
  python "$root/benchmarks/watch.py" attempts --run-name watch_frozenlake_transformer watch_frozenlake_ff \
    --record "$results/frozenlake_attempts_success.csv" --out "$results/frozenlake_attempts.png"
  python "$root/benchmarks/watch.py" attention --run-name watch_frozenlake_transformer \
    --out "$results/frozenlake_attention.png"
fi
