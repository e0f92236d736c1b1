#!/usr/bin/env bash
# Ours against the reference AMAGO (UT-Austin-RPL/amago at 2d85600) with Box actions, at equal sizes and settings:
# plain MuJoCo HalfCheetah (ours v5, the reference's gymnasium 0.29 v4: the same dynamics), the transformer at our
# default sizes (272,368 trainable parameters on both sides), 8 actors, 200 updates per 800 env steps, lr 6e-4 after
# 500 warm-up updates, eps annealed over 12,500 env steps per actor, gamma 0.999 with the default multigammas. Per
# epoch both log the Box actor's health (greedy |tanh mu|, its spread over states, the pre-tanh std), the BC filter's
# kept share and the gradient norm; both evaluate 8 greedy episodes every 10 epochs. The reference runs in its own
# venv (benchmarks/probes/reference_box.py says how to set it up). One seed's pair runs side by side, one thread each.
# Usage: bash benchmarks/compare_box.sh                    (SEEDS="1 2 3 4", STEPS=9600: the first ~2,000 updates)
#   STEPS=100000 SEEDS=1 bash benchmarks/compare_box.sh    # learning curves to 100,000 env steps (~2 h a side);
#     ours is then the halfcheetah recipe's run (halfcheetah.sh: the same settings, evaluated on 20 episodes)
#   REF_PYTHON=/path/to/venv/bin/python; SIDES="ours" or "reference" runs one side only
set -euo pipefail
cd "$(dirname "$0")/.."
recipe=compare_box
steps=${STEPS:-9600}
part=$([[ $steps -gt 20000 ]] && echo curve || echo health)
out=benchmarks/results/$recipe
mkdir -p "$out"
for seed in ${SEEDS:-1 2 3 4}; do
  if [[ ${SIDES:-ours reference} == *ours* && $part == curve ]]; then
    SEED=$seed STEPS=$steps bash benchmarks/halfcheetah.sh &  # ours at the defaults is the halfcheetah recipe's run
  elif [[ ${SIDES:-ours reference} == *ours* ]]; then
    OMP_NUM_THREADS=1 python benchmarks/run.py --minutes 600 --recipe $recipe --name "${recipe}_${part}_ours_s$seed" \
      ${OVERWRITE:+--overwrite} -- --env-id HalfCheetah-v5 --seed "$seed" --total-timesteps "$steps" \
      --eval-interval 10 --eval-minutes 0 --eval-episodes 8 &
  fi
  if [[ ${SIDES:-ours reference} == *reference* ]]; then
    name="${recipe}_${part}_reference_s$seed"  # its per-epoch CSV and RESULT json recorded, its log in benchmarks/out
    mkdir -p benchmarks/out/$recipe
    (OMP_NUM_THREADS=1 "${REF_PYTHON:-$HOME/amago-ref/bin/python}" benchmarks/probes/reference_box.py --seed "$seed" \
      --updates 1000000000 --env-steps "$steps" --eval-every 10 --eval-episodes 8 --out "$out/$name.csv" \
      > "benchmarks/out/$recipe/$name.log" 2>&1 && grep '^RESULT ' "benchmarks/out/$recipe/$name.log" | cut -c8- \
      > "$out/$name.json") &
  fi
  wait
done
