"""Guards that keep bad values and unbounded memory out of a run: non-finite or huge env output is stopped before it
reaches the replay buffer, an env's own error is reported with where it happened and what is still saved, whatever
else sits in a buffer folder is skipped with a warning, and the buffer reader's cache of decoded files is bounded by
bytes as well as by count; and the user's mistakes (a bad flag, env id or run name) reported as one line."""

import atexit
import errno
import os
import sys
import warnings
from pathlib import Path

import numpy as np


class UserError(ValueError):
    """A flag, env id or run that cannot be used as the user gave it. The scripts print it as one line, `error: ...`,
    and exit with status 2, as argparse does for a bad flag (user_error_hook); every other exception is a program
    error and keeps its traceback."""


class StorageError(OSError):
    """A file that could not be written for want of space or permission (a full disk, a read-only or locked folder),
    named with what is still intact and how to continue (disk_error): one line, exit status 1."""


class DiskFullError(StorageError):
    """A file that could not be written for want of space."""


# errno -> its cause, for the write errors that a user can fix by making a folder writable again
UNWRITABLE = {errno.EPERM: "permission denied", errno.EACCES: "permission denied", errno.EROFS: "read-only file system"}
RESUME = {"hint": "--resume"}  # how a stopped run continues; claim_run names the run: `--resume --run-name NAME`


def disk_error(e, path, intact):
    """An OSError or torch's writer error (torch reports a full disk as `enforce fail at inline_container.cc`) -> an
    error that says what happened, to which file, what is still intact (`intact`) and, where a user can fix it, how to
    continue: a DiskFullError (no space), a StorageError (permission denied, read-only file system), else an OSError."""
    text, code = str(e), getattr(e, "errno", None)
    full = code == errno.ENOSPC or "inline_container" in text or "No space left" in text
    if full:
        cause, fix = "no space left on the device", "free space"
    elif code in UNWRITABLE:
        cause, fix = UNWRITABLE[code], f"make {Path(path).parent} writable again"
    else:
        cause, fix = (e.strerror if isinstance(e, OSError) and e.strerror else text), None
    kind = DiskFullError if full else StorageError if fix else OSError
    then = f"{intact}: {fix}, then {RESUME['hint']} continues from the last checkpoint" if fix else intact
    return kind(code or (errno.ENOSPC if full else errno.EIO), f"cannot write {path}: {cause}. {then}")


def user_error_hook(kind, error, tb):
    """The scripts' sys.excepthook: a UserError -> one line on stderr, `error: ...`, and exit status 2; a full disk or
    an unwritable folder (StorageError, which names the file, what is intact and how to continue) -> one line and
    status 1; anything else -> the traceback, as without the hook."""
    if not issubclass(kind, (UserError, StorageError)):
        return sys.__excepthook__(kind, error, tb)
    from tqdm import tqdm

    sys.stdout.flush()
    tqdm.write(f"error: {error.strerror if isinstance(error, OSError) else error}", file=sys.stderr)  # below a bar
    sys.stderr.flush()
    atexit._run_exitfuncs()  # what a normal exit runs (child processes, log writers); then the exit status
    os._exit(2 if issubclass(kind, UserError) else 1)


def first_nonfinite(x):
    """Index of the first actor (row) of x (N, ...) holding a NaN or inf, or None (integer arrays are always finite)."""
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating) or np.isfinite(x).all():
        return None
    return int(np.flatnonzero(~np.isfinite(x.reshape(len(x), -1)).all(1))[0])


def check_finite(env_id, global_step, rewards, next_obs, final_obs, done, reward_multiplier=None):
    """Raises a clear error if a vector step returned a non-finite reward or observation: one NaN or inf in the buffer
    turns every weight into NaN at the next update; given reward_multiplier, also a finite reward too large for the
    critic (check_reward_scale). Called before the step is written anywhere. next_obs: the wrapped observations
    {"obs": {key: (N, ...)}, "time": (N,)}; final_obs[i]: done actor i's true last observation."""
    found = []
    if (i := first_nonfinite(rewards)) is not None:
        found.append((i, f"reward {rewards[i]}"))
    for k, v in next_obs["obs"].items():  # every actor's next observation (a done actor's: its reset observation)
        if (i := first_nonfinite(v)) is not None:
            found.append((i, f"observation {k!r} at step {next_obs['time'][i]} of its episode"))
    for i in np.flatnonzero(done):  # the true last observation of each actor whose episode ended
        for k, v in final_obs[i]["obs"].items():
            if first_nonfinite(np.reshape(v, (1, -1))) is not None:
                found.append((i, f"observation {k!r} at step {final_obs[i]['time']} of its episode (its last)"))
    if found:
        i, what = found[0]
        raise FloatingPointError(
            f"env {env_id}, actor {i}, env step {global_step} (all actors together): non-finite {what}. Stopped "
            "before saving it: the buffer and the checkpoint hold only earlier data. Fix the env, or wrap it to "
            "replace non-finite values."
        )
    if reward_multiplier is not None:
        check_reward_scale(env_id, global_step, rewards, reward_multiplier)


# |reward| x --reward-multiplier above this is refused. The critic's targets are float32 (max 3.4e38): a return of
# 1e14 / (1 - gamma) is 1e17 at gamma 0.999, its square (the TD loss, PopArt's second moment) 1e34, which leaves room
# for sums over ~10^4 values (a batch of windows) before they overflow to inf ("non-finite loss").
REWARD_BOUND = 1e14


def check_reward_scale(env_id, global_step, rewards, reward_multiplier, bound=REWARD_BOUND):
    """Raises a clear error if a vector step returned a finite reward whose scaled size |r| * reward_multiplier
    exceeds `bound`: saved, it would make every update's loss non-finite, at every resume. Called before the step is
    written anywhere (non-finite rewards are check_finite's)."""
    scaled = np.abs(np.asarray(rewards, np.float64)) * abs(reward_multiplier)
    big = np.flatnonzero(np.isfinite(scaled) & (scaled > bound))
    if len(big):
        i = int(big[0])
        raise FloatingPointError(
            f"env {env_id}, actor {i}, env step {global_step} (all actors together): reward {rewards[i]:g} x "
            f"--reward-multiplier {reward_multiplier:g} = {scaled[i]:g} exceeds {bound:g}, beyond which the critic's "
            "float32 targets and their squares overflow. Stopped before saving it: the buffer and the checkpoint "
            "hold only earlier data. Scale the env's rewards down (a wrapper) or lower --reward-multiplier."
        )


class env_errors:
    """`with env_errors(env_id, global_step, ckpt_path, saved_epoch): envs.step(a)`: an exception raised by the env
    (in this process or an async worker) becomes a RuntimeError that names the env, the step and what is intact (the
    env's own traceback stays chained above it). An observation of another shape than the env's observation space
    (numpy's "wrong shape" / "could not broadcast" from the vector env) is named as such. saved_epoch: the epoch of
    the last checkpoint written or resumed (None: none yet)."""

    def __init__(self, env_id, global_step, ckpt_path, saved_epoch=None, obs_space=None):
        self.env_id, self.step, self.ckpt_path = env_id, global_step, ckpt_path
        self.saved_epoch, self.obs_space = saved_epoch, obs_space

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if kind is None or not issubclass(kind, Exception):  # KeyboardInterrupt / SystemExit pass through
            return False
        cause = f"{kind.__name__}: {e}"
        if isinstance(e, ValueError) and ("wrong shape" in str(e) or "could not broadcast" in str(e)):
            space = f" {self.obs_space}" if self.obs_space is not None else ""
            cause = (
                f"an observation does not fit the env's observation space{space}: does its shape change "
                f"mid-episode? ({cause})"
            )
        if self.saved_epoch is None:
            saved = f"no checkpoint was saved yet ({self.ckpt_path})"
        else:
            saved = f"the checkpoint of epoch {self.saved_epoch} ({self.ckpt_path}) is intact; --resume continues"
        raise RuntimeError(
            f"env {self.env_id}, env step {self.step} (all actors together): the env raised {cause}. Stopped before "
            f"saving this step: {saved} once the env is fixed."
        ) from e


_skipped = set()  # paths already warned about, once each per process


def skip_reason(entry):
    """Why a buffer folder's entry (os.DirEntry) is not a trajectory file, or None."""
    if entry.is_symlink():
        return "a link"
    if entry.is_dir(follow_symlinks=False):
        return "a directory"
    if not entry.is_file(follow_symlinks=False):
        return "not a regular file"
    if not entry.name.endswith(".npz"):
        return "not a .npz trajectory file"
    return None  # an unreadable .npz file is skipped with a warning when a reader fails on it


def list_trajectory_files(folder):
    """Paths (str, sorted by name: oldest first) of the regular `*.npz` files in folder. Anything else found there
    (directories, links, devices, foreign files) is skipped with a warning that names it, once per path;
    temp files of writers in progress (`*.tmp`) are skipped silently. Never raises: a missing folder lists nothing."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for e in entries:
        if e.name.endswith(".tmp"):
            continue
        try:
            why = skip_reason(e)
        except OSError as err:
            if not os.path.lexists(e.path):  # deleted by the FIFO meanwhile
                continue
            why = f"unreadable ({err})"
        if why is None:
            out.append(e.path)
        elif e.path not in _skipped:
            _skipped.add(e.path)
            warnings.warn(f"skipping {e.path} in the replay buffer: {why} (only the run's .npz files belong there)")
    return out


def read_trajectory(path, obs_space=None, action_dim=None):
    """A trajectory file's arrays {name: array}. Raises ValueError if its lengths disagree (T >= 1 transitions, T + 1
    timesteps) or, given the run's obs_space (a Dict) and action_dim, if its shapes differ (another env's file)."""
    with np.load(path) as f:
        data = {k: f[k] for k in f.files}
    T = len(data["actions"])
    if T < 1 or any(len(v) != T + 1 for k, v in data.items() if k in ("rl2", "time") or k.startswith("obs_")):
        raise ValueError(f"{path}: inconsistent lengths")
    want = {f"obs_{k}": s.shape for k, s in obs_space.items()} if obs_space else None
    shapes = {k: v.shape[1:] for k, v in data.items() if k.startswith("obs_")} if want else None
    if shapes != want or (action_dim is not None and data["actions"].shape[1:] != (action_dim,)):
        raise ValueError(
            f"shapes {shapes}, actions {data['actions'].shape[1:]} differ from the run's {want}, ({action_dim},)"
        )
    return data


def check_eval_ended(env_name, ended, wanted, max_steps):
    """Evaluation stopped after max_steps steps per actor: warn if some episodes had not ended, raise if none had."""
    if ended < wanted:
        msg = f"evaluation on {env_name}: {ended} of {wanted} episodes ended in {max_steps} steps per actor"
        if not ended:
            raise RuntimeError(f"{msg} (--eval-max-steps): does the env ever end? (e.g. a TimeLimit)")
        warnings.warn(f"{msg} (--eval-max-steps); reporting those")


def nbytes(data):
    return sum(v.nbytes for v in data.values())


class FileCache(dict):
    """path -> decoded trajectory file; the oldest entries are evicted once it holds more than max_files files or
    max_bytes bytes (e.g. 10,000 files of 256 84x84x3 frames would be 54 GB)."""

    def __init__(self, max_files, max_bytes):
        super().__init__()
        self.max_files, self.max_bytes, self.nbytes = max_files, max_bytes, 0

    def add(self, path, data):
        self[path] = data
        self.nbytes += nbytes(data)
        while len(self) > 1 and (len(self) > self.max_files or self.nbytes > self.max_bytes):
            self.nbytes -= nbytes(self.pop(next(iter(self))))

    def keep(self, paths):  # forget the files that are no longer listed (deleted by the FIFO)
        paths = set(paths)
        for path in [p for p in self if p not in paths]:
            self.nbytes -= nbytes(self.pop(path))
