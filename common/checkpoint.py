"""Checkpoints: the agent, optimizer and exploration state, the run's counters and every RNG, written atomically."""

import os
import random
from pathlib import Path

import numpy as np
import torch


def save_checkpoint(path, agent, optimizer, explore, counters):
    state = {
        "agent": agent.state_dict(),  # weights, targets, PopArt and input-norm statistics
        "optimizer": optimizer.state_dict(),
        "explore": explore.state_dict(),
        "counters": counters,
        "rng": {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()},
    }
    bad = [k for k, v in state["agent"].items() if v.is_floating_point() and not torch.isfinite(v).all()]
    if bad:  # a diverged agent must not replace the last good checkpoint
        raise FloatingPointError(f"not saving {path}: non-finite values in {len(bad)} tensors, e.g. {bad[:3]}")
    tmp = Path(str(path) + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # a crash mid-save leaves the previous checkpoint intact


def load_checkpoint(path, agent, optimizer, explore):
    """Restores everything save_checkpoint wrote; returns the counters."""
    state = torch.load(path, map_location="cpu", weights_only=False)
    agent.load_state_dict(state["agent"])
    optimizer.load_state_dict(state["optimizer"])
    explore.load_state_dict(state["explore"])
    random.setstate(state["rng"]["python"])
    np.random.set_state(state["rng"]["numpy"])
    torch.set_rng_state(state["rng"]["torch"])
    return state["counters"]
