"""Scaling a run out: the learner / collector roles' claim on a buffer, the latest policy weights that a learner hands
to collector processes through a file, and evaluate-only's recording of episodes as trajectory files. The roles' flags
are the script's own (`Args`); `python -m common.launch` starts a learner and its collectors in one command."""

import atexit
import contextlib
import json
import os
import socket
import time
from pathlib import Path

import numpy as np
import torch
from accelerate.utils import broadcast_object_list

from common.args import FLAGS_FILE, save_flags
from common.checkpoint import CorruptFileError, load_matching, safe_load, save_checkpoint
from common.evaluate import eval_seed, evaluate, index_obs
from common.guards import UserError
from common.logs import eval_metrics
from common.rundir import claim_run, pid_alive, write_atomic


def claim(args, buffer_root, ckpt_path):
    """The run's claim on its buffer (common/rundir.py): a learner (--mode both or learn) takes the buffer's lock; a
    collector takes none and never refuses a buffer that holds files. A learner may join a buffer that holds files
    but no checkpoint of this run when it is --mode learn (its collectors started first) or --dset-name names it."""
    role = "collector" if args.mode == "collect" else "learner"
    return claim_run(buffer_root, ckpt_path, args.resume, role, join=args.mode == "learn" or bool(args.dset_name))


# --------------------------------------- latest weights: learner -> collectors ----------------------------------------
def save_latest(path, agent, updates):
    """The learner's current weights and update count, written atomically: a collector never reads half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, lambda f: torch.save({"agent": agent.state_dict(), "updates": updates}, f))


def collector_steps(run_dir, own=None):
    """The env steps of a run's collectors, which each reports in {run_dir}/collectors/: a learner that does not
    collect (--mode learn) logs at that step (every rank, so that all log alike). own: this process's current steps,
    in place of its own (older) report."""
    reports = Path(run_dir) / "collectors"
    mine = f"{os.getpid()}.json" if own is not None else None
    steps = [json.loads(p.read_text())["global_step"] for p in reports.glob("*.json") if p.name != mine]
    return sum(steps) + (own or 0)


def report(run_dir, step, updates=None):
    """A collector's env steps (and the update count it acts with: None keeps the last reported) in
    {run_dir}/collectors/{pid}.json, one per process (a restart adds its own), written atomically."""
    path = Path(run_dir) / "collectors" / f"{os.getpid()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if updates is None:
        updates = json.loads(path.read_text())["updates"] if path.exists() else 0
    write_atomic(path, lambda f: f.write(json.dumps({"global_step": step, "updates": updates}).encode()))


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
    report(Path(path).parent, step, seen["updates"])
    return seen


def check_run_dir(run_dir, flags, agent, optimizer, explore, counters):
    """The learner's check at each epoch's end: a run folder deleted while the run goes on (its flags.json with it)
    would resume as another model. Its flags and a checkpoint at `counters` are written there again; then the run
    stops with one line that says how to continue."""
    if (Path(run_dir) / FLAGS_FILE).exists():
        return
    save_flags(run_dir, flags)
    save_checkpoint(Path(run_dir) / "checkpoint.pt", agent, optimizer, explore, counters)
    raise UserError(
        f"the run folder {run_dir} was deleted while the run went on (its logs and checkpoints with it); its flags and "
        f"a checkpoint of this epoch are written there again: --resume --run-name {Path(run_dir).name} continues"
    )


# ------------------------------------ the learner's status: learner -> collectors ------------------------------------
def write_status(run_dir, updates, state="running"):
    """{run_dir}/learner.json, written atomically: the learner's pid and host, its update count and its state
    ("running" or "done"). Collectors follow it (wait_for_learner)."""
    path = Path(run_dir) / "learner.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    status = {"pid": os.getpid(), "host": socket.gethostname(), "updates": updates, "state": state}
    write_atomic(path, lambda f: f.write(json.dumps(status).encode()))


def start_learner(run_dir, latest, agent, counters):
    """A learner (--mode learn or both) writes its weights and learner.json ("running") before it waits for data, so
    that its collectors start at once, and learner.json "done" when it exits: a normal end, Ctrl-C / SIGTERM or an
    error, a read-only or full run folder included (kill -9 leaves "running" with a dead pid). counters: the run's,
    whose "updates" the exit writes."""
    save_latest(latest, agent, counters["updates"])
    write_status(run_dir, counters["updates"])
    pid = os.getpid()  # not in forked workers, which exit without atexit handlers anyway

    def done():
        if os.getpid() != pid:
            return
        try:
            write_status(run_dir, counters["updates"], "done")
        except OSError:  # a folder that takes no new file (read-only, full): the same file rewritten in place
            status = {"pid": pid, "host": socket.gethostname(), "updates": counters["updates"], "state": "done"}
            with contextlib.suppress(OSError), open(Path(run_dir) / "learner.json", "w") as f:
                f.write(json.dumps(status))

    atexit.register(done)


def learner_status(run_dir):
    """learner.json's dict with "live": running, and its pid alive when on this host (a learner on another host
    killed with kill -9 stays "running"); None when there is no learner.json."""
    try:
        status = json.loads((Path(run_dir) / "learner.json").read_text())
    except (FileNotFoundError, ValueError):  # none yet, or one being rewritten in place at the learner's exit
        return None
    here = status.get("host") == socket.gethostname()
    status["live"] = status["state"] == "running" and (not here or pid_alive(status["pid"]))
    return status


_forfeited = {}  # run folder -> env steps of the cap that its collectors left unused beyond the burst (a pause)


def wait_for_learner(run_dir, args, buffer, stop, epoch, step, poll_s=0.5):
    """A collector's check at the start of each epoch: False when it is to end (its learner ended, or a stop signal),
    True when it may collect the epoch. Before its first epoch it waits for a live learner (a learner.json of an
    earlier run, "done" or with a dead pid, is none); after that, a learner that is not live has ended. With
    --max-steps-per-update c it waits while the run's env steps (all collectors' reports, this one's at `step`) plus
    this epoch's would exceed c * max(learner updates, batches_per_epoch): the learner's first epoch is the allowance.
    The cap never runs further ahead of the steps than that allowance (the burst): what a paused or slow collector
    leaves unused beyond it is forfeited, so that after a pause (SIGSTOP, a busy machine) it resumes at the cap's
    rate instead of collecting the whole backlog at once. A buffer without a file is never held back, since the
    learner waits for one."""
    path, said, first = Path(run_dir) / "learner.json", None, epoch == 0
    epoch_steps = args.timesteps_per_epoch * args.num_envs
    while not stop:
        status = learner_status(run_dir)
        if status is None or not status["live"]:
            if not first:
                report(run_dir, step)
                print("collector: the learner ended; stopping", flush=True)
                return False
            message = f"collector: waiting for the learner of {path} to start (--mode learn, same --run-name)"
        elif args.max_steps_per_update is None or not buffer.files():
            return True
        else:
            first, steps = False, collector_steps(run_dir, own=step)
            burst = args.max_steps_per_update * args.batches_per_epoch
            allowed = args.max_steps_per_update * max(status["updates"], args.batches_per_epoch)
            unused = allowed - _forfeited.get(str(run_dir), 0) - steps
            if unused > burst:  # fell behind the cap: keep one burst of it
                _forfeited[str(run_dir)] = _forfeited.get(str(run_dir), 0) + unused - burst
            allowed -= _forfeited.get(str(run_dir), 0)
            if steps + epoch_steps <= allowed:
                return True
            message = (
                f"collector: waiting for the learner's updates ({steps} env steps for {status['updates']} updates, "
                f"--max-steps-per-update {args.max_steps_per_update:g})"
            )
        if message != said:
            print(message, flush=True)
            said = message
        time.sleep(poll_s)
    return False


STALE_S = 60.0  # seconds without a new trajectory file before a learner of collectors says so
_stale = {"said": False}


def notice_stale_data(args, buffer):
    """A learner of collector processes (--mode learn), at each epoch's end: one line when no new trajectory file has
    reached the buffer for STALE_S seconds (its collectors paused, stopped or failing), and one when files come again;
    meanwhile it trains on the buffer as it is. buffer.last_arrival: the learner's own clock at the last new file."""
    if args.mode != "learn":
        return
    idle = time.monotonic() - buffer.last_arrival
    if idle >= STALE_S and not _stale["said"]:
        print(
            f"learner: no new trajectory files in {buffer.fifo} for {idle:.0f} s (collectors paused, stopped or "
            "failing? their logs: runs/<run>/collector*.log); training goes on with the buffer as it is",
            flush=True,
        )
        _stale["said"] = True
    elif idle < STALE_S and _stale["said"]:
        print("learner: new trajectory files again", flush=True)
        _stale["said"] = False


def load_weights(path, agent):
    """An agent's weights from a checkpoint.pt, policy_latest.pt or a --save-model file."""
    if not Path(path).exists():
        raise UserError(f"no weights at {path}: pass --run-name of a run with a checkpoint, or --load-from")
    state = safe_load(path, path)
    load_matching(agent, state.get("agent", state), path)


def wait_for_data(args, buffer, stop, epochs, poll_s=2.0):
    """A learner that does not collect (--mode learn) waits until the buffer holds a trajectory file (its collectors
    may start after it); a run that never collects (--start-collecting-at-epoch >= its epochs) needs files at once."""
    if buffer.files():
        return
    if args.mode == "both" and args.start_collecting_at_epoch >= epochs:
        raise UserError(
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


def evaluations(args, agent, envs, device, seed, accelerator=None, sampled_too=None):
    """One evaluation's metrics: eval/... (greedy, or sampled with --no-eval-greedy), the mean over every process's
    episodes; with --eval-sampled-too after a greedy one, the same episodes with sampled actions as eval_sampled/..."""

    def run(greedy):
        ev = evaluate(agent, envs, args.eval_episodes, greedy, device, seed, args.eval_max_steps)
        return eval_metrics(*(gather_eval(accelerator, ev) if accelerator is not None else ev))

    ev = run(args.eval_greedy)
    if args.eval_greedy and (args.eval_sampled_too if sampled_too is None else sampled_too):
        ev.update({"eval_sampled/" + k.removeprefix("eval/"): v for k, v in run(False).items()})
    return ev


def agree(accelerator, decision):
    """Process 0's decision, on every process: a decision taken on a clock must not split a multi-process launch."""
    return broadcast_object_list([decision])[0] if accelerator.num_processes > 1 else decision


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
    root = trajs.buffer.fifo.parent  # the run's buffer folder, made empty for this process: removed below
    if args.save_trajs_to:
        trajs.buffer.fifo = Path(args.save_trajs_to)  # the buffer's writer, pointed at another folder
        trajs.buffer.fifo.mkdir(parents=True, exist_ok=True)
        eval_envs = RecordTrajs(eval_envs, trajs)
    seed = eval_seed(args.seed, 0, args.num_envs)  # as a run's evaluations
    sampled_too = args.eval_sampled_too and not args.save_trajs_to  # saved trajectories: the greedy episodes only
    ev = evaluations(args, agent, eval_envs, device, seed, sampled_too=sampled_too)
    print(json.dumps({k: float(np.asarray(v)) for k, v in ev.items()}), flush=True)
    for folder in (root / "fifo", root / "protected", root):  # only empty ones: a run's data stays
        try:
            folder.rmdir()
        except OSError:
            pass
    return 0
