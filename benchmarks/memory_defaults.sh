#!/usr/bin/env bash
# Memory tasks (memory_tasks.sh) at AMAGO's fixed epoch and epsilon: --batches-per-epoch 200 --eps-revisit-power 0
# (memory_revisit.sh runs the same tasks at the scripts' defaults). Two seeds, 60 minutes each, one thread each (side
# by side on the 2 cores). The tuned recipes: memory.sh, popgym.sh.
# Runs are named memory_defaults_<task>_s<seed> and recorded in benchmarks/results/memory_defaults/; a rerun never
# replaces a recorded one (OVERWRITE=1 does; TAG=check_ writes under the recipe check_memory_defaults instead).
# Usage: bash benchmarks/memory_defaults.sh tmaze_h50   (MINUTES=2 TAG=check_: a short check)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/memory_tasks.sh
[[ $# -le 1 ]] || { echo "one task, no option: bash benchmarks/memory_defaults.sh <task>" >&2; exit 2; }
run_memory_task memory_defaults "${1:?which task (see benchmarks/memory_tasks.sh)}" "" \
  --batches-per-epoch 200 --eps-revisit-power 0
