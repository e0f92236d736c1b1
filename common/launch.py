"""A learner and its collectors, on one buffer, in one command:

    python -m common.launch --collectors 1 --collector-flags "--total-timesteps 1000000000" \\
        amago_agent.py --run-name r --env-id LunarLander-v2 [flags]

The launcher's own options (--collectors, --learner-cmd, --collector-flags) come before the script; everything after
it goes to every process. This starts 1 collector (`amago_agent.py [flags] --mode collect`, seed --seed+1000; a
second one gets --seed+2000; output in runs/r/collector{i}.log), then the learner (`--mode learn`, its output passes
through), which waits until the buffer holds a file and trains for the epochs its --total-timesteps gives. A
collector stops at its own --total-timesteps, after which the learner trains on a buffer that no longer grows: hence
the collectors' large budget above, which they never reach, since they get SIGTERM when the learner ends. Ctrl-C /
SIGTERM go to every process (the learner saves its checkpoint). One collector per free core: on 2 cores, one.
--learner-cmd runs the learner through a multi-process launcher, e.g. "torchrun --nproc_per_node 2" or "accelerate
launch --multi_gpu --num_processes 2". --resume goes to the learner only (a collector always starts afresh: it has no
state worth keeping); --collector-flags go to the collectors only."""

import argparse
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


def commands(script, flags, collectors, learner_cmd, collector_flags=""):
    """-> (run name, [collector commands], learner command). A run name is made if flags have none: every process
    must name the same run."""
    for name in ("--mode", "--eval-only"):
        if flag_value(flags, name) is not None or name in flags:
            raise ValueError(f"{name}: common.launch sets the roles itself; leave it out of the script's flags")
    run_name = flag_value(flags, "--run-name")
    if run_name is None:
        run_name = f"{Path(script).stem}__{int(time.time())}"
        flags = [*flags, "--run-name", run_name]
    seed = int(flag_value(flags, "--seed", "1"))
    base = without(without(flags, "--seed", True), "--resume", False)
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
        "--collector-flags",
        default="",
        help="flags for the collectors only (they win over the shared ones), e.g. '--total-timesteps 100000000 "
        "--no-cuda': collectors that run until the learner ends, on the CPU",
    )
    p.add_argument("script", help="amago_agent.py or amago_multitask.py")
    p.add_argument("flags", nargs=argparse.REMAINDER, help="the script's flags, given to every process")
    a = p.parse_args(argv)
    if a.collectors < 0:
        p.error(f"--collectors must be >= 0, got {a.collectors}")
    run_name, collect, learner = commands(a.script, a.flags, a.collectors, a.learner_cmd, a.collector_flags)
    log_dir = Path("runs") / run_name
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
    code = procs[-1].wait()
    for proc in procs[:-1]:  # the learner is done: so are its collectors
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs[:-1]:
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # a collector loses at most its unfinished trajectories
            proc.wait()
    return report(code, procs[-1].pid, log_dir, stopped)


def report(code, pid, log_dir, stopped):
    """The launcher's exit code: the learner's (128 + N for a signal N, as a shell reports it). A learner that did not
    end by itself nor by a signal the launcher forwarded is reported: which process, how it ended, and that its last
    checkpoint is whole (checkpoints are replaced atomically), so that --resume continues."""
    if code == 0 or (code == 128 + stopped and stopped):  # done, or stopped (and saved) by a forwarded signal
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
