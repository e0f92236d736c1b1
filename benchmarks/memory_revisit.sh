#!/usr/bin/env bash
# Memory tasks (memory_tasks.sh) at the scripts' defaults, which spend epsilon where an episode is new
# (--eps-revisit-power 2) and train as many timesteps per env step whatever the context (--replay-ratio 192: 63 updates
# per epoch at 101 steps, 13 at 501). Two seeds, 60 minutes each, one thread each (side by side on the 2 cores). The
# same tasks at AMAGO's fixed epoch and epsilon: memory_defaults.sh; the tuned recipes: memory.sh and popgym.sh.
# Runs are named memory_revisit_<task>_s<seed>, recorded in benchmarks/results/memory_revisit/.
# Usage: bash benchmarks/memory_revisit.sh tmaze_h100   (MINUTES=2 TAG=check_: a short check)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/memory_tasks.sh
run_memory_task memory_revisit "${1:?which task (see benchmarks/memory_tasks.sh)}" ""
