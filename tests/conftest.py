"""Helpers shared by the tests (`from conftest import ...`): paths, the sizes of a small model, a short run of a script
in a subprocess, small agents and batches for the loss, and gymnasium's env checker with every warning an error."""

import subprocess
import sys
import warnings
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest
import torch

torch.set_num_threads(1)  # `pytest -n auto` runs one test per core: one thread each, as run_script gives its runs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SCRIPT = ROOT / "amago_agent.py"
MULTITASK_SCRIPT = ROOT / "amago_multitask.py"

needs_popgym = pytest.mark.skipif(find_spec("popgym") is None, reason="popgym is not installed")
needs_mujoco = pytest.mark.skipif(find_spec("mujoco") is None, reason="mujoco is not installed")
needs_gymnax = pytest.mark.skipif(find_spec("gymnax") is None, reason="gymnax is not installed (requirements-dev.txt)")

# Args of a small agent: the code paths of the default sizes, a few thousand parameters
SMALL = dict(
    d_model=16, n_layers=1, n_heads=2, d_ff=32, tstep_hidden=16, tstep_dim=16, actor_hidden=16, critic_hidden=16
)
# and of a short run of a script: 2 actors, small batches and windows, an eval every 2 epochs
TINY_RUN = dict(**SMALL, num_envs=2, batch_size=4, max_seq_len=8, traj_save_len=16, eval_interval=2, eval_episodes=2)


def flags(**args):
    """Args fields as command-line flags: flags(env_id="x", cnn_channels=(8, 16), save_model=True) ->
    ["--env-id", "x", "--cnn-channels", "8", "16", "--save-model"]."""
    out = []
    for name, value in args.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, (tuple, list)):
            out += [flag, *map(str, value)]
        else:
            out += [flag, str(value)]
    return out


def run_script(cwd, script=SCRIPT, check=True, launcher=(sys.executable,), **args):
    """Run `script` in cwd with TINY_RUN's args, updated with `args` (Args fields by their python names), on one
    thread and with the repository importable; asserts exit code 0 unless check=False. -> the CompletedProcess."""
    cmd = [*launcher, str(script), *flags(**{**TINY_RUN, **args})]
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": str(Path(sys.executable).parent),
        "OMP_NUM_THREADS": "1",
        "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",  # one thread for jax too
    }
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)
    if check:
        assert out.returncode == 0, out.stderr[-3000:]
    return out


def make_agent(kind, module=None, **overrides):
    """A small Agent of `module` (default amago_agent) for Discrete(3) or Box(2) actions and 4-dim observations, with
    a fixed init. -> (agent, args)."""
    import gymnasium as gym
    import torch

    if module is None:
        import amago_agent as module
    space = {"discrete": gym.spaces.Discrete(3), "box": gym.spaces.Box(-1, 1, (2,))}[kind]
    obs_space = gym.spaces.Dict({"observation": gym.spaces.Box(-1, 1, (4,))})
    args = module.Args(**{**SMALL, "traj_encoder": "transformer", "max_seq_len": 6, **overrides})
    torch.manual_seed(0)
    return module.Agent(args, obs_space, space), args


def random_batch(agent, B=4, L=7, seed=0, reward_scale=1.0):
    """A training batch for make_agent's agents: B windows of L timesteps, random content, row 0 padded after t=3."""
    import torch

    g = torch.Generator().manual_seed(seed)
    A = agent.A
    acts = (
        torch.nn.functional.one_hot(torch.randint(0, A, (B, L - 1), generator=g), A).float()
        if agent.kind == "discrete"
        else torch.rand(B, L - 1, A, generator=g) * 2 - 1
    )
    mask = torch.ones(B, L, dtype=torch.bool)
    mask[0, 4:] = False  # a padded row
    return {
        "obs": {"observation": torch.randn(B, L, 4, generator=g)},
        "rl2": torch.randn(B, L, A + 1, generator=g),
        "time": torch.arange(L).repeat(B, 1),
        "mask": mask,
        "actions": acts,
        "rewards": reward_scale * torch.randn(B, L - 1, generator=g),
        "terminated": torch.zeros(B, L - 1, dtype=torch.bool),
    }


INF_BOUNDS = ".*Box observation space (minimum|maximum) value is -?infinity"


def check_strict(env, ignore=()):
    """gymnasium's env checker with every warning an error, except the listed ones (regexes)."""
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for message in ignore:
            warnings.filterwarnings("ignore", message=message)
        check_env(env, skip_render_check=True)


def record(env, seed, actions):
    """Reset with seed, then play the actions until the episode ends: [obs, (obs, r, term, trunc), ...]."""
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for a in actions:
        obs, r, term, trunc, _ = env.step(a)
        out.append((obs, r, term, trunc))
        if term or trunc:
            break
    return out


def same(a, b):
    """Equal rollouts (nested obs dicts, tuples of floats/arrays)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b)
