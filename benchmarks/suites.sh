#!/usr/bin/env bash
# The benchmark suites of envs/ (install: requirements-suites.txt). One CPU-sized learning run, then the GPU-scale
# commands, one per suite (the reference's settings where they fit one GPU; `--num-envs` actors, long contexts).
# Usage: bash benchmarks/suites.sh          (the CPU run: BabyAI, two easy single-room levels, 30 minutes)
#        SUITE=metaworld bash benchmarks/suites.sh   (a GPU-scale run: metaworld, babyai, atari, procgen, xland, dmc)
# CPU: BabyAI GoToRedBallNoDists + GoToObj, per-level greedy eval success (a random policy: see the README table).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${SUITE:-cpu}" in
cpu)
  OMP_NUM_THREADS=1 python benchmarks/run.py --minutes 30 --script amago_multitask.py --recipe suites_babyai_easy --name suites_babyai_easy -- \
    --env-id envs:BabyAI-MT-Easy-v0 --traj-encoder transformer --max-seq-len 32 --total-timesteps 100000 \
    --eval-interval 2 --eval-episodes 48 ;;
metaworld)  # ML1 reach, 3 attempts of 500 steps per goal; the whole rollout in context
  python benchmarks/run.py --minutes 600 --script amago_multitask.py --recipe suites_metaworld_ml1_reach --name suites_metaworld_ml1_reach -- \
    --env-id envs:MetaWorld-ML1-reach-v0 --traj-encoder transformer --max-seq-len 256 --num-envs 24 \
    --d-model 256 --n-layers 3 --total-timesteps 10000000 --eval-interval 10 --eval-episodes 24 ;;
babyai)  # seven levels, rooms / doors / keys
  python benchmarks/run.py --minutes 600 --script amago_multitask.py --recipe suites_babyai_mt --name suites_babyai_mt -- \
    --env-id envs:BabyAI-MT-v0 --traj-encoder transformer --max-seq-len 256 --num-envs 24 --d-model 256 \
    --n-layers 3 --total-timesteps 20000000 --eval-interval 10 --eval-episodes 96 ;;
atari)  # five games, one network, unclipped rewards
  python benchmarks/run.py --minutes 600 --script amago_multitask.py --recipe suites_atari_multigame --name suites_atari_multigame -- \
    --env-id envs:Atari-MultiGame-v0 --tstep-encoder cnn --cnn impala --traj-encoder transformer --max-seq-len 64 \
    --num-envs 30 --d-model 256 --n-layers 3 --total-timesteps 50000000 --eval-interval 20 --eval-episodes 30 ;;
procgen)  # two attempts per level, memory mode
  python benchmarks/run.py --minutes 600 --script amago_multitask.py --recipe suites_procgen_memory --name suites_procgen_memory -- \
    --env-id envs:Procgen-Memory-TwoShot-v0 --tstep-encoder cnn --cnn impala --traj-encoder transformer \
    --max-seq-len 256 --num-envs 24 --d-model 256 --n-layers 3 --total-timesteps 50000000 --eval-interval 20 ;;
xland)  # 4 attempts per hidden ruleset, 512 actors in one jax call
  python benchmarks/run.py --minutes 600 --recipe suites_xland_trivial --name suites_xland_trivial -- \
    --env-id envs:XLand-Trivial-R1-9x9-v0 --env-mode already_vectorized --num-envs 512 --traj-encoder transformer \
    --max-seq-len 512 --d-model 256 --n-layers 3 --total-timesteps 100000000 --eval-interval 10 ;;
dmc)  # cheetah run, 1,000-step episodes
  python benchmarks/run.py --minutes 600 --recipe suites_dmc_cheetah_run --name suites_dmc_cheetah_run -- \
    --env-id envs:DMC-cheetah-run-v0 --traj-encoder transformer --max-seq-len 64 --num-envs 16 \
    --total-timesteps 3000000 --eval-interval 10 --eval-episodes 16 ;;
*) echo "SUITE must be one of: cpu metaworld babyai atari procgen xland dmc, got ${SUITE}" >&2; exit 2 ;;
esac
