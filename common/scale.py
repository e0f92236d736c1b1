"""Scaling a run out: its flags (roles, offline / online phases, evaluate-only, several envs, gradient accumulation),
the latest policy weights that a learner hands to collector processes through a file, and evaluate-only's recording
of episodes as trajectory files. `python -m common.launch` starts a learner and its collectors in one command."""

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

import gymnasium as gym
import numpy as np
import torch

from common.amago_env import AmagoEnv, index_obs
from common.checkpoint import CorruptFileError, safe_load
from common.evaluate import evaluate
from common.logs import eval_metrics
from common.rundir import claim_run, signature


@dataclass
class ScaleArgs:
    mode: Literal["both", "collect", "learn"] = "both"
    """both: collect, train, evaluate in one process; learn: train on the buffer only; collect: rollouts only"""
    start_learning_at_epoch: int = 0
    """no updates before this epoch (a warm-up of the buffer)"""
    start_collecting_at_epoch: int = 0
    """no rollouts before this epoch (a large value: fully offline, from the files already in the buffer)"""
    dset_name: Optional[str] = None
    """the buffer folder under --buffer-dir (default: the run name): train on another run's buffer"""
    eval_env_id: Optional[str] = None
    """the evaluation env ids, comma-separated (default: --env-id's)"""
    eval_only: bool = False
    """if toggled, evaluate runs/{run_name}/checkpoint.pt (or --load-from), print the metrics as JSON, and exit"""
    load_from: Optional[str] = None
    """--eval-only: the weights to evaluate (a checkpoint.pt, policy_latest.pt or .cleanrl_model file)"""
    save_trajs_to: Optional[str] = None
    """--eval-only: write the evaluation episodes as trajectory files into this folder (e.g. buffers/RUN/protected)"""
    batches_per_update: int = 1
    """gradient accumulation: each update averages the gradients of this many batches (one step on k*batch_size)"""


def check_scale_args(args):
    for name in "start_learning_at_epoch start_collecting_at_epoch".split():
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}")
    if args.batches_per_update < 1:
        raise ValueError(f"--batches-per-update must be >= 1, got {args.batches_per_update}")
    if (args.load_from or args.save_trajs_to) and not args.eval_only:
        raise ValueError("--load-from and --save-trajs-to go with --eval-only")
    if args.eval_only and args.mode != "both":
        raise ValueError(f"--eval-only evaluates in one process: leave --mode at both (got {args.mode})")
    if args.env_mode == "already_vectorized" and "," in args.env_id + (args.eval_env_id or ""):
        raise ValueError(f"--env-mode already_vectorized takes one env id, got {args.env_id!r} / {args.eval_env_id!r}")


def resolve_env_ids(args, resolve_env_id):
    """--env-id and --eval-env-id: comma-separated ids (actors take them round-robin), each resolved like one id. All
    envs of a run share one agent and one buffer, so their observation and action spaces must match (kind, shape,
    dtype, as a buffer's spec.json records them)."""
    train = [resolve_env_id(e.strip()) for e in args.env_id.split(",")]
    val = [resolve_env_id(e.strip()) for e in (args.eval_env_id or args.env_id).split(",")]
    ids = list(dict.fromkeys(train + val))
    if len(ids) > 1:
        spaces = {}
        for env_id in ids:
            env = AmagoEnv(gym.make(env_id), env_name=env_id)
            spaces[env_id] = (signature(env.observation_space["obs"]), signature(env.action_space))
            env.close()
            if spaces[env_id] != spaces[ids[0]]:
                raise ValueError(
                    f"envs {ids[0]} and {env_id} differ in their spaces ({spaces[ids[0]]} vs {spaces[env_id]}): "
                    "the envs of one run (--env-id, --eval-env-id) must share observation and action spaces"
                )
    return ",".join(val if args.eval_only else train), ",".join(val)  # --eval-only: the "training" envs record video


def claim(args, buffer_root, ckpt_path):
    """The run's claim on its buffer (common/rundir.py): a learner (--mode both or learn) takes the buffer's lock; a
    collector takes none and never refuses a buffer that holds files. A learner may join a buffer that holds files
    but no checkpoint of this run when it is --mode learn (its collectors started first) or --dset-name names it."""
    role = "collector" if args.mode == "collect" else "learner"
    return claim_run(buffer_root, ckpt_path, args.resume, role, join=args.mode == "learn" or bool(args.dset_name))


# --------------------------------------- latest weights: learner -> collectors ----------------------------------------
def save_latest(path, agent, counters, mode, write=True):
    """The learner's current weights and update count, written atomically (temp file, fsync, rename): a collector
    never reads half a file. Returns the run's env steps: a learner that does not collect (--mode learn) counts its
    collectors' steps, which each reports in {run_dir}/collectors/ (every rank does, so that all log at that step;
    write=False: the other ranks of a multi-process learner, which only count)."""
    path = Path(path)
    if write:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            torch.save({"agent": agent.state_dict(), "updates": counters["updates"]}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    if mode != "learn":
        return counters["global_step"]
    reports = path.parent / "collectors"
    return sum(json.loads(p.read_text())["global_step"] for p in reports.glob("*.json")) if reports.is_dir() else 0


def load_latest(path, agent, seen, writer=None, step=0):
    """Loads `path` into agent if it changed since `seen` (the file's inode, mtime and size: os.replace gives every new
    version a new inode). Returns the new `seen` {"file": fingerprint, "updates": the update count acted with}; logs it
    as charts/policy_updates and prints it when it changes. Reports this collector's env steps to the learner. Loaded
    with weights_only: anyone who can write the shared file must not run code in every collector. A file that cannot
    be read (truncated, e.g. copied in by hand) keeps the current weights, and is read again next epoch."""
    seen = seen or {"file": None, "updates": 0}
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())  # of the file opened: a rename after open() cannot mix two versions
            fingerprint = (st.st_ino, st.st_mtime_ns, st.st_size)
            if fingerprint != seen["file"]:
                try:
                    state = safe_load(f, path)
                except CorruptFileError as e:  # e.g. a copy in progress on a shared filesystem: try again next epoch
                    print(f"collector: {e}; acting with the current weights, retrying next epoch", flush=True)
                else:
                    load_matching(agent, state["agent"], path)
                    seen = {"file": fingerprint, "updates": state["updates"]}
                    print(f"collector: acting with the policy of update {state['updates']}", flush=True)
    except FileNotFoundError:  # no learner has written weights yet: act with the initial ones
        if not seen.get("told"):
            print(
                f"collector: no policy at {path} yet; acting with random initial weights until the learner writes one",
                flush=True,
            )
            seen = {**seen, "told": True}
    if writer is not None:
        writer.add_scalar("charts/policy_updates", seen["updates"], step)
    report = Path(path).parent / "collectors" / f"{os.getpid()}.json"  # one per process: a restart adds its own
    report.parent.mkdir(parents=True, exist_ok=True)
    tmp = report.with_name(f".{report.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"global_step": step, "updates": seen["updates"]}))
    os.replace(tmp, report)
    return seen


def load_weights(path, agent):
    """An agent's weights from a checkpoint.pt, policy_latest.pt or a --save-model file."""
    if not Path(path).exists():
        raise FileNotFoundError(f"no weights at {path}: pass --run-name of a run with a checkpoint, or --load-from")
    state = safe_load(path, path)
    load_matching(agent, state.get("agent", state), path)


def load_matching(agent, state, path):
    """load_state_dict, with the model flags named when the weights come from an agent of other sizes."""
    try:
        agent.load_state_dict(state)
    except RuntimeError as e:
        first = str(e).split("\n\t")[1] if "\n\t" in str(e) else str(e)
        raise ValueError(
            f"the weights in {path} do not fit this agent ({first.strip()}): give this process the model flags "
            "(--traj-encoder, --d-model, --n-layers, --max-seq-len, sizes ...) of the run that wrote them"
        ) from None


def wait_for_data(args, buffer, stop, epochs, poll_s=2.0):
    """A learner that does not collect (--mode learn) waits until the buffer holds a trajectory file (its collectors
    may start after it); a run that never collects (--start-collecting-at-epoch >= its epochs) needs files at once."""
    if buffer.files():
        return
    if args.mode == "both" and args.start_collecting_at_epoch >= epochs:
        raise FileNotFoundError(
            f"--start-collecting-at-epoch {args.start_collecting_at_epoch} >= the run's {epochs} epochs: it trains "
            f"only on files already in {buffer.fifo} or {buffer.protected}, and there are none"
        )
    if args.mode == "learn":
        print(f"learner: waiting for trajectory files in {buffer.fifo.parent} (start collectors)", flush=True)
    while args.mode == "learn" and not buffer.files() and not stop:
        time.sleep(poll_s)


def gather_eval(accelerator, ev):
    """(returns, names, metrics) of every process's evaluation, so each process logs the mean over all of them."""
    from accelerate.utils import gather_object

    parts = gather_object([ev]) if accelerator.num_processes > 1 else [ev]
    return tuple(sum((list(p[i]) for p in parts), []) for i in range(3))


# --------------------------------------------------- evaluate-only ---------------------------------------------------
class RecordTrajs:
    """A vector env that hands every step to a TrajectoryWriter, so that evaluation episodes are saved as trajectory
    files exactly as training rollouts are (one file per finished episode, or snippet of a long one)."""

    def __init__(self, envs, trajs):
        self.envs, self.trajs = envs, trajs

    def __getattr__(self, name):
        return getattr(self.envs, name)

    def reset(self, **kwargs):
        obs, info = self.envs.reset(**kwargs)
        for i in range(self.envs.num_envs):
            self.trajs.start(i, index_obs(obs, i))
        return obs, info

    def step(self, actions):
        next_obs, rew, term, trunc, info = self.envs.step(actions)
        done = term | trunc
        for i in range(self.envs.num_envs):
            final = info["final_obs"][i] if done[i] else index_obs(next_obs, i)
            self.trajs.step(i, actions[i], rew[i], term[i], final, done[i])
            if done[i]:
                self.trajs.start(i, index_obs(next_obs, i))
        return next_obs, rew, term, trunc, info


def eval_only(args, agent, ckpt_path, eval_envs, trajs, device):
    """--eval-only: load the weights, evaluate on eval_envs (the eval set, built like training envs, so that they
    record video with --capture-video), print one JSON line of metrics; with --save-trajs-to, the episodes are written
    there as trajectory files (the buffer's format). Returns the exit code."""
    load_weights(args.load_from or ckpt_path, agent)
    if args.save_trajs_to:
        trajs.buffer.fifo = Path(args.save_trajs_to)  # the buffer's writer, pointed at another folder
        trajs.buffer.fifo.mkdir(parents=True, exist_ok=True)
        eval_envs = RecordTrajs(eval_envs, trajs)
    seed = args.seed + 10_000  # as a run's evaluations
    ev = eval_metrics(
        *evaluate(agent, eval_envs, args.eval_episodes, args.eval_greedy, device, seed, args.eval_max_steps)
    )
    print(json.dumps({k: float(np.asarray(v)) for k, v in ev.items()}), flush=True)
    return 0
