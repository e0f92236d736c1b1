#!/usr/bin/env bash
# Recipe multitask: AMAGO-2's MultiTaskAgent (amago_multitask.py) against AMAGO's Agent (amago_agent.py) on
# MultiScaleBandit-v0 (envs/multiscale.py): one 3-armed, 6-pull bandit whose hidden good arm must be found in context,
# under a hidden reward scale x1, x10 or x100 per episode. The paper's point (AMAGO-2, NeurIPS 2024): one PopArt
# regression critic for all scales is dominated by the x100 returns, so the x1 task learns last or not at all, while
# two-hot classification and a filtered-BC actor are scale-invariant.
# Both scripts get the same flags, the same env-step budget and the same wall clock, and run side by side (each one
# thread), so they share the CPU alike. Their defaults differ only where AMAGO-2 differs: two-hot critic, actor
# terms online 0 / offline 1, V(s) from 3 sampled actions. Flags beyond the defaults: the whole 6-pull episode in
# context (--max-seq-len 8), a budget-sized schedule (200k steps, eps annealed over the first 20k), the critic width
# 64 (a two-hot critic runs over B*L*G rows and 128 bins: at width 128 its update is ~3.5x AMAGO's discrete one),
# and 96 greedy eval episodes every 10 epochs (~32 per scale).
# Target: amago_multitask.py reaches success >= 0.9 at every scale (eval/MultiScaleBandit-x{1,10,100}/success).
# `report` prints the per-scale success curve and the first minute at which all three are >= 0.9, and writes it to
# benchmarks/results/<recipe>/<name>_per_scale.csv. Runs: multitask_amago2_s<seed> and multitask_amago_s<seed>, recorded in
# benchmarks/results/multitask/. A rerun never replaces them: OVERWRITE=1 does, TAG=check_ writes under the recipe
# check_multitask instead.
# Usage: bash benchmarks/multitask.sh
#   MINUTES=3 TAG=check_ bash benchmarks/multitask.sh     # a short check of the commands
# --padded-sampling none: these runs were recorded when none was the scripts' default (now right).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${MINUTES:-90}
extra=${EXTRA:-}  # appended to every command (a later flag overrides an earlier one)
tag=${TAG:-}  # prefix of the recipe and run names
over=${OVERWRITE:+--overwrite}
seed=${SEED:-1}
export OMP_NUM_THREADS=1

report() {  # per-scale greedy success of run $1 at every eval (minutes, steps, updates: run.py's curve.csv)
  python - "$1" "$tag"multitask <<'EOF'
import sys
sys.path.insert(0, ".")
from common.logs import read_scalars
name, recipe = sys.argv[1:]
out = f"benchmarks/out/{name}"
scalars = read_scalars(f"{out}/runs/{name}")
success = [{step: v for _, step, v in scalars.get(f"eval/MultiScaleBandit-x{s}/success", [])} for s in (1, 10, 100)]
rows, first = [], None
for line in open(f"{out}/curve.csv").read().splitlines()[1:]:
    minutes, step, updates, _ = line.split(",")
    if all(int(step) in s for s in success):
        rows.append((float(minutes), int(step), int(updates), *(s[int(step)] for s in success)))
        first = first or (rows[-1] if min(rows[-1][3:]) >= 0.9 else None)
with open(f"benchmarks/results/{recipe}/{name}_per_scale.csv", "w") as f:
    f.write("minutes,env_steps,updates,success_x1,success_x10,success_x100\n")
    for r in rows:
        f.write("%.2f,%d,%d,%.3f,%.3f,%.3f\n" % r)
        print(f"{name}  %6.1f min  %7d steps  %6d updates  success x1 %.2f  x10 %.2f  x100 %.2f" % r)
print(f"{name}  every scale >= 0.9:", "at %.1f min (%d steps, %d updates)" % first[:3] if first else "not reached")
EOF
}

common="--env-id envs:MultiScaleBandit-v0 --traj-encoder transformer --seed $seed --max-seq-len 8 --traj-save-len 8 \
  --timesteps-per-epoch 24 --batches-per-epoch 48 --total-timesteps 200000 --eps-anneal-steps 2500 --critic-hidden 64 \
  --eval-interval 10 --eval-episodes 96 --padded-sampling none --eps-revisit-power 0"
run() { python benchmarks/run.py --minutes "$minutes" --script $1 --recipe ${tag}multitask --name ${tag}multitask_$2_s$seed $over -- $common $extra; }
run amago_multitask.py amago2 &
run2=$!
run amago_agent.py amago &
run1=$!
wait $run2  # each wait fails (and set -e stops here) if its run failed, e.g. refused to replace a result
wait $run1
report ${tag}multitask_amago2_s$seed
report ${tag}multitask_amago_s$seed
