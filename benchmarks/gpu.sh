#!/usr/bin/env bash
# On one CUDA GPU: what the CPU results cannot show (benchmarks/README.md, "gpu"), recorded in benchmarks/results/gpu/.
# `all` (the default) is sized to end within 10 minutes on one H200, so that it can be rerun inside one lease: its
# stages run in this order, each under a time cap, and each also runs alone.
#   quick      tests/test_cuda.py for the transformer, bf16 and the non-finite guard (the whole file: `tests`, ~4 min):
#              each script's loss and gradients on CUDA equal the CPU's; --compile's CUDA-graphed update and acting
#              step equal eager; bf16 autocast, also inside the graph; a non-finite step skipped on the device.
#              Output: gpu_tests_<stage>.txt
#   speed      speed.py --device cuda, transformer, the update and the acting step: at the defaults eager and --compile;
#              at the reference's scale eager, --compile, TF32 (eager) and bf16 autocast (eager); SPEED_ALL=1 adds
#              --compile with TF32 and with bf16: gpu_speed_<shape>[_compile][_tf32|_bf16].json
#   reference  compare_reference.py --device cuda --compile, update_paper: ours compiled against the reference AMAGO 3.3
#              (its own torch.compile; its FlashAttention where flash-attn imports) on the same GPU at the reference's
#              size (REF_BENCH="update_paper update_small" adds the CPU size): gpu_reference_<bench>.json
#   loop       the user's command with --compile, `amago_agent.py --env-id LunarLander-v2 --traj-encoder transformer
#              --compile`, for MINUTES (default 1.5) through run.py, then where its time went (loop_split.py):
#              gpu_lunarlander_transformer_compile.{json,csv} and gpu_lunarlander_transformer_compile_split.json
#   budget     (not in all) the suites' GPU commands' update and acting speed, `SUITE=budget_gpu bash benchmarks/suites.sh`
# Usage: bash benchmarks/gpu.sh [all|quick|tests|speed|reference|loop|budget]
#   DRY=1 runs every command of the stage on the CPU with tiny budgets (torch.compile's aot_eager backend instead of
#   inductor) into a temporary folder, results/gpu untouched: it shows that the commands run, nothing about speed.
#   loop refuses to replace its recorded run unless OVERWRITE=1.
# The GPU machine: python3 (or PYTHON=) holds torch. Packages it lacks travel as wheels that `bash
# benchmarks/gpu_wheels.sh` puts in .whl/ (ours), .whl_ref/ and .ref/ (the reference; all git-ignored: name them in the
# device tool's carry); they are installed here into /tmp/site and /tmp/site_ref, one PYTHONPATH per side.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
if [[ ! $what =~ ^(all|quick|tests|speed|reference|loop|budget)$ ]]; then
  echo "usage: bash benchmarks/gpu.sh [all|quick|tests|speed|reference|loop|budget], got '$what'" >&2
  exit 2
fi
PYTHON=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
install() {  # wheels folder -> target folder
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$2" "$1"/*.whl
}
if [[ -z ${DRY:-} && -d .whl ]]; then  # (DRY runs in this machine's own environment)
  install .whl /tmp/site
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
REF_PYTHON=${REF_PYTHON:-}
if [[ -z ${DRY:-} && -z $REF_PYTHON && -d .whl_ref && -d .ref ]]; then  # the reference's packages, never ours
  install .whl_ref /tmp/site_ref
  printf '#!/bin/sh\nPYTHONPATH=/tmp/site_ref:%s exec %s "$@"\n' "$PWD/.ref" "$(command -v "$PYTHON")" >/tmp/ref_python
  chmod +x /tmp/ref_python
  REF_PYTHON=/tmp/ref_python
fi

if [[ -n ${DRY:-} ]]; then  # the commands on the CPU, tiny
  out=$(mktemp -d)
  device=cpu
  export AMAGO_COMPILE_BACKEND=aot_eager
  REF_PYTHON=${REF_PYTHON:-/root/amago-ref/bin/python}
  quick=(--updates 2 --warmup 1 --rollout-steps 3)
  scaled=(--updates 1 --warmup 1 --rollout-steps 3)
  ref_seconds=1
  minutes=0.5
  loop_name=dry_gpu_loop
  record=(--overwrite)
  echo "DRY: the commands on the CPU, results into $out"
else
  out=benchmarks/results/gpu
  device=cuda
  quick=(--updates 50 --warmup 5)
  scaled=(--updates 20 --warmup 3 --budget 12000000)
  ref_seconds=15
  minutes=${MINUTES:-1.5}
  loop_name=gpu_lunarlander_transformer_compile
  record=(--recipe gpu ${OVERWRITE:+--overwrite})
fi
mkdir -p "$out"
# the reference's scale, README's "one command away": 3.5M parameters, context 128, 12 actors, 1,000 updates per epoch
reference="d_model=256 n_layers=3 d_ff=1024 tstep_hidden=512 tstep_dim=256 actor_hidden=256 critic_hidden=256
  max_seq_len=128 learning_rate=1e-4 timesteps_per_epoch=1000 batches_per_epoch=1000 num_envs=12 traj_save_len=1024"
started=$SECONDS

stage() {  # name, cap in seconds, then the command: a stage that fails or overruns is reported, the next one runs
  local name=$1 cap=$2 rc=0 pid watchdog
  shift 2
  echo "== $name (at most ${cap} s; $((SECONDS - started)) s so far)"
  set -m  # the stage gets its own process group, so that the cap ends all of it (run.py records what ran)
  "$@" &
  pid=$!
  set +m
  (sleep "$cap" && kill -TERM -- "-$pid") >/dev/null 2>&1 &  # (no output: a pipe after us would wait for it)
  watchdog=$!
  wait "$pid" || rc=$?
  kill "$watchdog" 2>/dev/null || true
  if ((rc != 0)); then
    echo "== $name did not finish (exit code $rc; cap ${cap} s)" >&2
  fi
}

tests() {  # pytest -k expression, or nothing for the whole file
  "$PYTHON" -m pytest -q -p no:cacheprovider -rs tests/test_cuda.py ${1:+-k "$1"} 2>&1 | tee "$out/gpu_tests_$what.txt"
}

speed_one() {  # name, then speed.py's flags
  local name=$1 res
  shift
  res=$("$PYTHON" benchmarks/speed.py --env-id LunarLander-v2 --device "$device" --encoders transformer "$@")
  echo "$res" | grep -v '^RESULT '
  grep '^RESULT ' <<<"$res" | cut -c8- >"$out/gpu_speed_$name.json"
}

speed() {
  speed_one defaults "${quick[@]}"
  speed_one defaults_compile "${quick[@]}" --compile
  speed_one reference "${scaled[@]}" --set $reference
  speed_one reference_compile "${scaled[@]}" --compile --set $reference
  speed_one reference_tf32 "${scaled[@]}" --tf32 --set $reference
  speed_one reference_bf16 "${scaled[@]}" --mixed-precision bf16 --set $reference
  if [[ -n ${SPEED_ALL:-} ]]; then
    speed_one reference_compile_tf32 "${scaled[@]}" --compile --tf32 --set $reference
    speed_one reference_compile_bf16 "${scaled[@]}" --compile --mixed-precision bf16 --set $reference
  fi
}

reference_vs_ours() {
  if [[ -z $REF_PYTHON ]]; then
    echo "no reference: run benchmarks/gpu_wheels.sh where a package index is reachable, or set REF_PYTHON" >&2
    return 1
  fi
  local bench res
  for bench in ${REF_BENCH:-update_paper}; do
    res=$("$PYTHON" benchmarks/compare_reference.py --ref-python "$REF_PYTHON" --device "$device" --compile \
      --bench "$bench" --pairs 1 --seconds "$ref_seconds" --threads "$(nproc)")
    echo "$res" | grep -v '^RESULT '
    grep '^RESULT ' <<<"$res" | cut -c8- >"$out/gpu_reference_$bench.json"
  done
}

loop() {
  "$PYTHON" benchmarks/run.py --minutes "$minutes" --name "$loop_name" "${record[@]}" \
    -- --env-id LunarLander-v2 --traj-encoder transformer --compile
  local res
  res=$("$PYTHON" benchmarks/loop_split.py "benchmarks/out/$loop_name/runs/$loop_name")
  echo "$res" | grep -v '^RESULT '
  grep '^RESULT ' <<<"$res" | cut -c8- >"$out/${loop_name}_split.json"
}

case $what in
  all)
    stage quick 100 tests "transformer or bf16 or nonfinite"
    stage speed 240 speed
    stage reference 150 reference_vs_ours
    stage loop "$(python3 -c "print(int(float('$minutes') * 60 + 60))")" loop
    ;;
  quick) tests "transformer or bf16 or nonfinite" ;;
  tests) tests "" ;;
  speed) speed ;;
  reference) reference_vs_ours ;;
  loop) loop ;;
  budget) SUITE=budget_gpu bash benchmarks/suites.sh ;;
esac
echo "== gpu.sh $what: $((SECONDS - started)) s; results in $out"
