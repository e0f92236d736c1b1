#!/usr/bin/env bash
# The benchmark suites of envs/ (install: requirements-suites.txt). CPU-sized learning runs (one thread each, each
# against the uniform-random policy of benchmarks/random_baseline.py), then the GPU-scale commands, one per suite (the
# reference's settings where they fit one GPU; `--num-envs` actors, long contexts).
# Usage: SUITE=<name> bash benchmarks/suites.sh
#   CPU:  atari_qbert_cpu       Atari Q*bert from 84x84 frames through a small Nature CNN, 2 seeds x 40 min side by side
#         babyai_easy           BabyAI GoToRedBallNoDists + GoToObj, amago_multitask.py, 2 seeds x 20 min
#         dmc_cheetah_cpu       DMC cheetah-run, 25 min
#         metaworld_reach50_nopuck_cpu  Meta-World ML1 reach (a hidden goal, 3 attempts of 50 steps, the whole
#                               150-step rollout in context), the hand and gripper only in the observation (the puck
#                               would name each train goal), 2 critics and one discount, 2 seeds x 110 min side by side
#         metaworld_reach50_sparse_cpu  the same reach with a sparse reward (1 per step within the 5-cm success
#                               radius): the sparse point robot's recipe (the defaults, the whole rollout in context),
#                               1 seed, 100,000 env steps (at most 150 min)
#         metaworld_reach50_sparse10cm_cpu  the same with the reward 1 - d / 10 cm within 10 cm of the goal
#         xland_cpu             XLand-MiniGrid trivial 9x9 (a hidden goal object, 4 attempts), 32 jax actors,
#                               2 seeds x 30 min
#         budget                what the CPU cannot do: one core's update and acting speed at the GPU commands'
#                               shapes (Procgen memory, Atari five games, Meta-World ML1 reach and ML45, BabyAI seven
#                               levels), and the hours their budgets take at those speeds (benchmarks/speed.py --budget)
#         budget_gpu            the same on a CUDA GPU (recipe suites_budget_gpu)
#         smoke                 every suite for 2 minutes each, the GPU commands' shapes at CPU sizes: what runs and
#                               how fast on this CPU (recipe suites_smoke), not learning
#   GPU:  metaworld babyai atari procgen xland dmc
# The probes/suites_vs_random.py table says whether each seed beats random. SEEDS="1" runs one seed; MINUTES overrides a CPU
# run's budget; TAG=check_ writes under check_<recipe>; OVERWRITE=1 replaces recorded runs.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${TAG:-}
baseline() {  # baseline RECIPE ENV_ID [flags]: the uniform-random policy's eval metrics, recorded beside the runs
  local recipe=$tag$1 env=$2; shift 2
  OMP_NUM_THREADS=1 python benchmarks/random_baseline.py --env-id "$env" --episodes 32 "$@" \
    --record "benchmarks/results/$recipe/${recipe}_random.json" | tail -n 1
}
cpu() {  # cpu RECIPE NAME MINUTES [run.py flags] -- script flags
  local recipe=$tag$1 name=$tag$2 minutes=${MINUTES:-$3}; shift 3
  OMP_NUM_THREADS=1 python benchmarks/run.py --minutes "$minutes" --recipe "$recipe" --name "$name" ${OVERWRITE:+--overwrite} "$@"
}
case "${SUITE:-}" in
atari_qbert_cpu)  # 2 seeds side by side, each a learner + 1 collector; Nature CNN at (16, 32, 32), 16 frames of context
  baseline suites_atari_qbert_cpu envs:Atari-Qbert-v0 --episodes 256
  for seed in ${SEEDS:-1 2}; do
    cpu suites_atari_qbert_cpu suites_atari_qbert_cpu_s$seed 40 --collectors 1 -- --env-id envs:Atari-Qbert-v0 \
      --tstep-encoder cnn --cnn nature --cnn-channels 16 32 32 --traj-encoder transformer --max-seq-len 16 \
      --total-timesteps 100000000 --eps-anneal-steps 6250 --eval-interval 15 --eval-episodes 16 --eval-sampled-too \
      --batches-per-epoch 200 --eps-revisit-power 0 --seed $seed &
  done
  wait ;;
babyai_easy)  # a learner + 1 collector (one core each), 2 seeds one after the other; sampled evals beside greedy
  baseline suites_babyai_easy envs:BabyAI-MT-Easy-v0 --episodes 1000
  for seed in ${SEEDS:-1 2}; do
    cpu suites_babyai_easy suites_babyai_easy_s$seed 20 --script amago_multitask.py --collectors 1 -- \
      --env-id envs:BabyAI-MT-Easy-v0 --traj-encoder transformer --max-seq-len 32 --total-timesteps 10000000 \
      --eps-anneal-steps 1250 --eval-interval 5 --eval-episodes 96 --eval-sampled-too --eps-revisit-power 0 --seed $seed
  done ;;
dmc_cheetah_cpu)  # Box actions: the critic at width 64 (as the pendulum recipe), noise annealed over 30k steps
  baseline suites_dmc_cheetah_cpu envs:DMC-cheetah-run-v0
  cpu suites_dmc_cheetah_cpu suites_dmc_cheetah_cpu 25 -- --env-id envs:DMC-cheetah-run-v0 --traj-encoder transformer \
    --total-timesteps 100000 --eps-anneal-steps 3750 --critic-hidden 64 --eval-interval 5 --eval-episodes 8 ;;
metaworld_reach50_nopuck_cpu)  # 2 seeds side by side, each a learner + 1 collector; discount 0.99, the whole rollout
  # in context (3 attempts x 50 steps); 2 critics and one discount (no --multigammas): a 2.6x cheaper update
  baseline suites_metaworld_reach50_nopuck_cpu envs:MetaWorld-ML1-reach-Steps50-NoPuck-v0 --episodes 256
  for seed in ${SEEDS:-1 2}; do
    cpu suites_metaworld_reach50_nopuck_cpu suites_metaworld_reach50_nopuck_cpu_s$seed 110 --collectors 1 -- \
      --env-id envs:MetaWorld-ML1-reach-Steps50-NoPuck-v0 --traj-encoder transformer --max-seq-len 150 --gamma 0.99 \
      --critic-hidden 64 --num-critics 2 --multigammas --total-timesteps 100000000 --eps-anneal-steps 3750 \
      --eval-interval 5 --eval-episodes 32 --eval-sampled-too --batches-per-epoch 200 --seed $seed &
  done
  wait ;;
metaworld_reach50_sparse_cpu | metaworld_reach50_sparse10cm_cpu)  # the first attempt must search; the defaults with
  # the 150-step rollout in context; the reward 1 within 5 cm of the goal, or (sparse10cm) 1 - d / 10 cm within 10 cm
  recipe=suites_$SUITE env=envs:MetaWorld-ML1-reach-Steps50-NoPuck-Sparse-v0
  if [[ $SUITE == *10cm* ]]; then env=${env/Sparse/Sparse10cm}; fi
  baseline $recipe "$env" --episodes 256
  for seed in ${SEEDS:-1}; do
    cpu $recipe ${recipe}_s$seed 150 -- --env-id "$env" --traj-encoder transformer --max-seq-len 150 \
      --total-timesteps 100000 --seed $seed &
  done
  wait ;;
xland_cpu)  # a learner + 1 collector (one core each), 2 seeds one after the other; sampled evals beside greedy
  baseline suites_xland_cpu envs:XLand-Trivial-R1-9x9-v0 --env-mode already_vectorized --num-envs 32 --episodes 256
  for seed in ${SEEDS:-1 2}; do
    cpu suites_xland_cpu suites_xland_cpu_s$seed 30 --collectors 1 -- --env-id envs:XLand-Trivial-R1-9x9-v0 \
      --env-mode already_vectorized --num-envs 32 --traj-encoder transformer --max-seq-len 64 \
      --timesteps-per-epoch 25 --total-timesteps 10000000 --eps-anneal-steps 3125 --eval-interval 5 \
      --eval-episodes 64 --eval-sampled-too --batches-per-epoch 200 --eps-revisit-power 0 --seed $seed
  done ;;
budget | budget_gpu)  # one update at the GPU shape (after warm-ups), 50 acting steps of every actor: `budget` on one
  # CPU thread (2 updates), `budget_gpu` on the CUDA GPU (10 updates, the envs on the CPU); ONLY="atari babyai" a subset
  dir=suites_budget threads=1 timing="--updates 2 --warmup 1"
  [[ $SUITE == budget_gpu ]] && dir=suites_budget_gpu threads="" timing="--updates 10 --warmup 2 --device cuda"
  mkdir -p benchmarks/results/$dir
  big="d_model=256 n_layers=3 batches_per_epoch=200"
  for spec in "procgen envs:Procgen-Memory-TwoShot-v0 50000000 tstep_encoder=cnn cnn=impala max_seq_len=256 num_envs=24" \
    "atari envs:Atari-MultiGame-v0 50000000 tstep_encoder=cnn cnn=impala max_seq_len=64 num_envs=30" \
    "metaworld_ml1_reach envs:MetaWorld-ML1-reach-v0 10000000 max_seq_len=256 num_envs=24" \
    "metaworld_ml45 envs:MetaWorld-ML45-Train-v0 100000000 max_seq_len=256 num_envs=24" \
    "babyai envs:BabyAI-MT-v0 20000000 max_seq_len=256 num_envs=24"; do
    set -- $spec
    name=$1 env=$2 steps=$3; shift 3
    [[ -n ${ONLY:-} && " $ONLY " != *" $name "* ]] && continue
    out=$(env ${threads:+OMP_NUM_THREADS=$threads} python benchmarks/speed.py --env-id $env --encoders transformer \
      $timing --rollout-steps 50 --budget $steps --set $big "$@") || { echo "$name: speed.py failed" >&2; continue; }
    echo "$out"
    res=$(grep '^RESULT ' <<<"$out" | cut -c8-) || { echo "$name: no RESULT line, nothing recorded" >&2; continue; }
    echo "$res" > benchmarks/results/$dir/${dir}_$name.json
  done ;;
smoke)  # 8 actors (xland: 32 in one jax env), d_model 64, 2 layers, max_seq_len 32; short epochs, no evaluation
  small="--max-seq-len 32 --traj-save-len 64 --timesteps-per-epoch 50 --batches-per-epoch 20 --eval-interval 1000000"
  for spec in "metaworld envs:MetaWorld-ML1-reach-v0" "babyai envs:BabyAI-MT-v0" \
    "atari envs:Atari-MultiGame-v0 --tstep-encoder cnn --cnn impala" \
    "procgen envs:Procgen-Memory-TwoShot-v0 --tstep-encoder cnn --cnn impala" \
    "xland envs:XLand-Trivial-R1-9x9-v0 --env-mode already_vectorized --num-envs 32" "dmc envs:DMC-cheetah-run-v0"; do
    set -- $spec
    name=$1 env=$2; shift 2
    cpu suites_smoke suites_smoke_$name 2 --script amago_multitask.py -- --env-id $env $small "$@"
  done ;;
metaworld)  # ML1 reach, 3 attempts of 500 steps per goal; 256 steps of context
  python benchmarks/run.py --minutes 600 --script amago_multitask.py --recipe suites_metaworld_ml1_reach --name suites_metaworld_ml1_reach -- \
    --env-id envs:MetaWorld-ML1-reach-v0 --traj-encoder transformer --max-seq-len 256 --num-envs 24 \
    --d-model 256 --n-layers 3 --total-timesteps 10000000 --eps-anneal-steps 41666 --eval-interval 10 --eval-episodes 24 \
    --batches-per-epoch 200 --eps-revisit-power 0 ;;
babyai)  # seven levels, rooms / doors / keys
  python benchmarks/run.py --minutes 600 --script amago_multitask.py --recipe suites_babyai_mt --name suites_babyai_mt -- \
    --env-id envs:BabyAI-MT-v0 --traj-encoder transformer --max-seq-len 256 --num-envs 24 --d-model 256 \
    --n-layers 3 --total-timesteps 20000000 --eps-anneal-steps 83333 --eval-interval 10 --eval-episodes 96 \
    --batches-per-epoch 200 --eps-revisit-power 0 ;;
atari)  # five games, one network, unclipped rewards
  python benchmarks/run.py --minutes 600 --script amago_multitask.py --recipe suites_atari_multigame --name suites_atari_multigame -- \
    --env-id envs:Atari-MultiGame-v0 --tstep-encoder cnn --cnn impala --traj-encoder transformer --max-seq-len 64 \
    --num-envs 30 --d-model 256 --n-layers 3 --total-timesteps 50000000 --eps-anneal-steps 166666 --eval-interval 20 --eval-episodes 30 \
    --batches-per-epoch 200 --eps-revisit-power 0 ;;
procgen)  # two attempts per level, memory mode
  python benchmarks/run.py --minutes 600 --script amago_multitask.py --recipe suites_procgen_memory --name suites_procgen_memory -- \
    --env-id envs:Procgen-Memory-TwoShot-v0 --tstep-encoder cnn --cnn impala --traj-encoder transformer \
    --max-seq-len 256 --num-envs 24 --d-model 256 --n-layers 3 --total-timesteps 50000000 --eps-anneal-steps 208333 --eval-interval 20 \
    --batches-per-epoch 200 --eps-revisit-power 0 ;;
xland)  # 4 attempts per hidden ruleset, 512 actors in one jax call
  python benchmarks/run.py --minutes 600 --recipe suites_xland_trivial --name suites_xland_trivial -- \
    --env-id envs:XLand-Trivial-R1-9x9-v0 --env-mode already_vectorized --num-envs 512 --traj-encoder transformer \
    --max-seq-len 512 --d-model 256 --n-layers 3 --total-timesteps 100000000 --eps-anneal-steps 19531 --eval-interval 10 \
    --batches-per-epoch 200 --eps-revisit-power 0 ;;
dmc)  # cheetah run, 1,000-step episodes
  python benchmarks/run.py --minutes 600 --recipe suites_dmc_cheetah_run --name suites_dmc_cheetah_run -- \
    --env-id envs:DMC-cheetah-run-v0 --traj-encoder transformer --max-seq-len 64 --num-envs 16 \
    --total-timesteps 3000000 --eps-anneal-steps 18750 --eval-interval 10 --eval-episodes 16 \
    --batches-per-epoch 200 --eps-revisit-power 0 ;;
*) echo "SUITE must be one of: atari_qbert_cpu babyai_easy dmc_cheetah_cpu metaworld_reach50_nopuck_cpu metaworld_reach50_sparse_cpu metaworld_reach50_sparse10cm_cpu xland_cpu budget smoke (CPU), budget_gpu metaworld babyai atari \
procgen xland dmc (GPU), got '${SUITE:-}'" >&2; exit 2 ;;
esac
