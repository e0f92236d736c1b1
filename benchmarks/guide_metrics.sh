#!/usr/bin/env bash
# Recipe guide_metrics: the README's default command (amago_agent.py on LunarLander-v2, transformer encoder, every
# other flag at its default) for 15 minutes, recorded so the guides can show what each logged scalar looks like early
# in a run. Not a performance figure: 15 minutes is far short of the default budget, and the run shares the 2 cores
# with other jobs, so OMP_NUM_THREADS=1 keeps it to one thread (torch's default would take both cores).
# After the run, benchmarks/probes/metrics_panel.py reads every scalar of its tensorboard folder
# (benchmarks/out/guide_metrics_lunarlander/runs/guide_metrics_lunarlander) and writes
# benchmarks/results/guide_metrics/guide_metrics_lunarlander_scalars.csv and benchmarks/results/guide_metrics.png.
# A rerun never replaces the recorded files: OVERWRITE=1 does, TAG=check_ writes under the recipe check_guide_metrics.
# Usage: bash benchmarks/guide_metrics.sh
#   MINUTES=2 TAG=check_ bash benchmarks/guide_metrics.sh     # a short check of the commands
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${MINUTES:-15}
tag=${TAG:-}  # prefix of the recipe and run names
over=${OVERWRITE:+--overwrite}
python=${PYTHON:-python}
export OMP_NUM_THREADS=1
"$python" benchmarks/run.py --minutes "$minutes" --recipe "${tag}guide_metrics" --name "${tag}guide_metrics_lunarlander" \
  $over -- --env-id LunarLander-v2 --traj-encoder transformer
"$python" benchmarks/probes/metrics_panel.py --recipe "${tag}guide_metrics" --name "${tag}guide_metrics_lunarlander"
