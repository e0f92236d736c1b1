"""Throughput of one learner with 1 and 2 collector processes (`python -m common.launch`) against one `--mode both`
process, at the same sizes, for the same wall-clock time each, with no cap on env steps per update
(`--steps-per-update 0`):

    OMP_NUM_THREADS=1 python benchmarks/probes/scale_throughput.py --minutes 4 -- --env-id LunarLander-v2

Each set-up runs in benchmarks/out/scale_throughput_<setup>/ and is stopped with SIGTERM after --minutes; its
learner's tensorboard log gives the updates and env steps it reached. One `RESULT {json}` line per set-up, and a
summary in benchmarks/results/scale_throughput.json (`--record`).
"""

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from common.logs import read_scalars  # noqa: E402


def run(setup, minutes, flags):
    name = f"scale_throughput_{setup}"
    out = ROOT / "benchmarks" / "out" / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    script = str(ROOT / "amago_agent.py")
    common = [*flags, "--run-name", name, "--eval-interval", "0", "--total-timesteps", "1000000000"]
    if setup == "both":
        cmd = [sys.executable, script, *common]
    else:  # learn_c1, learn_c2: a learner and that many collectors
        launch = [sys.executable, "-m", "common.launch", "--collectors", setup[-1], "--steps-per-update", "0"]
        cmd = [*launch, script, *common]  # uncapped: the rates of the processes as they are
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.time()
    proc = subprocess.Popen(cmd, cwd=out, env=env, stdout=open(out / "stdout.log", "w"), stderr=subprocess.STDOUT)
    time.sleep(minutes * 60)
    proc.send_signal(signal.SIGTERM)  # every process stops at its next step or update
    proc.wait()
    wall = time.time() - start
    scalars = read_scalars(out / "runs" / name)
    updates = max((v for _, _, v in scalars.get("charts/updates", [])), default=0)
    steps = max((s for _, s, _ in scalars.get("charts/updates", [])), default=0)
    return {
        "name": name,
        "setup": setup,
        "env_id": next((flags[i + 1] for i, f in enumerate(flags[:-1]) if f == "--env-id"), "CartPole-v1"),
        "traj_encoder": next((flags[i + 1] for i, f in enumerate(flags[:-1]) if f == "--traj-encoder"), "transformer"),
        "env_steps": int(steps),
        "updates": int(updates),
        "wall_s": round(wall, 1),
        "env_steps_per_s": round(steps / wall, 1),
        "updates_per_s": round(updates / wall, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
        "final_eval_return": None,  # throughput only: evaluation is off
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=4.0, help="wall-clock time of each set-up")
    p.add_argument("--setups", nargs="+", default=["both", "learn_c1", "learn_c2"])
    p.add_argument("--record", action="store_true", help="write benchmarks/results/scale_throughput.json")
    p.add_argument("flags", nargs=argparse.REMAINDER, help="amago_agent.py flags after --, the same for every set-up")
    a = p.parse_args()
    flags = [f for f in a.flags if f != "--"]
    results = []
    for setup in a.setups:
        results.append(run(setup, a.minutes, flags))
        print("RESULT " + json.dumps(results[-1]), flush=True)
    if a.record:
        (ROOT / "benchmarks" / "results" / "scale_throughput.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
