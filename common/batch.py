"""Handing the replay buffer's batches to the update: DataLoader workers that read while the update runs, and the
copy to the device. The batch itself (padding, mask) is the script's `collate`."""

import functools
import os
import sys

import torch

from common.rundir import ignore_stop_signals


def to_device(batch, device):  # numpy or torch (from collate) -> torch on device
    return {
        k: to_device(v, device) if isinstance(v, dict) else torch.as_tensor(v).to(device, non_blocking=True)
        for k, v in batch.items()
    }


def make_loader(dataset, batch_size, num_workers, collate):
    """An endless iterator of collated batches; `num_workers` processes read the buffer while the update runs. A worker
    hands a small batch over as numpy arrays, pickled through its pipe: torch tensors would each go through their own
    shared-memory file descriptor, which costs more than pickling until a batch holds ~1 MB (pixels, long windows;
    measured by `benchmarks/speed.py --loader`), so `collate` returns torch tensors only for larger batches."""
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
