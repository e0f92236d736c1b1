#!/usr/bin/env bash
# On a CUDA GPU: what the CPU results cannot show (benchmarks/README.md, "gpu"). Recorded in
# benchmarks/results/gpu/ (and suites_budget_gpu/ for `budget`).
#   tests   tests/test_cuda.py: each script's loss and gradients on CUDA equal the CPU's (every encoder, Discrete and
#           Box actions), bf16 autocast trains, and mamba-ssm's scan / flash-attn's attention (where installed) equal
#           the pure-PyTorch paths
#   speed   benchmarks/speed.py --device cuda: one update and the acting step at the defaults (every encoder) and at
#           the reference's scale (README, "the reference's scale is one command away"):
#           gpu_speed_<shape>_<encoder>.json (mamba: with mamba-ssm's fused scan; mamba_pure_scan: without it)
#   loop    the user's command, `python amago_agent.py --env-id LunarLander-v2 --traj-encoder transformer`, on the GPU
#           for MINUTES (default 2): the training loop end to end (acting, updates, evaluation, checkpoints), its speed
#   budget  the suites' GPU commands' update and acting speed, `SUITE=budget_gpu bash benchmarks/suites.sh` (ONLY= a
#           subset, e.g. ONLY="atari babyai" where Procgen's and Meta-World's packages are not installed)
# Usage: bash benchmarks/gpu.sh [tests|speed|budget|loop|all]   (speed: ENCS= a subset of the encoders). speed and
#   budget rewrite their files; loop, last, refuses to replace its recorded run unless OVERWRITE=1.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
if [[ ! $what =~ ^(tests|speed|budget|loop|all)$ ]]; then
  echo "usage: bash benchmarks/gpu.sh [tests|speed|budget|loop|all], got '$what'" >&2
  exit 2
fi
mkdir -p benchmarks/results/gpu
if [[ $what == tests || $what == all ]]; then
  python -m pytest -q -p no:cacheprovider -rs tests/test_cuda.py
fi
if [[ $what == speed || $what == all ]]; then
  reference="d_model=256 n_layers=3 d_ff=1024 tstep_hidden=512 tstep_dim=256 actor_hidden=256 critic_hidden=256
    max_seq_len=128 learning_rate=1e-4 timesteps_per_epoch=1000 batches_per_epoch=1000 num_envs=12 traj_save_len=1024"
  for shape in defaults reference; do
    set -- --updates 50 --warmup 5
    [[ $shape == reference ]] && set -- --updates 20 --warmup 3 --budget 12000000 --set $reference
    encoders=${ENCS:-ff gru transformer mamba}
    out=$(python benchmarks/speed.py --env-id LunarLander-v2 --device cuda --encoders $encoders "$@")
    echo "$out"
    while read -r res; do  # one RESULT per encoder; mamba's is named _mamba_pure_scan without mamba-ssm's kernel
      enc=$(python -c 'import json, sys; print(json.loads(sys.argv[1])["traj_encoder"])' "$res")
      if [[ $enc == mamba ]] && ! python -c "import mamba_ssm.ops.selective_scan_interface" 2>/dev/null; then
        enc=mamba_pure_scan
      fi
      echo "$res" > benchmarks/results/gpu/gpu_speed_${shape}_$enc.json
    done < <(grep '^RESULT ' <<<"$out" | cut -c8-)
  done
fi
if [[ $what == budget || $what == all ]]; then
  SUITE=budget_gpu bash benchmarks/suites.sh
fi
if [[ $what == loop || $what == all ]]; then
  python benchmarks/run.py --minutes "${MINUTES:-2}" --recipe gpu --name gpu_lunarlander_transformer \
    ${OVERWRITE:+--overwrite} -- --env-id LunarLander-v2 --traj-encoder transformer
fi
