"""Checkpoints: the agent, optimizer and exploration state, the run's counters and every RNG, written atomically. The
last two are kept (checkpoint.pt and checkpoint.prev.pt), so that a corrupt newer one falls back to the older one.
Every weights file is read with torch.load(weights_only=True): tensors and plain data only, so a crafted file cannot
run code (a pickle runs whatever its author wants on load); numpy arrays are stored as plain lists for that reason."""

import os
import pickle
import random
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import torch

from common.guards import UserError, disk_error

# numpy arrays as older checkpoints stored them (the RNG states): exactly these types, no other global
NUMPY_GLOBALS = [
    np.array(0).__reduce__()[0],  # numpy's _reconstruct (its module moved between numpy 1 and 2)
    np.ndarray,
    np.dtype,
    type(np.dtype(np.uint32)),
    type(np.dtype(np.float64)),
]


class UnsafeFileError(ValueError):
    """A weights file that holds more than tensors and plain data: refused, nothing in it ran."""


class CorruptFileError(ValueError):
    """A weights file that cannot be read (truncated, not a torch file, or missing its entries)."""


def safe_load(f, path):
    """torch.load with weights_only=True (f: a path or an open file); errors name the file and the cause."""
    try:
        with torch.serialization.safe_globals(NUMPY_GLOBALS):
            return torch.load(f, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except pickle.UnpicklingError as e:
        if "Weights only load failed" not in str(e):
            raise CorruptFileError(f"{path} is corrupt or not a torch file ({e})") from None
        why = next((line for line in str(e).splitlines() if "GLOBAL" in line or "got <class" in line), "").strip()
        raise UnsafeFileError(
            f"refusing to load {path}: it holds Python objects, not only tensors and plain data, and loading them "
            f"could run code ({why or 'see torch.load weights_only'}); nothing in it was run. This program never "
            "writes such a file: replace it with one you trust"
        ) from None
    except (RuntimeError, EOFError, OSError, ValueError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CorruptFileError(f"{path} is corrupt or truncated ({first})") from None


def plain(x):
    """numpy arrays and scalars -> lists and Python numbers (marked with their dtype), recursively through dicts,
    lists and tuples: what weights_only loads, and independent of numpy's pickle format."""
    if isinstance(x, np.ndarray):
        return {"__ndarray__": x.tolist(), "dtype": x.dtype.str}
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(plain(v) for v in x)
    return x


def unplain(x):
    """The inverse of plain (older checkpoints' numpy arrays pass through unchanged)."""
    if isinstance(x, dict):
        if set(x) == {"__ndarray__", "dtype"}:
            return np.array(x["__ndarray__"], dtype=x["dtype"])
        return {k: unplain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(unplain(v) for v in x)
    return x


def previous(path):
    """checkpoint.pt -> checkpoint.prev.pt: the one before."""
    path = Path(path)
    return path.with_name(f"{path.stem}.prev{path.suffix}")


def save_checkpoint(path, agent, optimizer, explore, counters):
    """Writes a temp file named with this process's PID, then keeps the current checkpoint as checkpoint.prev.pt and
    renames the temp file over checkpoint.pt: a crash at any moment leaves both older checkpoints whole."""
    path = Path(path)
    state = {
        "agent": agent.state_dict(),  # weights, targets, PopArt and input-norm statistics
        "optimizer": optimizer.state_dict(),
        "explore": plain(explore.state_dict()),
        "counters": counters,
        "rng": {
            "python": random.getstate(),  # (version, 625 ints, None): plain data
            "numpy": plain(np.random.get_state()),
            "torch": torch.get_rng_state(),
        },
    }
    bad = [k for k, v in state["agent"].items() if v.is_floating_point() and not torch.isfinite(v).all()]
    if bad:  # a diverged agent must not replace the last good checkpoint
        raise FloatingPointError(f"not saving {path}: non-finite values in {len(bad)} tensors, e.g. {bad[:3]}")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # whose it is: a later start removes it if its writer died
    try:
        torch.save(state, tmp)
        with open(tmp, "rb") as f:  # on the disk before the rename
            os.fsync(f.fileno())
    except (OSError, RuntimeError) as e:
        tmp.unlink(missing_ok=True)
        kept = f"the previous checkpoint {path} is intact" if path.exists() else "no checkpoint was written yet"
        raise disk_error(e, path, f"Nothing was replaced: {kept}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if path.exists():  # the current one becomes the fallback; a hard link keeps checkpoint.pt in place meanwhile
        prev_tmp = previous(path).with_name(f".{previous(path).name}.{os.getpid()}.tmp")
        try:
            os.link(path, prev_tmp)
        except OSError:  # a filesystem without hard links
            shutil.copyfile(path, prev_tmp)
        os.replace(prev_tmp, previous(path))
    os.replace(tmp, path)


def load_checkpoint(path, agent, optimizer, explore):
    """Restores everything save_checkpoint wrote; returns the counters. A corrupt or truncated checkpoint.pt falls
    back to checkpoint.prev.pt (with a message naming both); a file refused as unsafe never does."""
    path = Path(path)
    try:
        state = read_checkpoint(path)
    except CorruptFileError as e:
        prev = previous(path)
        if not prev.exists():
            raise CorruptFileError(f"{e}; no older checkpoint ({prev}) to fall back to") from None
        state = read_checkpoint(prev)
        # set aside, kept for a look: the next save would otherwise rotate the corrupt file over the good one
        corrupt = path.with_name(f"{path.stem}.corrupt{path.suffix}")
        os.replace(path, corrupt)
        print(
            f"warning: {e}; resuming from the checkpoint before it, {prev} ({path} moved to {corrupt})",
            file=sys.stderr,
            flush=True,
        )
        path = prev  # the file loaded
    load_matching(agent, state["agent"], path)
    optimizer.load_state_dict(state["optimizer"])
    explore.load_state_dict(unplain(state["explore"]))
    random.setstate(state["rng"]["python"])
    np.random.set_state(unplain(state["rng"]["numpy"]))
    torch.set_rng_state(state["rng"]["torch"])
    return state["counters"]


def read_checkpoint(path):
    state = safe_load(path, path)
    keys = state.keys() if isinstance(state, dict) else ()
    missing = [k for k in ("agent", "optimizer", "explore", "counters", "rng") if k not in keys]
    if missing:
        raise CorruptFileError(f"{path} is not a checkpoint of this program (it lacks {missing})")
    return state


# the flags that size the weights (the scripts' Args fields), to name when a file's weights do not fit the model
SIZE_FLAGS = "d_model n_heads d_ff d_state tstep_hidden tstep_dim actor_hidden critic_hidden num_critics".split()


def load_matching(agent, state, path):
    """agent.load_state_dict(state); weights of a model of other sizes are a UserError that names the flags whose value
    here is a size that differs (torch's own message lists every tensor, dozens of lines), and the layer count."""
    try:
        agent.load_state_dict(state)
        return
    except RuntimeError:
        pass
    args, here = getattr(agent, "args", None), agent.state_dict()
    found = {}  # (size here, size in the file) -> the flags whose value is that size here
    for k in here.keys() & state.keys():
        if here[k].dim() == state[k].dim():
            for x, y in zip(here[k].shape, state[k].shape):
                if x != y:
                    found.setdefault(
                        (x, y), [f"--{f.replace('_', '-')}" for f in SIZE_FLAGS if getattr(args, f, 0) == x]
                    )
    layers = lambda sd: len({m.group(1) for k in sd if (m := re.match(r"traj\.\w+\.(\d+)\.", k))})
    said = [f"{x} here, {y} in the file ({' or '.join(flags)})" for (x, y), flags in found.items() if flags]
    if layers(here) != layers(state):
        said.append(f"{layers(here)} layers here, {layers(state)} in the file (--n-layers, or --traj-encoder)")
    if not said:  # no size flag explains it: another kind of encoder, env or action space
        missing, unexpected = sorted(here.keys() - state.keys()), sorted(state.keys() - here.keys())
        said.append(f"tensors here but not in the file: {missing[:3]}; in the file but not here: {unexpected[:3]}")
    raise UserError(
        f"the weights in {path} do not fit this agent: {'; '.join(said)}. Give the model flags of the run that wrote "
        "them (--resume restores them from the run's flags.json, where it has one)"
    ) from None
