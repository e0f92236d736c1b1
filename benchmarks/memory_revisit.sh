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
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/memory_tasks.sh
task=${1:?which task (see benchmarks/memory_tasks.sh)}
case ${2:-} in
"") run_memory_task memory_revisit "$task" "" ;;
resume) resume_memory_task memory_revisit "$task" ;;
alone) run_memory_task_alone memory_revisit "$task" ;;
ratio48_alone) run_memory_task_alone memory_revisit "$task" _ratio48 --replay-ratio 48 --total-timesteps 4000000 ;;
*) echo "unknown option '$2': resume, alone, ratio48_alone, or none" >&2
  exit 2 ;;
esac
