"""Guards that keep bad values and unbounded memory out of a run: non-finite env output is stopped before it reaches
the replay buffer, and the buffer reader's cache of decoded files is bounded by bytes as well as by count."""

import warnings

import numpy as np


def first_nonfinite(x):
    """Index of the first actor (row) of x (N, ...) holding a NaN or inf, or None (integer arrays are always finite)."""
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating) or np.isfinite(x).all():
        return None
    return int(np.flatnonzero(~np.isfinite(x.reshape(len(x), -1)).all(1))[0])


def check_finite(env_id, global_step, rewards, next_obs, final_obs, done):
    """Raises a clear error if a vector step returned a non-finite reward or observation: one NaN or inf in the buffer
    turns every weight into NaN at the next update. Called before the step is written anywhere. next_obs: the wrapped
    observations {"obs": {key: (N, ...)}, "time": (N,)}; final_obs[i]: done actor i's true last observation."""
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
