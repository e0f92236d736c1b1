#!/usr/bin/env bash
# Memory and in-context RL recipes on envs/ (each <= 90 min on the 2-core CPU, greedy eval), transformer
# against ff (no memory). AMAGO's structure is kept everywhere (7 gammas acting on the last, 4 critics / 2 for TD,
# PopArt, both actor terms, rl2 inputs); default model sizes (d_model 64, 2 layers). Each recipe writes runs named
# <recipe>_<encoder> and records them in benchmarks/results/<recipe>/. Targets:
#   tmaze_h50   T-Maze passive, H = 50 (TMazePassive-v0). The reference recipe (examples/04_tmaze.py): reward x100,
#               gamma 0.9999, max_seq_len = H + 1 (the whole episode in context), eps 0.5/H in the corridor
#               (--exploration envs.tmaze:TMazeEpsilonGreedy), argmax actions in training and eval (--train-greedy), eps_end 0.01.
#               transformer: success >= 0.95 over 200 eval episodes (eval return >= 0.95 implies it: penalties are
#               <= 0); ff: reaches the junction in >= 90% of the episodes and succeeds in 40-60% (it cannot remember).
#   frozenlake  Meta-Frozen-Lake 4x4, 5 attempts, the attempt index hidden (MetaFrozenLake-HideK-v0: a memory-free
#               policy that sees k/K can act differently per attempt, which is not the memory the test is about);
#               max_seq_len 80 = 5 attempts x 16 steps.
#               ff runs with --hide-rl2: the previous action and reward cross the soft reset and mark the rollout's
#               first step, which gave ff with rl2 attempt 0 0.40 against 0.58 in attempts 1-4
#               (benchmarks/README.md).
#               transformer: success in the last attempts >= attempt 0 + 0.2; ff: gap <= 0.05 (200 eval rollouts).
#   keydoor     Dark Key-Door, 5x5 room, 20-step attempts, 200-step rollouts (DarkKeyDoor-5x5-v0); bilevel
#               exploration over the rollout, reward x100. max_seq_len 100 (5 attempts of context) where the reference
#               puts the whole rollout in context: an update's cost grows (at least) linearly with the window, so 200
#               steps would about halve the updates that fit in 90 min, and once the key and door are found the last 5
#               attempts show where they are. (Measured: --max-seq-len 200 learned no faster per update.)
#               64 actors x 200 steps per epoch (12,800 env steps, i.e. 64 new rooms, per 200 updates): in-context
#               learning is learned across tasks, and the rooms seen, not the updates, held the transformer back: with
#               16 actors it was at 5-8 after 3,000 updates, with 64 at 16. Collecting costs little next to
#               the updates (~3 s of each ~54 s epoch).
#               transformer eval return >= 2x the ff eval return, over 64 rollouts (one per actor).
# The criteria other than the T-Maze return are eval metrics the envs log (eval/<env>/success, ".../reached junction",
# ".../attempt <i> success", ".../doors opened"); the RESULT line's `last_evals` holds the last three of each.
#   (tmaze_h100, the same recipe at H = 100, is retired to benchmarks/results/archive: the defaults learn H = 100
#   faster, bash benchmarks/memory_revisit.sh tmaze_h100.)
#   tmaze_h500  long context: T-Maze H = 500, max_seq_len 501 (the whole episode in context), transformer only, <= 120
#               min (not in `all`). Batch 8 sequences (4,008 tokens; H = 100 trains on 24 x 101 = 2,424).
# A recipe never replaces its recorded results: OVERWRITE=1 does, TAG=check_ writes under another recipe name.
# Usage: bash benchmarks/memory.sh [tmaze_h50|frozenlake|keydoor|all|tmaze_h500]
#   ENCS=transformer MINUTES=60 bash benchmarks/memory.sh frozenlake                  # one encoder
#   AT_DEFAULTS=1 ENCS=transformer MINUTES=60 bash benchmarks/memory.sh frozenlake    # at the scripts' defaults
#   MINUTES=3 TAG=check_ EXTRA="--eval-interval 1" bash benchmarks/memory.sh tmaze_h50   # a short check of the commands
# --padded-sampling none: these runs were recorded when none was the scripts' default (now right).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
if [[ -n ${SEED:-} && ( ${AT_DEFAULTS:-} != 1 || $what != frozenlake ) ]]; then
  echo "SEED=$SEED: only AT_DEFAULTS=1 ... frozenlake runs other seeds" >&2; exit 2
fi
case $what in
tmaze_h50 | frozenlake | keydoor | all | tmaze_h500) ;;
tmaze_h100) echo "tmaze_h100's tuned recipe is retired (benchmarks/results/archive/README.md); the defaults learn it:" \
  "bash benchmarks/memory_revisit.sh tmaze_h100" >&2; exit 2 ;;
*) echo "unknown recipe '$what': tmaze_h50 frozenlake keydoor all tmaze_h500" >&2; exit 2 ;;
esac
minutes=${MINUTES:-90}
extra=${EXTRA:-}  # appended to every command (a later flag overrides an earlier one)
tag=${TAG:-}  # prefix of the recipe and run names
over=${OVERWRITE:+--overwrite}
run() { python benchmarks/run.py --minutes "$minutes" --recipe $tag$1 --name $tag$2 $over "${@:3}"; }  # RECIPE NAME ...


for enc in ${ENCS:-transformer ff}; do  # ENCS=ff runs only ff (to run the two side by side)
  if [[ $what == tmaze_h50 || $what == all ]]; then
    target=$([[ $enc == transformer ]] && echo "--target 0.95 --stop-at-target" || true)
    run tmaze_h50 tmaze_h50_$enc $target -- \
      --env-id envs:TMazePassive-v0 --traj-encoder $enc --exploration envs.tmaze:TMazeEpsilonGreedy --train-greedy \
      --reward-multiplier 100 --gamma 0.9999 --max-seq-len 51 --traj-save-len 51 --timesteps-per-epoch 51 \
      --batches-per-epoch 100 --total-timesteps 200000 --eps-anneal-steps 5000 --eps-end 0.01 \
      --eval-interval 10 --eval-episodes 200 --padded-sampling none --eps-revisit-power 0 $extra
  fi
  if [[ $what == frozenlake || $what == all ]]; then
    hide=$([[ $enc == ff ]] && echo "--hide-rl2" || true)
    # AT_DEFAULTS=1: the scripts' --replay-ratio and --eps-revisit-power instead (runs frozenlake_defaults_<enc>;
    # SEED=N, N > 1: another seed, frozenlake_defaults_<enc>_sN)
    pins="--batches-per-epoch 200 --eps-revisit-power 0" name=frozenlake_$enc seed=""
    if [[ ${AT_DEFAULTS:-} == 1 ]]; then
      pins="" name=frozenlake_defaults_$enc
      if [[ ${SEED:-1} != 1 ]]; then seed="--seed $SEED" name+=_s$SEED; fi
    fi
    run frozenlake $name -- \
      --env-id envs:MetaFrozenLake-HideK-v0 --traj-encoder $enc $hide --max-seq-len 80 --traj-save-len 80 \
      --total-timesteps 250000 --eps-anneal-steps 6250 --eval-interval 5 --eval-episodes 200 --padded-sampling none \
      $pins $seed $extra
  fi
  if [[ $what == keydoor || $what == all ]]; then
    run keydoor keydoor_$enc -- \
      --env-id envs:DarkKeyDoor-5x5-v0 --traj-encoder $enc --exploration bilevel --bilevel-horizon 200 \
      --reward-multiplier 100 --max-seq-len 100 --traj-save-len 200 --num-envs 64 --timesteps-per-epoch 200 \
      --total-timesteps 2000000 --eps-anneal-steps 7812 --eval-interval 5 --eval-episodes 64 --padded-sampling none \
      --batches-per-epoch 200 --eps-revisit-power 0 $extra
  fi
done
# long context: T-Maze H = 500 (TMazePassive-H500-v0), the same recipe, 8 sequences of 501 steps per batch
if [[ $what == tmaze_h500 ]]; then
  minutes=${MINUTES:-120}
  run tmaze_h500 tmaze_h500_transformer --target 0.95 --stop-at-target -- \
    --env-id envs:TMazePassive-H500-v0 --traj-encoder transformer --exploration envs.tmaze:TMazeEpsilonGreedy --train-greedy \
    --reward-multiplier 100 --gamma 0.9999 --max-seq-len 501 --traj-save-len 501 --timesteps-per-epoch 501 \
    --batch-size 8 --batches-per-epoch 100 --total-timesteps 600000 --eps-anneal-steps 15000 --eps-end 0.01 \
    --eval-interval 5 --eval-episodes 200 --padded-sampling none --eps-revisit-power 0 $extra
fi
