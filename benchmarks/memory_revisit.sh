#!/usr/bin/env bash
# Memory tasks (memory_tasks.sh) at the scripts' defaults, which spend epsilon where an episode is new
# (--eps-revisit-power 2) and train as many timesteps per env step whatever the context (--replay-ratio 192: 63 updates
# per epoch at 101 steps, 13 at 501). Two seeds, 60 minutes each, one thread each (side by side on the 2 cores). The
# same tasks at AMAGO's fixed epoch and epsilon: memory_defaults.sh; the tuned recipes: memory.sh and popgym.sh.
# Runs are named memory_revisit_<task>_s<seed>, recorded in benchmarks/results/memory_revisit/.
# Usage: bash benchmarks/memory_revisit.sh tmaze_h100   (MINUTES=2 TAG=check_: a short check)
#        bash benchmarks/memory_revisit.sh popgym_countrecall resume   (the recorded seeds go on for another hour, as
#        memory_revisit_<task>_s<seed>_resumed; SEEDS=2 for one of them)
#        bash benchmarks/memory_revisit.sh popgym_countrecall alone    (each seed alone on the machine, torch's default
#        threads, one after the other, as memory_revisit_<task>_alone_s<seed>)
#        bash benchmarks/memory_revisit.sh popgym_countrecall ratio48_alone   (the same with --replay-ratio 48, a
#        quarter of the default's replay, and --total-timesteps 4000000 so that the hour, not the default's 1M steps,
#        ends it, as memory_revisit_<task>_ratio48_alone_s<seed>)
#        bash benchmarks/memory_revisit.sh tmaze_h100 ratio48   (--replay-ratio 48 and --total-timesteps 4000000, two
#        seeds side by side as the defaults' runs, each stopped at its first eval at the task's bar, as
#        memory_revisit_<task>_ratio48_s<seed>)
#        SEEDS=1 SPU=53 bash benchmarks/memory_revisit.sh popgym_countrecall collector   (the defaults' flags run as a
#        learner and one collector process, one thread each, so one seed takes both cores; the collector gathers up to
#        SPU env steps per update (default 16, common.launch's); --total-timesteps 4000000, stopped at the task's bar,
#        as memory_revisit_<task>_collector_spu<SPU>_s<seed>)
#        bash benchmarks/memory_revisit.sh tmaze_h500 greedy   (the defaults plus --train-greedy: argmax actions in the
#        training rollouts, exploration on top, as memory_revisit_<task>_train_greedy_s<seed>)
#        bash benchmarks/memory_revisit.sh tmaze_h500 greedy_floor   (the same plus --eps-floor 0.001, about 0.5 / the
#        context: a random action every other 500-step episode even where observations repeat, as
#        memory_revisit_<task>_train_greedy_eps_floor_s<seed>)
#        bash benchmarks/memory_revisit.sh tmaze_h500 greedy_episodes   (the defaults plus --greedy-episodes 0.5: half
#        of the training episodes, drawn per episode, take the argmax, the rest sample, as
#        memory_revisit_<task>_greedy_episodes_s<seed>)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/memory_tasks.sh
task=${1:?which task (see benchmarks/memory_tasks.sh)}
case ${2:-} in
"") run_memory_task memory_revisit "$task" "" ;;
resume) resume_memory_task memory_revisit "$task" ;;
alone) run_memory_task_alone memory_revisit "$task" ;;
ratio48) STOP_AT_BAR=1 run_memory_task memory_revisit "$task" _ratio48 --replay-ratio 48 --total-timesteps 4000000 ;;
ratio48_alone) run_memory_task_alone memory_revisit "$task" _ratio48 --replay-ratio 48 --total-timesteps 4000000 ;;
collector) STOP_AT_BAR=1 RUN_FLAGS="--collectors 1 --steps-per-update ${SPU:-16}" \
  run_memory_task memory_revisit "$task" _collector_spu${SPU:-16} --total-timesteps 4000000 ;;
greedy) run_memory_task memory_revisit "$task" _train_greedy --train-greedy ;;
greedy_floor) run_memory_task memory_revisit "$task" _train_greedy_eps_floor --train-greedy --eps-floor 0.001 ;;
greedy_episodes) run_memory_task memory_revisit "$task" _greedy_episodes --greedy-episodes 0.5 ;;
*) echo "unknown option '$2': resume, alone, ratio48, ratio48_alone, collector, greedy, greedy_floor," \
  "greedy_episodes, or none" >&2
  exit 2 ;;
esac
