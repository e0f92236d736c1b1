"""A learner and its collectors, on one buffer, in one command:

    python -m common.launch --collectors 1 amago_agent.py --run-name r --env-id LunarLander-v2 [flags]

The launcher's own options (--collectors, --steps-per-update, --learner-cmd, --collector-flags) come before the
script; everything after it goes to every process. This starts 1 collector (`amago_agent.py [flags] --mode collect`,
seed --seed+1000; a second one gets --seed+2000; output in runs/r/collector{i}.log), then the learner (`--mode
learn`, its output passes through), which writes its weights and runs/r/learner.json, waits until the buffer holds a
file and trains for the epochs its --total-timesteps gives. Collectors live as long as the learner: they wait until
it runs, and end when it ends (its learner.json says "done"), at their next epoch; their own --total-timesteps is
set out of reach. --steps-per-update caps the run's env steps per learner update (0: no cap): collectors wait for
the learner beyond it, after an allowance of one learner epoch. Its default, 16, is 4x one process's 4 env steps per
update at the default flags (800 per 200 updates), but one process's ratio follows --max-seq-len (--replay-ratio):
12.7 at 101 (63 updates), 61.5 at 501 (13), where 16 is 1.26x and 0.26x of it and holds collectors below one
process. Ctrl-C / SIGTERM go to every process (the learner saves its checkpoint). One collector per free core: on 2
cores, one. --learner-cmd runs the learner through a multi-process launcher, e.g. "torchrun --nproc_per_node 2" or
"accelerate launch --multi_gpu --num_processes 2". --resume goes to every process: the learner continues from its
checkpoint, a collector takes the run's flags (runs/r/flags.json) and starts afresh (it has no state worth keeping),
with the run's seed + 1000 i. A collector that ends while the learner runs stops the run, with one line naming it;
a run whose learner is alive is refused before anything starts. --collector-flags go to the collectors only."""

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path


def flag_value(flags, name, default=None):
    """The value of `--name X` or `--name=X` in a list of flags (the last one wins), else default."""
    value = default
    for i, f in enumerate(flags):
        if f == name and i + 1 < len(flags):
            value = flags[i + 1]
        elif f.startswith(name + "="):
            value = f.split("=", 1)[1]
    return value


def without(flags, name, takes_value):
    out, skip = [], False
    for f in flags:
        if skip:
            skip = False
        elif f == name:
            skip = takes_value
        elif not f.startswith(name + "="):
            out.append(f)
    return out


COLLECTOR_TIMESTEPS = 10**15  # a collector's --total-timesteps: out of reach, the learner's end ends it
GRACE_S = 60  # after the learner ends, how long collectors have to end on their own before SIGTERM


def commands(script, flags, collectors, learner_cmd, collector_flags="", steps_per_update=None):
    """-> (run name, [collector commands], learner command). A run name is made if flags have none: every process
    must name the same run. steps_per_update: the collectors' --max-steps-per-update (None or 0: no cap)."""
    for name in ("--mode", "--eval-only"):
        if flag_value(flags, name) is not None or name in flags:
            raise ValueError(f"{name}: common.launch sets the roles itself; leave it out of the script's flags")
    run_name = flag_value(flags, "--run-name")
    if run_name is None:
        run_name = f"{Path(script).stem}__{int(time.time())}"
        flags = [*flags, "--run-name", run_name]
    saved = Path("runs") / run_name / "flags.json"  # --resume: the run's own seed, which the learner restores
    resumed_seed = json.loads(saved.read_text()).get("seed") if "--resume" in flags and saved.exists() else None
    seed = int(flag_value(flags, "--seed", resumed_seed or "1"))
    base = without(without(flags, "--seed", True), "--total-timesteps", True)
    base += ["--total-timesteps", str(COLLECTOR_TIMESTEPS)]
    if steps_per_update:
        base += ["--max-steps-per-update", f"{steps_per_update:g}"]
    collect = [
        [
            sys.executable,
            script,
            *base,
            *shlex.split(collector_flags),
            "--mode",
            "collect",
            "--seed",
            str(seed + 1000 * (i + 1)),
        ]
        for i in range(collectors)
    ]
    learner = [*shlex.split(learner_cmd or shlex.quote(sys.executable)), script, *flags, "--mode", "learn"]
    return run_name, collect, learner


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--collectors", type=int, default=1, help="collector processes (default 1)")
    p.add_argument("--learner-cmd", default=None, help='launcher of the learner, e.g. "torchrun --nproc_per_node 2"')
    p.add_argument(
        "--steps-per-update",
        type=float,
        default=16.0,
        help="the most env steps of the run per learner update (collectors wait beyond it, after one learner epoch's "
        "allowance; 0: no cap); default 16 (against one process's ratio: above)",
    )
    p.add_argument(
        "--collector-flags",
        default="",
        help="flags for the collectors only (they win over the shared ones), e.g. '--no-cuda': collectors on the CPU",
    )
    p.add_argument("script", help="amago_agent.py or amago_multitask.py")
    p.add_argument("flags", nargs=argparse.REMAINDER, help="the script's flags, given to every process")
    a = p.parse_args(argv)
    if a.collectors < 0:
        p.error(f"--collectors must be >= 0, got {a.collectors}")
    if a.steps_per_update < 0:
        p.error(f"--steps-per-update must be >= 0 (0: no cap), got {a.steps_per_update}")
    run_name, collect, learner = commands(
        a.script, a.flags, a.collectors, a.learner_cmd, a.collector_flags, a.steps_per_update
    )
    log_dir = Path("runs") / run_name
    holder = lock_holder(log_dir / "learner.lock")
    if holder:  # checked before a collector starts: it would append to the live run's logs and buffer
        print(
            f"launch: run {run_name!r} is in use by another learner (PID {holder} holds {log_dir / 'learner.lock'}); "
            "nothing was started: wait for it to end, or pick another --run-name",
            file=sys.stderr,
        )
        return 2
    log_dir.mkdir(parents=True, exist_ok=True)
    procs = []  # each in its own session: a terminal's Ctrl-C reaches them once, through the handler below
    stopped = 0

    def forward(signum, frame):
        nonlocal stopped
        stopped = signum
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signum)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    for i, cmd in enumerate(collect):
        log = open(log_dir / f"collector{i}.log", "ab")
        procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        print(f"collector {i} (PID {procs[-1].pid}): {shlex.join(cmd)} > {log.name}", flush=True)
    procs.append(subprocess.Popen(learner, start_new_session=True))
    print(f"learner (PID {procs[-1].pid}): {shlex.join(learner)}", flush=True)
    failed = watch(procs, log_dir, forward, lambda: stopped)
    code = procs[-1].wait()
    deadline = time.time() + GRACE_S  # the learner is done: its collectors end at their next epoch
    for proc in procs[:-1]:
        try:
            proc.wait(timeout=max(deadline - time.time(), 0.1))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)  # one that did not notice: it stops after its current env step
    for i, proc in enumerate(procs[:-1]):
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # a collector loses at most its unfinished trajectories
            proc.wait()
        print(f"collector {i} ended (exit code {proc.returncode})", flush=True)
    return failed or report(code, procs[-1].pid, log_dir, stopped)


def watch(procs, log_dir, forward, stopped, poll_s=0.5):
    """Waits for the learner (procs[-1]). A collector that ends while the learner runs would leave it training on
    stale data: the run is stopped (the learner saves its checkpoint) with one line naming the collector, its exit
    code and its log's `error:` line (else its last line). -> 1 if so, else 0."""
    learner = procs[-1]
    while learner.poll() is None:
        for i, proc in enumerate(procs[:-1]):
            if proc.poll() is not None and not stopped() and not learner_done(log_dir):
                log = log_dir / f"collector{i}.log"
                # its last line, or its `error:` line: a progress bar redrawn at exit can follow that one
                text = log.read_text(errors="replace").replace("\r", "\n")
                lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
                last = ([ln for ln in lines if ln.startswith("error:")] or lines or ["(empty)"])[-1]
                print(
                    f"launch: collector {i} (PID {proc.pid}) ended with exit code {proc.returncode} while the learner "
                    f"runs ({log}: {last}); stopping the run",
                    file=sys.stderr,
                    flush=True,
                )
                forward(signal.SIGTERM, None)
                learner.wait()
                return 1
        time.sleep(poll_s)
    return 0


def learner_done(run_dir):
    """Whether the learner has written "done" in its status file (collectors then end on their own)."""
    try:
        return json.loads((Path(run_dir) / "learner.json").read_text()).get("state") == "done"
    except (OSError, ValueError):
        return False


def lock_holder(path):
    """The PID written in a learner's lock file (common/rundir.py take_lock) while a live process holds its lock, else
    None. Testing takes the lock for an instant, and leaves the file as it was."""
    import fcntl

    try:
        with open(path, "r+") as f:
            try:
                fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except (BlockingIOError, PermissionError):
                return f.read().strip() or "?"
            fcntl.lockf(f, fcntl.LOCK_UN)
    except FileNotFoundError:
        return None
    return None


def report(code, pid, log_dir, stopped):
    """The launcher's exit code: the learner's (128 + N for a signal N, as a shell reports it). A learner that did not
    end by itself nor by a signal the launcher forwarded is reported: which process, how it ended, and that its last
    checkpoint is whole (checkpoints are replaced atomically), so that --resume continues."""
    if code == 0 or (code == 128 + stopped and stopped):  # done, or stopped (and saved) by a forwarded signal
        return code
    if code == 2:  # refused (a bad flag, a run in use, ...): its own `error:` line says why; there is nothing to resume
        return code
    how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
    print(
        f"launch: the learner (PID {pid}) {how}. Its last checkpoint ({log_dir / 'checkpoint.pt'}, if it saved one) is "
        "intact: add --resume to the same command to continue from it",
        file=sys.stderr,
        flush=True,
    )
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
