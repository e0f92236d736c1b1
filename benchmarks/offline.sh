#!/usr/bin/env bash
# Offline RL and offline -> online on CartPole-v1 (recipe offline_cartpole; benchmarks/README.md, "offline_cartpole").
# Every run uses the cartpole recipe's sizes (benchmarks/classic_control.sh), transformer, seed 1.
#   expert    train online until greedy eval >= 475 (<= 30 min); its checkpoint is the data-collecting policy, and
#             its curve is the online run from scratch that the finetune run is compared with (same flags and seed)
#   data      the dataset, as trajectory files: --eval-only of that checkpoint writes 64 greedy episodes and 64 episodes
#             sampled from the policy (--no-eval-greedy), with the metrics of both; the exploratory part is 1,000 files
#             drawn at random (seed 0) from the expert run's own buffer: its epsilon-greedy training episodes, from
#             the first epoch to the last (with the expert episodes alone, the fully offline run reached 482, then
#             fell to ~10, below random: they hold almost none of the actions the expert does not take)
#   offline   a fully offline run on the dataset alone (--start-collecting-at-epoch never), 15 min
#   finetune  the dataset, 20 offline epochs (4,000 updates), then online collection as usual, 15 min
# Usage: bash benchmarks/offline.sh [expert|data|offline|finetune|all]   (offline and finetune may run side by side)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
R=offline_cartpole
OUT=benchmarks/out
export OMP_NUM_THREADS=1
FLAGS="--env-id CartPole-v1 --traj-encoder transformer --seed 1 --num-envs 32 --eval-interval 5 --anneal-lr
  --learning-rate 1e-3 --pos-emb learned --max-time-idx 1 --total-timesteps 921600 --eps-anneal-steps 1440
  --batch-size 8 --n-layers 1 --critic-hidden 64 --actor-hidden 64 --tstep-hidden 64 --d-ff 128
  --batches-per-epoch 200"
data=$PWD/$OUT/${R}_data/protected
over=${OVERWRITE:+--overwrite}  # OVERWRITE=1 replaces recorded results
with_data() {  # with_data NAME: a fresh run folder whose buffer holds the dataset in protected/ (never deleted)
  rm -rf "${OUT:?}/$1" && mkdir -p "$OUT/$1/buffers/$1"
  cp -r "$data" "$OUT/$1/buffers/$1/protected"
}
if [[ $what == expert || $what == all ]]; then
  python benchmarks/run.py --minutes 30 --recipe $R --name ${R}_expert --target 475 --stop-at-target $over -- $FLAGS
fi
if [[ $what == data || $what == all ]]; then
  ckpt=$PWD/$OUT/${R}_expert/runs/${R}_expert/checkpoint.pt
  record=benchmarks/results/$R/${R}_data.json
  if [[ -e $record && -z $over ]]; then echo "$record holds a recorded result; OVERWRITE=1 replaces it" >&2; exit 2; fi
  rm -rf "$data" && mkdir -p "$data"
  for mode in --eval-greedy --no-eval-greedy; do  # one JSON line of eval metrics each
    (cd "$OUT/${R}_expert" && python ../../../amago_agent.py $FLAGS --run-name ${R}_data --eval-only --load-from "$ckpt" \
      --eval-episodes 64 $mode --save-trajs-to "$data" | tail -n 1)
  done | python -c "import json,sys; g,s=[json.loads(l) for l in sys.stdin]; print(json.dumps({'recipe': '$R',
'name': '${R}_data', 'greedy_episodes': 64, 'sampled_episodes': 64, 'greedy': g, 'sampled': s}, indent=1))" \
    | tee "$record"
  python - "$OUT/${R}_expert/buffers/${R}_expert/fifo" "$data" <<'EOF'
import random, shutil, sys
from pathlib import Path
fifo, data = map(Path, sys.argv[1:])
files = random.Random(0).sample(sorted(fifo.glob("*.npz")), 1000)
for f in files:
    shutil.copy(f, data / f.name)
print(f"copied {len(files)} of the expert run's {len(list(fifo.glob('*.npz')))} replay files into {data}")
EOF
fi
if [[ $what == offline || $what == all ]]; then
  with_data ${R}_offline
  python benchmarks/run.py --minutes 15 --recipe $R --name ${R}_offline $over -- $FLAGS --start-collecting-at-epoch 1000000
fi
if [[ $what == finetune || $what == all ]]; then
  with_data ${R}_finetune
  python benchmarks/run.py --minutes 15 --recipe $R --name ${R}_finetune $over -- $FLAGS --start-collecting-at-epoch 20
fi
