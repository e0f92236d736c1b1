"""Interleaved pairs of speed.py runs: two versions of a script, or one script with and without some flags, timed
back to back in fresh processes on one thread each (the order alternates from pair to pair), so that the load of a
shared machine hits both sides alike; prints each pair and the median ratio (after / before, in updates/s) and its
range.

    git show d082d4a:amago_multitask.py > /tmp/before_multitask.py      # the code before a change, outside the repo
    python benchmarks/speed_pairs.py --name multitask_cartpole --pairs 5 --before /tmp/before_multitask.py \\
        --after amago_multitask -- --env-id CartPole-v1 --encoders transformer --updates 20
    python benchmarks/speed_pairs.py --name bf16_box --pairs 3 --before amago_agent --after amago_agent \\
        --after-flags="--mixed-precision bf16" -- --env-id Pendulum-v1 --encoders transformer

Everything after `--` goes to both sides' speed.py (one encoder). A side's flags go as one argument with `=`
(`--after-flags=--compile`): argparse takes a lone value that starts with `--` for an option. Ends with one
`RESULT {json}` line: both sides' updates/s, update times and acting rates per pair, the medians and ranges, the
ratio's median and range, and the commands; --record writes it to benchmarks/results/speed/<name>.json.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def speed_run(script, flags, common):
    cmd = [sys.executable, str(ROOT / "benchmarks/speed.py"), "--script", script, "--threads", "1", *flags, *common]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    if out.returncode or len(lines) != 1:
        raise SystemExit(
            f"{shlex.join(cmd)} failed (rc {out.returncode}, {len(lines)} RESULT lines):\n{out.stderr[-3000:]}"
        )
    return json.loads(lines[0][len("RESULT ") :]), shlex.join(["python", "benchmarks/speed.py", *cmd[2:]])


def summary(xs):
    return {"median": round(statistics.median(xs), 2), "range": [round(min(xs), 2), round(max(xs), 2)]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--name", required=True, help="the comparison's name (its results file with --record)")
    p.add_argument("--before", required=True, help="speed.py --script of the first side (a name or a .py path)")
    p.add_argument("--after", required=True, help="speed.py --script of the second side")
    p.add_argument("--before-flags", default="", help="speed.py flags of the first side only")
    p.add_argument("--after-flags", default="", help="speed.py flags of the second side only")
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--record", action="store_true", help="write benchmarks/results/speed/<name>.json")
    p.add_argument("common", nargs=argparse.REMAINDER, help="-- then speed.py flags for both sides")
    a = p.parse_args()
    common = a.common[1:] if a.common[:1] == ["--"] else a.common
    sides = {"before": (a.before, shlex.split(a.before_flags)), "after": (a.after, shlex.split(a.after_flags))}
    runs, commands = {"before": [], "after": []}, {}
    for i in range(a.pairs):
        for side in ("before", "after") if i % 2 == 0 else ("after", "before"):
            result, commands[side] = speed_run(*sides[side], common)
            runs[side].append(result)
        b, f = runs["before"][-1], runs["after"][-1]
        print(
            f"{a.name} pair {i + 1}: before {b['update_ms']} ms ({b['updates_per_s']}/s), after {f['update_ms']} ms "
            f"({f['updates_per_s']}/s): x{f['updates_per_s'] / b['updates_per_s']:.2f}",
            flush=True,
        )
    ups = {side: [r["updates_per_s"] for r in rs] for side, rs in runs.items()}
    ms = {side: [r["update_ms"] for r in rs] for side, rs in runs.items()}
    ratios = [f / b for b, f in zip(ups["before"], ups["after"])]
    first = runs["after"][0]
    result = {
        "name": a.name,
        "env_id": first["env_id"],
        "traj_encoder": first["traj_encoder"],
        "pairs": a.pairs,
        "threads": 1,
        **{
            side: {
                "command": commands[side],
                "updates_per_s": ups[side],
                "update_ms": ms[side],
                "rollout_env_steps_per_s": [r["env_steps_per_s"] for r in runs[side]],  # speed.py's acting rate
                "page_faults_per_update": [r.get("page_faults_per_update") for r in runs[side]],
                "kernel_ms_per_update": [r.get("kernel_ms_per_update") for r in runs[side]],
            }
            for side in ("before", "after")
        },
        "before_update_ms": summary(ms["before"]),
        "after_update_ms": summary(ms["after"]),
        "ratio_median": round(statistics.median(ratios), 3),
        "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
        "trainable_params": first["trainable_params"],
        "env_steps": None,
        "updates": None,
        "wall_s": None,
        "env_steps_per_s": None,
        "updates_per_s": round(statistics.median(ups["after"]), 2),
        "peak_rss_mb": round(statistics.median(r["peak_rss_mb"] for r in runs["after"])),
        "final_eval_return": None,
    }
    print(
        f"{a.name}: before {result['before_update_ms']['median']} ms, after {result['after_update_ms']['median']} ms "
        f"per update (medians of {a.pairs}); x{result['ratio_median']} (range {result['ratio_range']})",
        flush=True,
    )
    line = "RESULT " + json.dumps(result)
    print(line, flush=True)
    if a.record:
        path = ROOT / "benchmarks/results/speed" / f"{a.name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
