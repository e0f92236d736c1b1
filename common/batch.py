"""Batching the replay buffer's windows for the update: padding, the mask, and the hand-over to the device."""

import functools
import os
import sys

import numpy as np
import torch

from common.rundir import ignore_stop_signals


def collate(samples):
    """Right-pad windows to the longest one; mask (B, L) marks real timesteps. A DataLoader worker hands a small batch
    over as numpy arrays, pickled through its pipe: torch tensors would each go through their own shared-memory file
    descriptor, which costs more than pickling until a batch holds ~1 MB (pixels, long windows; measured by
    `benchmarks/speed.py --loader`)."""
    L = max(len(s["rl2"]) for s in samples)
    out = {}
    for k in samples[0]:
        n = L if k in ("rl2", "time") or k.startswith("obs_") else L - 1
        out[k] = np.stack(
            [np.concatenate([s[k], np.zeros((n - len(s[k]), *s[k].shape[1:]), s[k].dtype)]) for s in samples]
        )
    # deviation: an explicit mask of real timesteps (the reference pads rl2 with the value 4.0 and masks on it)
    out["mask"] = np.stack([np.arange(L) < len(s["rl2"]) for s in samples])
    if sum(v.nbytes for v in out.values()) > 2**20:
        out = {k: torch.from_numpy(v) for k, v in out.items()}
    out["obs"] = {k[len("obs_") :]: out.pop(k) for k in list(out) if k.startswith("obs_")}
    return out


def to_device(batch, device):  # numpy or torch (from collate) -> torch on device
    return {
        k: to_device(v, device) if isinstance(v, dict) else torch.as_tensor(v).to(device, non_blocking=True)
        for k, v in batch.items()
    }


def make_loader(dataset, batch_size, num_workers):
    """An endless iterator of collated batches; `num_workers` processes read the buffer while the update runs."""
    # a jax env (envs.gymnax_env) runs threads that a forked worker could deadlock on: start workers clean
    context = "forkserver" if num_workers and "jax" in sys.modules else None
    loader = torch.utils.data.DataLoader(
        dataset,
        batch_size,
        collate_fn=collate,
        num_workers=num_workers,
        persistent_workers=num_workers > 0,
        prefetch_factor=4 if num_workers else None,
        multiprocessing_context=context,
        worker_init_fn=functools.partial(ignore_stop_signals, os.getpid()),  # stop signals: the main process's
    )
    return iter(loader)
