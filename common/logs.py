"""Run logs: the tensorboard (and optional wandb) writer, the eval metrics a run writes, and reading back the scalars
it wrote (`runs/<run_name>/events.*`)."""

import bisect
import json
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

from common.guards import UserError


def make_writer(args, run_name, run_dir, process_index):
    """A tensorboard SummaryWriter in runs/<run_name> (other processes of a multi-process launch, collectors and
    --eval-only: a subfolder each), with the flags as a table; with --track, wandb mirrors it (process 0 only)."""
    from torch.utils.tensorboard import SummaryWriter

    if args.track and process_index == 0 and getattr(args, "mode", "both") != "collect":  # one wandb run per run
        try:
            import wandb
        except ImportError:  # an optional package (not in requirements.txt): one line, before any log
            raise UserError(
                "--track needs wandb (Weights & Biases): `pip install wandb`, or leave out --track"
            ) from None
        wandb.init(
            project=args.wandb_project_name,
            entity=args.wandb_entity,
            sync_tensorboard=True,
            config=vars(args),
            name=run_name,
            id=run_name,
            resume="allow",
            monitor_gym=True,
            save_code=True,
        )
    if getattr(args, "mode", "both") == "collect":  # collectors of one run: a subfolder each, by seed
        run_dir = run_dir / f"collector_seed{args.seed}"
    elif getattr(args, "eval_only", False):
        run_dir = run_dir / "eval_only"
    folder = run_dir if process_index == 0 else run_dir / f"process{process_index}"
    writer = RunWriter(SummaryWriter(str(folder), flush_secs=10), folder)
    table = "\n".join(f"|{k}|{v}|" for k, v in vars(args).items())
    writer.add_text("hyperparameters", f"|param|value|\n|-|-|\n{table}")
    return writer


class RunWriter:
    """A SummaryWriter whose folder may vanish under it (a run folder deleted while the run goes on): tensorboard's
    writer thread then fails and every later call would raise its error in the middle of an epoch. Once the folder is
    gone, logs are dropped instead; the script's check at the epoch's end (scale.check_run_dir) stops the run with one
    line and a checkpoint."""

    def __init__(self, writer, folder):
        self.writer, self.folder, self.lost = writer, Path(folder), False
        previous = threading.excepthook

        def quiet(hook_args):  # the writer thread's own traceback, once its folder is gone (or gone and made again)
            exc = hook_args.exc_value
            ours = isinstance(exc, FileNotFoundError) and exc.filename and self.owns(exc.filename)
            if ours or isinstance(exc, OSError) and not self.folder.is_dir():
                self.lost = True
                return
            previous(hook_args)

        threading.excepthook = quiet

    def owns(self, filename):  # a file of this writer's folder (its events file)
        return Path(os.fsdecode(filename)).resolve().parent == self.folder.resolve()

    def __getattr__(self, name):  # add_scalar, add_text, flush, close, ...
        method = getattr(self.writer, name)

        def call(*args, **kwargs):
            if self.lost:
                return None
            try:
                return method(*args, **kwargs)
            except OSError:
                if self.folder.is_dir():
                    raise
                self.lost = True

        return call


def eval_metrics(returns, names, extra):
    """Per env name: mean return, bottom-quintile return, and the mean of every metric the env logged."""
    out = {}
    for name in sorted(set(names)):
        idx = [i for i, n in enumerate(names) if n == name]
        rets = np.array([returns[i] for i in idx])
        out[f"eval/{name}/return"] = rets.mean()
        out[f"eval/{name}/bottom_quintile_return"] = np.percentile(rets, 20)
        for key in sorted({k for i in idx for k in extra[i]}):
            out[f"eval/{name}/{key}"] = np.mean([float(extra[i][key]) for i in idx if key in extra[i]])
    out["eval/return"] = np.mean([out[f"eval/{n}/return"] for n in sorted(set(names))])  # env names weigh equally
    return out


def read_scalars(run_dir):
    """{tag: [(wall_time, step, value), ...]} for every scalar tag of the run."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(Path(run_dir)), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.wall_time, e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def updates_at(scalars):
    """wall time -> the update count last logged by then (by time, not env step: an offline run's steps stay 0)."""
    logged = sorted((t, v) for t, _, v in scalars.get("charts/updates", []))
    times = [t for t, _ in logged]
    return lambda t: int(logged[bisect.bisect_right(times, t) - 1][1]) if times and times[0] <= t else 0


def eval_curve(scalars, start_time, tag="eval/return"):
    """Rows of (minutes since start, env steps, updates, eval return), one per evaluation."""
    updates = updates_at(scalars)
    return [((t - start_time) / 60, step, updates(t), value) for t, step, value in scalars.get(tag, [])]


def write_scalars_csv(scalars, path, prefixes=None, start=None, earlier_rows=()):
    """A long CSV of logged scalars: tag, env_steps, minutes (since `start`, a time; default the run's first logged
    scalar), value; charts/, losses/, actor/, buffer/, eval/ first, each alphabetical. prefixes: only the tags that
    start with one of them. earlier_rows: rows of a continued run's CSV, written first. -> the number of tags."""
    import csv

    order = ("charts/", "losses/", "actor/", "buffer/", "eval/")
    group = lambda tag: (next((i for i, g in enumerate(order) if tag.startswith(g)), len(order)), tag)  # noqa: E731
    kept = {t: pts for t, pts in scalars.items() if pts and (prefixes is None or t.startswith(tuple(prefixes)))}
    if not kept and not earlier_rows:
        return 0
    if start is None:
        start = min(t for points in kept.values() for t, _, _ in points)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["tag", "env_steps", "minutes", "value"])
        w.writerows(earlier_rows)
        for tag in sorted(kept, key=group):
            for t, step, value in kept[tag]:
                w.writerow([tag, step, f"{(t - start) / 60:.2f}", f"{value:.6g}"])
    return len(kept)


def print_result(result: dict, record=None):
    """A benchmark's last line, `RESULT {json}`; with `record` (a path), the same dict also written there as JSON."""
    if record:
        Path(record).parent.mkdir(parents=True, exist_ok=True)
        Path(record).write_text(json.dumps(result, indent=1) + "\n")
    print("RESULT " + json.dumps(result), flush=True)


class Progress:
    """The terminal's progress bar: env steps toward the run's total (a collector: the env steps it collected, no
    total; a learner of collector processes: its updates toward its total, with the collectors' env steps), the live
    update count, updates/s since this process started, and the last eval return with its age.

    The rate and the ETA come from whole epochs (rollout, updates, evaluation, checkpoint) run by this process: an
    epoch's rollout counts its env steps before the epoch's updates run, so a rate over part of an epoch would promise
    minutes for hours. The epochs timed start at the first one that made an update (those before, rollouts alone, are
    faster than the ones to come); until it has ended, the bar shows counts only. ETA: the epochs left at the mean time
    of those epochs, less the time the current one has run (at most that mean). `show` is called on the hot paths
    (every env step, every update): it redraws at most twice a second on a terminal, every 30 s into a file."""

    def __init__(self, args, counters, total_steps, total_updates, epochs):
        from tqdm import tqdm

        self.role = {"collect": "collector", "learn": "learner"}.get(args.mode, "run")
        self.count = "updates" if self.role == "learner" else "global_step"
        total = {"run": total_steps, "learner": total_updates, "collector": None}[self.role]
        self.unit = "updates" if self.role == "learner" else "env steps"
        self.head = f"{{l_bar}}{{bar}}| {{n:,}}/{{total:,}} {self.unit} [{{elapsed}}" if total else ""
        self.bar = tqdm(
            total=total,
            initial=counters[self.count],
            unit=f" {self.unit}",
            unit_scale=True,  # the rate as 3 significant digits; the counts exact, with thousands separators
            smoothing=0,  # a collector's rate: the average since start, unswayed by the bursts of its rollouts
            dynamic_ncols=True,
            bar_format=self.head + "{postfix}]"
            if total
            else f"{{n:,}} {self.unit} [{{elapsed}}, {{rate_fmt}}{{postfix}}]",
        )
        self.start, self.updates0, self.next_draw = time.time(), counters["updates"], 0.0
        self.epochs, self.timed_to = epochs, None
        self.timed_from = (self.start, counters["epoch"], counters[self.count])  # (time, epochs done, count)
        self.every = 0.5 if sys.stderr.isatty() else 30.0  # seconds between redraws; a log file (collectors) grows less
        self.eval, self.eval_time = None, None

    def evaluated(self, value):  # the eval return just measured
        self.eval, self.eval_time = value, time.time()

    def epoch_done(self, counters):
        """At an epoch's end, its evaluation and checkpoint included: (time, epochs done, count) starts the timed
        epochs while no update has been made, else ends them."""
        point = (time.time(), counters["epoch"], counters[self.count])
        if self.timed_to is None and counters["updates"] == self.updates0:
            self.timed_from = point
        else:
            self.timed_to = point

    def show(self, counters, draw=True):
        now = time.time()
        if now < self.next_draw:
            return
        self.next_draw = now + self.every
        self.bar.n = counters[self.count]
        if self.head and self.timed_to:  # the rate and the ETA of whole epochs
            (t0, e0, n0), (t1, e1, n1) = self.timed_from, self.timed_to
            per_epoch = (t1 - t0) / max(e1 - e0, 1)  # an epoch that runs over it: the ones after it at least
            eta = max(self.epochs - e1 - 1, 0) * per_epoch + max(per_epoch - (now - t1), 0) if e1 < self.epochs else 0
            rate = f"{self.bar.format_sizeof((n1 - n0) / max(t1 - t0, 1e-9))} {self.unit}/s"
            self.bar.bar_format = f"{self.head}<{self.bar.format_interval(eta)}, {rate}{{postfix}}]"
        info = {}
        if self.role == "run":
            info["updates"] = f"{counters['updates']:,}"
        if self.role == "learner":
            info["env steps"] = f"{counters['global_step']:,}"
        if self.role != "collector":
            info["updates/s"] = f"{(counters['updates'] - self.updates0) / max(now - self.start, 1e-9):.1f}"
        if self.eval is not None:
            info["eval"] = f"{self.eval:.1f} ({(now - self.eval_time) / 60:.1f} min ago)"
        self.bar.set_postfix(info, refresh=False)
        if draw:
            self.bar.refresh()

    def close(self, counters):  # the last line: the count reached (a stopped run's unfinished epoch included)
        self.next_draw = 0.0
        self.show(counters, draw=False)  # close() draws the last line once
        self.bar.close()
