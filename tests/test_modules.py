"""The plumbing modules beside the scripts (common/, envs/): they never import a script, the optional-kernel adapters
fall back to the pure-PyTorch paths (the Mamba one says so, once), and the `module:name` hooks."""

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import amago_agent as amago
import amago_multitask as mt
from common import kernels
from common.hooks import load_hook

ROOT = Path(__file__).resolve().parents[1]


def test_common_and_envs_never_import_a_script():
    """Every module of common/ and envs/ imported in a fresh process (an optional package missing is skipped): no
    script module is loaded, so the scripts can import them without circles."""
    modules = sorted(f"{p.parent.name}.{p.stem}" for d in ("common", "envs") for p in (ROOT / d).glob("*.py"))
    code = f"""import importlib, sys
for m in {modules!r}:
    try:
        importlib.import_module(m)
    except ModuleNotFoundError as e:  # an optional suite's package
        if e.name.startswith("amago"):
            raise
print(sorted(m for m in sys.modules if m.startswith("amago")))"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "common.scale" in modules and "envs.tmaze" in modules
    assert out.stdout.strip() == "[]"


def scan_inputs(B=2, L=5, d=6, n=3):
    torch.manual_seed(0)
    u, dt, z = torch.randn(B, L, d), F.softplus(torch.randn(B, L, d)), torch.randn(B, L, d)
    return u, dt, -torch.rand(d, n), torch.randn(B, L, n), torch.randn(B, L, n), torch.randn(d), z


class CudaLike(torch.Tensor):  # only `is_cuda` differs; the scan still runs on the CPU
    @property
    def is_cuda(self):
        return True


def test_mamba_without_its_kernel_runs_the_pure_scan_and_says_so_once(monkeypatch, capsys):
    monkeypatch.setattr(kernels, "_noticed", set())
    x = scan_inputs()
    y = kernels.mamba_scan(amago.selective_scan, *x)
    torch.testing.assert_close(y, amago.selective_scan(*x))
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "note: mamba runs its pure-PyTorch scan" in out
    assert "not on a CUDA device" in out and "pip install -r requirements-cuda.txt" in out
    kernels.mamba_scan(amago.selective_scan, *x)
    assert capsys.readouterr().out == ""  # once per process


@pytest.mark.parametrize("script", [amago, mt])
def test_a_mamba_model_on_cpu_prints_the_notice(monkeypatch, capsys, script):
    monkeypatch.setattr(kernels, "_noticed", set())
    enc = script.make_traj_encoder(script.Args(traj_encoder="mamba", d_model=8, n_layers=2), 6)
    with torch.no_grad():
        enc(torch.randn(2, 4, 6), torch.arange(4).expand(2, 4))
        enc(torch.randn(2, 4, 6), torch.arange(4).expand(2, 4))
    assert capsys.readouterr().out.count("note: mamba runs its pure-PyTorch scan") == 1
    enc = script.make_traj_encoder(script.Args(traj_encoder="gru", d_model=8), 6)
    enc(torch.randn(2, 4, 6), torch.arange(4).expand(2, 4))
    assert capsys.readouterr().out == ""


def test_mamba_notice_names_a_missing_package_on_cuda(monkeypatch, capsys):
    """On CUDA without mamba-ssm, the notice says the package is missing (checked with the kernel lookup failing)."""
    monkeypatch.setattr(kernels, "_noticed", set())
    monkeypatch.setattr(kernels, "_failed", {})  # no import error recorded: the package is absent
    monkeypatch.setattr(kernels, "load_kernel", lambda module, name: None)

    x = scan_inputs()
    y = kernels.mamba_scan(amago.selective_scan, x[0].as_subclass(CudaLike), *x[1:])
    torch.testing.assert_close(y.as_subclass(torch.Tensor), amago.selective_scan(*x))
    assert "(mamba-ssm is not installed; for mamba-ssm's fused kernel" in capsys.readouterr().out


def test_a_package_that_fails_to_import_is_named_as_such(monkeypatch):
    """An installed kernel package whose import breaks (e.g. mamba-ssm 2.2 under transformers 5, which removed a name
    it imports) is reported with its error, not as missing."""
    monkeypatch.setattr(kernels, "_loaded", {})
    monkeypatch.setattr(kernels, "_failed", {})
    assert kernels.load_kernel("json.no_such_submodule", "f") is None  # `json` is installed, the submodule is not
    assert kernels.why_missing("json.no_such_submodule", "f", "json").startswith(
        "json is installed but its import fails: ModuleNotFoundError: No module named 'json.no_such_submodule'"
    )
    assert kernels.load_kernel("no_such_package.ops", "f") is None
    assert kernels.why_missing("no_such_package.ops", "f", "no-such-package") == "no-such-package is not installed"


def test_the_notice_of_a_broken_kernel_install_gives_its_error(monkeypatch, capsys):
    """On CUDA with mamba-ssm installed but failing to import, the notice names the error (and no install advice)."""
    monkeypatch.setattr(kernels, "_noticed", set())
    monkeypatch.setattr(kernels, "_loaded", {})
    where = ("mamba_ssm.ops.selective_scan_interface", "selective_scan_fn")
    monkeypatch.setattr(kernels, "_failed", {where: "ImportError: cannot import name 'X' from 'transformers'"})
    monkeypatch.setattr(kernels, "load_kernel", lambda module, name: None)

    x = scan_inputs()
    kernels.mamba_scan(amago.selective_scan, x[0].as_subclass(CudaLike), *x[1:])
    out = capsys.readouterr().out
    assert "(mamba-ssm is installed but its import fails: ImportError: cannot import name 'X'" in out
    assert "requirements-cuda.txt" not in out


def test_attention_without_flash_attn_is_sdpa():
    q, k, v = torch.randn(3, 2, 2, 7, 4).unbind(0)
    assert kernels.flash_attention(q, k, v) is None  # CPU, fp32: not flash-attn's case
    torch.testing.assert_close(amago.attention(q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True))


# ---------------------------------------------- module:name hooks ----------------------------------------------
def test_hooks_give_clear_errors():
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")])
    assert load_hook("envs.tmaze:TMazeEpsilonGreedy", "--exploration", "x") is not None
    with pytest.raises(ValueError, match="--relabel 'no_such_module:f': cannot import 'no_such_module'"):
        load_hook("no_such_module:f", "--relabel", "envs.mazerunner:relabel_some")
    with pytest.raises(ValueError, match="--exploration 'tmaze' must name a function.*or egreedy, bilevel"):
        amago.make_exploration(amago.Args(exploration="tmaze", num_envs=1), envs)
    with pytest.raises(ValueError, match="--exploration 'envs.tmaze:LOG_PREFIX' must name a function"):
        amago.make_exploration(amago.Args(exploration="envs.tmaze:LOG_PREFIX", num_envs=1), envs)


def ConstantEpsilon(base, envs):  # a user's exploration: f(EpsilonGreedy, envs) -> a subclass
    class ConstantEpsilon(base):
        def epsilon(self, time_idx):
            return np.full(len(time_idx), 0.25)

    return ConstantEpsilon


@pytest.mark.parametrize("script", [amago, mt])
def test_exploration_hook_builds_a_subclass_of_the_scripts_epsilon_greedy(script):
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 2)
    made = script.make_exploration(script.Args(exploration="tests.test_modules:ConstantEpsilon", num_envs=2), envs)
    assert isinstance(made, script.EpsilonGreedy) and type(made).__name__ == "ConstantEpsilon"
    np.testing.assert_array_equal(made.epsilon(np.zeros(2)), [0.25, 0.25])
    assert made.state_dict()["step_count"] == 0  # the rest is EpsilonGreedy's (schedule, checkpoint state)
    with pytest.raises(ValueError, match="needs a T-Maze env"):
        script.make_exploration(script.Args(exploration="envs.tmaze:TMazeEpsilonGreedy", num_envs=2), envs)
