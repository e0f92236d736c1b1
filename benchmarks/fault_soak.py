"""Fault soak: kill -9 a small training run again and again, resume it each time with --resume, and check at the end
that every trajectory file and the checkpoint load cleanly.

    OMP_NUM_THREADS=1 python benchmarks/fault_soak.py --kills 24

The kills take turns: the moment a checkpoint is being written (its .tmp file exists), the moment a trajectory file is
being written (a .tmp file in the buffer), at a random moment (most of an epoch is training), and SIGTERM to the run's
process group at a random moment (as SLURM or systemd stop a job: the run must save and exit 143 within
--hang-s seconds, else it counts as a hang). --env-mode async runs the envs in worker processes. Each kill is followed
by --resume (a plain start while the run has saved nothing yet); the last process runs two more epochs to the end.
Prints one line `RESULT {json}`: kills, resumes, corrupt_files (must be 0), epochs_lost_per_kill (epochs the killed
process had finished minus the epoch its successor resumed at), seconds_lost_per_kill (time since the last checkpoint)
and wall_s. Not part of the tests (it takes minutes)."""

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NAME = "soak"
SIZES = dict(d_model=16, n_layers=1, n_heads=2, d_ff=32, tstep_hidden=16, tstep_dim=16, actor_hidden=16)
SIZES.update(critic_hidden=16, num_envs=4, batch_size=8, max_seq_len=16, traj_save_len=32)
KINDS = ("checkpoint", "trajectory", "random", "group-sigterm")
RUN = dict(env_id="CartPole-v1", timesteps_per_epoch=50, batches_per_epoch=30, eval_interval=0, num_workers=1)


def flags(d):
    return [x for k, v in d.items() for x in ("--" + k.replace("_", "-"), str(v))]


def start(work, args, extra):
    cmd = [sys.executable, str(ROOT / "amago_agent.py"), *flags({**SIZES, **RUN, **args}), "--run-name", NAME, *extra]
    log = open(work / f"log{len(list(work.glob('log*')))}.txt", "w+")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(cmd, cwd=work, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True), log


def wait_for(proc, found, timeout, poll=0.0005):
    """Poll until found() or timeout; True if found() while the process still ran."""
    end = time.time() + timeout
    while time.time() < end and proc.poll() is None:
        if found():
            return True
        time.sleep(poll)
    return False


def started(log):  # the script prints its model summary once set up (after "resumed ..." when it resumes)
    return lambda: re.search(r"memory, [\d,]+ parameters, ", text(log)) is not None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kills", type=int, default=24)
    p.add_argument("--checkpoint-interval", type=int, default=2, help="epochs between checkpoints (the script's flag)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", default=None, help="work folder (default: a temporary one)")
    p.add_argument("--env-mode", default="sync", choices=["sync", "async"], help="the script's --env-mode")
    p.add_argument("--hang-s", type=float, default=120, help="a SIGTERM'd run that has not exited by then hangs")
    a = p.parse_args()
    rng = random.Random(a.seed)
    work = Path(a.dir or tempfile.mkdtemp(prefix="fault_soak_"))
    work.mkdir(parents=True, exist_ok=True)
    ckpt, fifo = work / "runs" / NAME / "checkpoint.pt", work / "buffers" / NAME / "fifo"
    args = dict(total_timesteps=10**8, checkpoint_interval=a.checkpoint_interval, env_mode=a.env_mode)
    t0 = time.time()
    kills, resumes, from_ckpt, lost_epochs, lost_s, caught, failures, hangs = [], 0, 0, [], [], [], [], 0
    prev_log = None
    for k in range(a.kills + 1):
        has_data = fifo.is_dir() and any(n.endswith(".npz") for n in os.listdir(fifo))
        resume = ckpt.exists() or has_data
        last = k == a.kills
        if last:  # run to the end: two more epochs
            epoch = torch_load(ckpt)["counters"]["epoch"] if ckpt.exists() else 0
            args["total_timesteps"] = (epoch + 2) * RUN["timesteps_per_epoch"] * SIZES["num_envs"]
        proc, log = start(work, args, ["--resume"] if resume else [])
        if prev_log is not None:  # epochs the killed process had finished minus the epoch this one resumes at
            if wait_for(proc, started(log), 120, poll=0.05):
                resumes += resume
            else:
                failures.append(f"start {k}: {text(log)[-500:]}")
            m = re.search(r"resumed \S+ at epoch (\d+)", text(log))  # else: nothing checkpointed yet, epoch 0
            lost_epochs.append(finished_epochs(prev_log) - (int(m.group(1)) if m else 0))
            from_ckpt += bool(m)
        if last:
            rc = proc.wait(timeout=600)
            if rc != 0:
                failures.append(f"final run exited {rc}: {text(log)[-1500:]}")
            break
        kind = KINDS[k % len(KINDS)]
        if kind == "checkpoint":
            tmp = ckpt.with_name(f".{ckpt.name}.{proc.pid}.tmp")  # the writer's temp file
            hit = wait_for(proc, tmp.exists, 60)
        elif kind == "trajectory":
            hit = wait_for(proc, lambda: fifo.is_dir() and any(n.endswith(".tmp") for n in os.listdir(fifo)), 60)
        else:
            wait_for(proc, started(log), 120, poll=0.05)
            hit = not wait_for(proc, lambda: False, rng.uniform(0.5, 8.0))
        if proc.poll() is not None:
            failures.append(f"kill {k}: the run had exited ({proc.returncode}): {text(log)[-1500:]}")
        if kind == "group-sigterm":  # the whole process group, workers included: it saves and exits 143
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                rc = proc.wait(timeout=a.hang_s)
                if rc != 143:
                    failures.append(f"kill {k}: SIGTERM to the group: exit {rc}: {text(log)[-1500:]}")
            except subprocess.TimeoutExpired:
                hangs += 1
                failures.append(f"kill {k}: SIGTERM to the group: still running after {a.hang_s} s")
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # SIGKILL: no handler, no cleanup (the workers too)
        except ProcessLookupError:  # the group has ended
            pass
        proc.wait()
        lost_s.append(round(time.time() - ckpt.stat().st_mtime, 2) if ckpt.exists() else None)
        kills.append(kind)
        caught.append(hit)
        prev_log = log

    corrupt, checked = check_files(fifo, ckpt)
    result = {
        "kills": len(kills),
        "kills_by_moment": {kind: kills.count(kind) for kind in KINDS},
        "kills_in_the_act": sum(caught[i] for i, kind in enumerate(kills) if kind in ("checkpoint", "trajectory")),
        "hangs": hangs,
        "env_mode": a.env_mode,
        "resumes": resumes,
        "resumes_from_a_checkpoint": from_ckpt,
        "buffer_files_checked": checked,
        "corrupt_files": corrupt,
        "stale_tmp_files": len([n for d in (fifo, ckpt.parent) for n in os.listdir(d) if n.endswith(".tmp")]),
        "epochs_lost_per_kill": lost_epochs,
        "epochs_lost_mean": round(float(np.mean(lost_epochs)), 2) if lost_epochs else None,
        "epochs_lost_max": max(lost_epochs, default=None),
        "seconds_lost_per_kill_mean": round(float(np.mean([s for s in lost_s if s is not None])), 2),
        "seconds_lost_per_kill_max": max(s for s in lost_s if s is not None),
        "checkpoint_interval": a.checkpoint_interval,
        "failures": failures,
        "wall_s": round(time.time() - t0, 1),
    }
    print("RESULT " + json.dumps(result), flush=True)


def text(log):
    log.flush()
    with open(log.name, errors="replace") as f:
        return f.read()


def finished_epochs(log):
    """The last tqdm count `k/N` the process printed (tqdm prints after each epoch, which here lasts > 0.1 s)."""
    counts = re.findall(r"(\d+)/\d+ \[", text(log))
    return int(counts[-1]) if counts else 0


def torch_load(path):
    import torch

    return torch.load(path, map_location="cpu", weights_only=True)


def check_files(fifo, ckpt):
    """Every trajectory file must load with consistent lengths and this run's shapes, and the checkpoint must load
    into a fresh agent and optimizer. -> (corrupt files, files checked)."""
    import gymnasium as gym
    import torch

    import amago_agent as amago
    from common.guards import read_trajectory

    args = amago.Args(**SIZES, **RUN)
    envs = amago.make_vec_env(args.env_id, args.num_envs, "sync", 0)
    obs_space, act_space = envs.single_observation_space["obs"], envs.single_action_space
    buffer = amago.DiskReplayBuffer(fifo.parent, 10**6, args.max_seq_len, 2, True, obs_space=obs_space)
    corrupt = 0
    files = buffer.files()
    for f in files:
        try:
            data = read_trajectory(f, obs_space, 2)
            assert all(np.isfinite(v).all() for v in data.values() if v.dtype.kind == "f")
        except Exception as e:
            print(f"corrupt: {f}: {type(e).__name__}: {e}")
            corrupt += 1
    agent = amago.Agent(args, obs_space, act_space)
    opt = torch.optim.AdamW(agent.trainable_parameters(), lr=1e-3)
    explore = amago.EpsilonGreedy(args.num_envs, gym.spaces.Discrete(2), 1.0, 0.05, 100, 0)
    try:
        counters = amago.load_checkpoint(ckpt, agent, opt, explore)
        assert {s["step"].item() for s in opt.state_dict()["state"].values()} <= {counters["updates"]}
    except Exception as e:
        print(f"corrupt: {ckpt}: {type(e).__name__}: {e}")
        corrupt += 1
    return corrupt, len(files) + 1


if __name__ == "__main__":
    main()
