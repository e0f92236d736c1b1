#!/usr/bin/env bash
# Memory tasks (memory_tasks.sh) at AMAGO's fixed epoch and epsilon: --batches-per-epoch 200 --eps-revisit-power 0
# (memory_revisit.sh runs the same tasks at the scripts' defaults). Two seeds, 60 minutes each, one thread each (side
# by side on the 2 cores). The tuned recipes: memory.sh, popgym.sh.
# A second argument, log_eps, adds --eps-scale-min 1e-3: each episode's epsilon scale drawn log-uniformly in [1e-3, 1]
# instead of the default U[0,1) (AMAGO's); those runs are named memory_defaults_<task>_log_eps_s<seed>.
# Runs are named memory_defaults_<task>_s<seed> and recorded in benchmarks/results/memory_defaults/; a rerun never
# replaces a recorded one (OVERWRITE=1 does; TAG=check_ writes under the recipe check_memory_defaults instead).
# Usage: bash benchmarks/memory_defaults.sh tmaze_h50 [log_eps]   (MINUTES=2 TAG=check_: a short check)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/memory_tasks.sh
case ${2:-} in
"") extra="" suffix="" ;;
log_eps) extra="--eps-scale-min 1e-3" suffix="_log_eps" ;;
*) echo "unknown variant '$2': leave it out (the defaults) or log_eps" >&2; exit 2 ;;
esac
run_memory_task memory_defaults "${1:?which task (see benchmarks/memory_tasks.sh)}" "$suffix" \
  --batches-per-epoch 200 --eps-revisit-power 0 $extra
