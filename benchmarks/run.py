"""Train amago_agent.py under a wall-clock budget and report its figures.

    python benchmarks/run.py --minutes 120 --recipe lunarlander --name lunarlander_transformer -- \
        --env-id LunarLander-v2 --traj-encoder transformer

Everything after `--` goes to the script unchanged. Prints the eval curve (greedy eval return vs wall time), writes
benchmarks/out/<name>/curve.csv (and scalars.csv: the loss terms, the Box actor's health and the update rate per epoch),
and ends with one line `RESULT {json}`. With --recipe, the curve, the scalars and the RESULT also go to
benchmarks/results/<recipe>/<name>.csv, <name>_scalars.csv and <name>.json; a run never replaces a recorded result unless given
--overwrite, and its name must start with the recipe's (so each recipe only writes its own files). A SIGTERM to this
process (`kill <pid>`) ends the run early as its budget would: the run saves its checkpoint, and what ran is recorded.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from common.logs import eval_curve, read_scalars, updates_at, write_scalars_csv  # noqa: E402

# the training scalars a recorded run keeps beside its eval curve (<name>_scalars.csv): the loss terms, the Box
# actor's health, the update rate and count
TRAINING_TAGS = ("losses/", "actor/", "charts/updates_per_s", "charts/updates")


def arg_value(argv, flag, default):
    for i, a in enumerate(argv):
        if a in (flag, flag.replace("-", "_")) and i + 1 < len(argv):
            return argv[i + 1]
    return default


def target_reached(run_dir, target, since=0.0):
    """True once any eval written to the run's tensorboard log since `since` (a time) is at or above target."""
    evals = read_scalars(run_dir).get("eval/return", []) if run_dir.is_dir() else []
    return any(v >= target for t, _, v in evals if t >= since)


def per_env_curve(scalars, start_time, metric):
    """CSV text: minutes, env steps, updates and eval/<env>/<metric> of every env, one row per evaluation (the n-th
    value of each env is the n-th eval: every eval logs every env of the eval set)."""
    tags = sorted(t for t in scalars if t.startswith("eval/") and t.endswith("/" + metric) and t.count("/") == 2)
    updates = updates_at(scalars)
    lines = ["minutes,env_steps,updates," + ",".join(tag.split("/")[1] + "/" + metric for tag in tags)]
    for evals in zip(*(scalars[tag] for tag in tags)):
        t, step = evals[0][0], evals[0][1]
        values = ",".join(f"{v:.3f}" for _, _, v in evals)
        lines.append(f"{(t - start_time) / 60:.2f},{step},{updates(t)},{values}")
    return "\n".join(lines) + "\n" if len(lines) > 1 else None


def gpu_model(script_args):
    """{"gpu": the CUDA device's name} where the run trains on one (torch sees it, no --no-cuda), else {}."""
    import torch

    return {"gpu": torch.cuda.get_device_name()} if torch.cuda.is_available() and "--no-cuda" not in script_args else {}


def torch_threads():
    """The threads the run's torch uses (the child inherits our environment): OMP_NUM_THREADS if set, else torch's
    default, the physical cores. Alone here, two threads update ~1.8x as fast as one (the update is compute-bound)."""
    import torch

    return torch.get_num_threads()


def cpu_model():
    """The machine's processor as /proc/cpuinfo names it (None elsewhere): runs compare only on the same one."""
    try:
        names = [ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")]
    except OSError:
        return None
    return f"{names[0]} x{len(names)}" if names else None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--minutes", type=float, required=True, help="wall-clock budget; the run is stopped after it")
    p.add_argument("--name", required=True, help="run name (output in benchmarks/out/<name>)")
    p.add_argument("--script", default="amago_agent.py")
    p.add_argument("--target", type=float, default=None, help="report the first minute the eval return reached this")
    p.add_argument("--stop-at-target", action="store_true", help="stop the run at the first eval at or above --target")
    p.add_argument("--recipe", default=None, help="record the result in benchmarks/results/<recipe>/<name>.{csv,json}")
    p.add_argument("--overwrite", action="store_true", help="replace the recorded result of the same name")
    p.add_argument(
        "--resume-from",
        default=None,
        help="continue the recorded run of this name (of --recipe) from its last checkpoint, in a copy of its output "
        "folder: the curve goes on from the earlier run's minutes, env steps and updates",
    )
    p.add_argument("--per-env", default=None, help="also write <name>_per_env.csv: eval/<env>/<this metric> per env")
    p.add_argument(
        "--collectors",
        type=int,
        default=0,
        help="run a learner with this many collector processes (python -m common.launch) instead of one process",
    )
    p.add_argument("--steps-per-update", type=float, default=16.0, help="with --collectors: common.launch's cap")
    p.add_argument(
        "--record-only",
        action="store_true",
        help="start nothing: record the run already in benchmarks/out/<name> (its run.py killed, e.g. by a restart) "
        "from its logs, its wall time from its first to its last logged scalar; pass the script args it ran with",
    )
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if a.stop_at_target and a.target is None:
        p.error("--stop-at-target needs --target")
    record = ROOT / "benchmarks" / "results" / a.recipe if a.recipe else None
    if record and not a.name.startswith(a.recipe):
        p.error(f"--name {a.name!r} must start with the recipe name {a.recipe!r}")
    taken = [f for f in (record / f"{a.name}.csv", record / f"{a.name}.json") if f.exists()] if record else []
    if taken and not a.overwrite:
        p.error(
            f"{taken[0].relative_to(ROOT)} holds a recorded result; pass --overwrite to replace it, or another --name"
        )
    script_args = [x for x in a.script_args if x != "--"]
    out = ROOT / "benchmarks" / "out" / a.name
    before = None  # a continued run's recorded result
    if a.resume_from:  # checked before anything is removed
        earlier = ROOT / "benchmarks" / "out" / a.resume_from
        recorded = [record / f"{a.resume_from}.json", record / f"{a.resume_from}.csv"] if record else []
        ckpts = sorted(earlier.glob("runs/*/checkpoint.pt"))  # a continued run keeps the run name it continues
        if a.resume_from == a.name:
            p.error(f"--resume-from {a.resume_from!r} is --name: give the continuation a name of its own")
        if not (recorded and all(f.exists() for f in recorded) and len(ckpts) == 1):
            p.error(
                f"--resume-from {a.resume_from!r} needs --recipe, its recorded result (.json and .csv) and one "
                f"checkpoint in {earlier.relative_to(ROOT)}/runs/*/"
            )
        before = json.loads(recorded[0].read_text())
    if a.record_only and not (out / "runs" / a.name).is_dir():
        p.error(f"--record-only: no run folder {(out / 'runs' / a.name).relative_to(ROOT)} to record")
    # the scratch output of an earlier run of this name: its logs would mix with ours (--record-only records it)
    if (out / "runs").exists() and not a.record_only:
        if not a.overwrite:
            p.error(f"{out.relative_to(ROOT)} holds an earlier run's output; pass --overwrite to replace it")
        shutil.rmtree(out)
    run_name = a.name
    if before:
        shutil.copytree(earlier, out, dirs_exist_ok=True)  # the earlier run's folder stays as it was
        run_name, script_args = ckpts[0].parent.name, [*script_args, "--resume"]  # its flags come from its flags.json
        flags = out / "runs" / run_name / "flags.json"  # the copy's buffer is its own
        flags.write_text(json.dumps({**json.loads(flags.read_text()), "buffer_dir": str(out / "buffers")}, indent=1))
    out.mkdir(parents=True, exist_ok=True)
    launch = ["-m", "common.launch", "--collectors", str(a.collectors), "--steps-per-update", f"{a.steps_per_update:g}"]
    cmd = [
        sys.executable,
        *(launch if a.collectors else []),
        str(ROOT / a.script),
        *script_args,
        "--run-name",
        run_name,
        "--buffer-dir",
        str(out / "buffers"),
    ]
    print("command:", " ".join(cmd[1:]), flush=True)
    if a.record_only:
        record_run(a, out, run_name, script_args, record, before)
        return
    start = time.time()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen(cmd, cwd=out, env=env, stdout=open(out / "stdout.log", "w"), stderr=subprocess.STDOUT)

    def stop(signum, frame):  # stopped by hand (`kill`): stop the run too; it saves a checkpoint, then we record it
        print("stopping: SIGTERM", flush=True)
        proc.terminate()

    signal.signal(signal.SIGTERM, stop)
    deadline, rc = start + a.minutes * 60, None
    poll = 3.0 if a.stop_at_target else 30.0  # seconds between looks at the run's evals
    while rc is None:
        try:
            rc = proc.wait(timeout=min(poll, max(0.1, deadline - time.time())))
        except subprocess.TimeoutExpired:
            hit = a.stop_at_target and target_reached(out / "runs" / run_name, a.target, since=start)
            if hit or time.time() >= deadline:
                print("stopping:", "target reached" if hit else "budget spent", flush=True)
                proc.terminate()  # checkpoints and buffer files are written atomically, so stopping anywhere is safe
                rc = proc.wait()
    wall = time.time() - start
    record_run(a, out, run_name, script_args, record, before, start, wall, rc)


def record_run(a, out, run_name, script_args, record, before, start=None, wall=None, rc="record-only"):
    """Write the run's curve, scalars and RESULT (to --recipe's folder too) from its logged scalars."""
    if rc not in (0, -signal.SIGTERM, 128 + signal.SIGTERM, "record-only"):  # ended with an error: nothing to record
        sys.exit(f"the run failed (exit code {rc}): see {(out / 'stdout.log').relative_to(ROOT)}")
    scalars, earlier_rows = read_scalars(out / "runs" / run_name), []
    if start is None:  # --record-only: the run's own clock, from its first logged scalar to its last
        times = [e[0] for v in scalars.values() for e in v]
        start, wall = min(times), max(times) - min(times)
    if before:  # the earlier run's rows as recorded; our events go on from its minutes (its own are left out)
        scalars = {k: [e for e in v if e[0] >= start] for k, v in scalars.items()}
        start, wall = start - before["wall_s"], wall + before["wall_s"]
        lines = (record / f"{a.resume_from}.csv").read_text().splitlines()[1:]
        earlier_rows = [x.split(",") for x in lines]
    curve = [(float(m), int(s), int(u), float(r)) for m, s, u, r, *_ in earlier_rows] + eval_curve(scalars, start)
    # --eval-sampled-too: each greedy eval is followed by one on the same episodes with sampled actions
    sampled = [float(x[4]) if len(x) > 4 and x[4] else None for x in earlier_rows]  # one per curve row
    sampled += [v for _, _, v in sorted(scalars.get("eval_sampled/return", []), key=lambda e: e[0])]
    sampled_values = [v for v in sampled if v is not None]
    with open(out / "curve.csv", "w") as f:
        f.write("minutes,env_steps,updates,eval_return" + (",eval_sampled_return\n" if sampled_values else "\n"))
        for i, row in enumerate(curve):
            value = sampled[i] if i < len(sampled) else None
            extra = ("," + (f"{value:.2f}" if value is not None else "")) if sampled_values else ""
            f.write("{:.2f},{:d},{:d},{:.2f}".format(*row) + extra + "\n")
            print(
                "  {:6.1f} min  {:8d} steps  {:7d} updates  eval return {:8.1f}".format(*row)
                + extra.replace(",", "  sampled ")
            )
    steps = max((s for _, s, _ in scalars.get("charts/SPS", [])), default=before["env_steps"] if before else 0)
    updates = max((v for _, _, v in scalars.get("charts/updates", [])), default=before["updates"] if before else 0)
    peak_mb = None if rc == "record-only" else round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    result = {
        "name": a.name,
        "env_id": arg_value(script_args, "--env-id", before["env_id"] if before else "CartPole-v1"),
        "traj_encoder": arg_value(script_args, "--traj-encoder", before["traj_encoder"] if before else "transformer"),
        "seed": int(arg_value(script_args, "--seed", before["seed"] if before else 1)),
        "env_steps": steps,
        "updates": int(updates),
        "wall_s": round(wall, 1),
        "env_steps_per_s": round(steps / wall, 1),
        "updates_per_s": round(updates / wall, 2),
        "torch_threads": torch_threads(),
        "cpu": cpu_model(),
        **gpu_model(script_args),
        "collectors": a.collectors,
        "peak_rss_mb": peak_mb,
        "final_eval_return": round(curve[-1][3], 2) if curve else None,
        "best_eval_return": round(max(r[3] for r in curve), 2) if curve else None,
        "first_minute_at_or_above": None,
        "exit_code": rc,
    }
    if before:
        result["resumed_from"] = a.resume_from
    if sampled_values:
        result["final_eval_sampled_return"] = round(sampled_values[-1], 2)
        result["best_eval_sampled_return"] = round(max(sampled_values), 2)
    # every eval metric's last three values (mean and spread of the final evals; per attempt where the env logs them)
    evals = sorted(t for t in scalars if t.split("/")[0] in ("eval", "eval_sampled"))
    result["last_evals"] = {t: [round(v, 4) for _, _, v in sorted(scalars[t])[-3:]] for t in evals}  # by wall time
    if a.target is not None:
        hits = [r[0] for r in curve if r[3] >= a.target]
        result["first_minute_at_or_above"] = {str(a.target): round(hits[0], 1) if hits else None}
    per_env = per_env_curve(scalars, start, a.per_env) if a.per_env else None
    earlier_per_env = record / f"{a.resume_from}_per_env.csv" if before else None
    if per_env and earlier_per_env and earlier_per_env.exists():  # the earlier run's rows first, as in the curve
        head, *rows = per_env.splitlines(keepends=True)
        per_env = head + "".join(earlier_per_env.read_text().splitlines(keepends=True)[1:]) + "".join(rows)
    earlier_scalars = record / f"{a.resume_from}_scalars.csv" if before else None
    earlier_scalars = (
        earlier_scalars.read_text().splitlines()[1:] if earlier_scalars and earlier_scalars.exists() else []
    )
    earlier_scalars = [row.split(",") for row in earlier_scalars]
    write_scalars_csv(scalars, out / "scalars.csv", TRAINING_TAGS, start, earlier_scalars)
    if per_env:
        (out / "per_env.csv").write_text(per_env)
        head, last = per_env.splitlines()[0].split(",")[3:], per_env.splitlines()[-1].split(",")[3:]
        result["final_per_env"] = {k: float(v) for k, v in zip(head, last)}
    print("RESULT " + json.dumps(result), flush=True)
    if record:
        record.mkdir(parents=True, exist_ok=True)
        if per_env:
            (record / f"{a.name}_per_env.csv").write_text(per_env)
        (record / f"{a.name}.csv").write_text((out / "curve.csv").read_text())
        if (out / "scalars.csv").exists():
            (record / f"{a.name}_scalars.csv").write_text((out / "scalars.csv").read_text())
        (record / f"{a.name}.json").write_text(json.dumps({"recipe": a.recipe, **result}, indent=1) + "\n")


if __name__ == "__main__":
    main()
