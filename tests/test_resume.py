"""Checkpoints and resume: a resumed update is bit-identical to an uninterrupted one, a checkpoint write is atomic, a
resumed run continues its counters and buffer, and the learning-rate schedule that follows the update count."""

import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
import torch
from accelerate import Accelerator
from conftest import ROOT, SCRIPT, make_agent, random_batch, run_script

import amago_agent as amago


def build(seed):
    agent, args = make_agent("discrete", warmup_steps=2)
    torch.manual_seed(seed)  # a different init: loading must overwrite all of it
    for p in agent.parameters():
        p.data.normal_()
    opt = torch.optim.AdamW(agent.trainable_parameters(), lr=1e-3, weight_decay=1e-3, fused=True)
    acc = Accelerator(cpu=True)
    agent, opt = acc.prepare(agent, opt)
    explore = amago.EpsilonGreedy(2, gym.spaces.Discrete(3), 1.0, 0.05, 100, 0)
    return agent, opt, acc, args, explore


def test_resumed_update_matches_uninterrupted_exactly(tmp_path):
    batches = [random_batch(build(0)[0], seed=i) for i in range(5)]
    agent, opt, acc, args, explore = build(0)
    k = 3
    for i in range(k):
        amago.train_step(agent, opt, acc, batches[i], args, i)
    amago.save_checkpoint(tmp_path / "ckpt.pt", agent, opt, explore, {"updates": k, "epoch": 1, "global_step": 99})
    m1 = amago.train_step(agent, opt, acc, batches[k], args, k)

    agent2, opt2, acc2, args2, explore2 = build(123)
    counters = amago.load_checkpoint(tmp_path / "ckpt.pt", agent2, opt2, explore2)
    assert counters == {"updates": k, "epoch": 1, "global_step": 99}
    m2 = amago.train_step(agent2, opt2, acc2, batches[k], args2, counters["updates"])
    for (name, a), b in zip(agent.state_dict().items(), agent2.state_dict().values()):
        assert torch.equal(a, b), name  # weights, targets, PopArt, input norm: bit-identical
    assert m1["losses/critic_loss"].item() == m2["losses/critic_loss"].item()
    s1, s2 = opt.state_dict()["state"], opt2.state_dict()["state"]
    assert all(torch.equal(s1[i]["exp_avg_sq"], s2[i]["exp_avg_sq"]) for i in s1)


def test_checkpoint_write_is_atomic(tmp_path, monkeypatch):
    """A save that dies midway (disk full, kill) leaves the previous checkpoint whole and loadable."""
    agent, opt, acc, args, explore = build(0)
    path = tmp_path / "ckpt.pt"
    amago.save_checkpoint(path, agent, opt, explore, {"updates": 1})

    def dying_save(obj, f):
        open(f, "wb").write(b"half a checkpoint")
        raise OSError("killed mid-save")

    monkeypatch.setattr(amago.torch, "save", dying_save)
    with pytest.raises(OSError):
        amago.save_checkpoint(path, agent, opt, explore, {"updates": 2})
    monkeypatch.undo()
    assert amago.load_checkpoint(path, agent, opt, explore) == {"updates": 1}


def run_cartpole(tmp_path, **args):
    cartpole = dict(env_id="CartPole-v1", timesteps_per_epoch=20, batches_per_epoch=3, eval_interval=0, run_name="r")
    return run_script(tmp_path, check=False, **{**cartpole, "checkpoint_interval": 1, "num_workers": 0, **args})


def test_script_resume_continues_counters_and_buffer(tmp_path):
    first = run_cartpole(tmp_path, total_timesteps=80)
    assert first.returncode == 0, first.stderr[-3000:]
    files_before = set((tmp_path / "buffers/r/fifo").glob("*.npz"))
    state = torch.load(tmp_path / "runs/r/checkpoint.pt", weights_only=False)
    updates = state["counters"]["updates"]  # 3 per epoch once a first episode has been saved
    assert state["counters"] == {"epoch": 2, "global_step": 80, "updates": updates, "frames": {"CartPole-v1": 80}}
    assert updates in (3, 6)
    second = run_cartpole(tmp_path, total_timesteps=160, resume=True)
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"resumed r at epoch 2, 80 steps, {updates} updates" in second.stdout
    bar = re.findall(r"(\d+)/(\d+) env steps \[", second.stderr)  # the progress bar counts the run's env steps, from 80
    assert bar[0] == ("80", "160") and bar[-1] == ("160", "160")
    state = torch.load(tmp_path / "runs/r/checkpoint.pt", weights_only=False)
    assert state["counters"] == {"epoch": 4, "global_step": 160, "updates": updates + 6, "frames": {"CartPole-v1": 160}}
    assert files_before <= set((tmp_path / "buffers/r/fifo").glob("*.npz"))  # the old data is still there


def test_resume_from_the_name_alone_continues_bit_exactly(tmp_path):
    """`--resume --run-name r` restores every flag from runs/r/flags.json: the continued run is bit-identical to one
    resumed with all of its flags typed again. A safe flag (--total-timesteps) is applied; an architecture flag that
    differs from the run's is refused, naming both values, before anything changes."""
    flags_of_run = dict(timesteps_per_epoch=20, batches_per_epoch=3, d_model=16, learning_rate=1e-3)
    states = []
    for name in ("typed", "named"):
        d = tmp_path / name
        d.mkdir()
        assert run_cartpole(d, total_timesteps=80, **flags_of_run).returncode == 0
        if name == "typed":
            out = run_cartpole(d, total_timesteps=160, resume=True, **flags_of_run)
        else:
            env = {"PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent), "OMP_NUM_THREADS": "1"}
            refused = subprocess.run(
                [sys.executable, str(SCRIPT), "--resume", "--run-name", "r", "--d-model", "32"],
                cwd=d,
                capture_output=True,
                text=True,
                timeout=300,
                env=env,
            )
            assert refused.returncode != 0 and "--resume: --d-model 32 differs from run r's 16" in refused.stderr
            cmd = [sys.executable, str(SCRIPT), "--resume", "--run-name", "r", "--total-timesteps", "160"]
            out = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=300, env=env)
            assert "note: --resume with --total-timesteps 160 (the run had 80)" in out.stdout
        assert out.returncode == 0, out.stderr[-3000:]
        states.append(torch.load(d / "runs/r/checkpoint.pt", weights_only=False))
    assert states[0]["counters"] == states[1]["counters"] and states[0]["counters"]["epoch"] == 4
    for (key, a), b in zip(states[0]["agent"].items(), states[1]["agent"].values()):
        assert torch.equal(a, b), key


def test_resume_without_checkpoint_is_a_clear_error(tmp_path):
    out = run_cartpole(tmp_path, total_timesteps=40, resume=True, run_name="nothing-here")
    assert out.returncode != 0 and "no checkpoint at runs/nothing-here/checkpoint.pt" in out.stderr


def test_learning_rate_warms_up_then_holds_or_anneals():
    """Warm-up from 0, then constant (the reference); --anneal-lr decays linearly to 0 at the run's last update."""
    args = amago.Args(
        learning_rate=1e-3,
        warmup_steps=100,
        total_timesteps=8000,
        num_envs=8,
        timesteps_per_epoch=100,
        batches_per_epoch=200,
    )
    total = 10 * 200  # 10 epochs of 200 updates
    assert amago.num_epochs(args) == 10
    assert amago.lr_at(args, 0) == 0.0 and amago.lr_at(args, 50) == pytest.approx(5e-4)
    assert amago.lr_at(args, 100) == amago.lr_at(args, total) == pytest.approx(1e-3)
    args.anneal_lr = True
    assert amago.lr_at(args, 50) == pytest.approx(5e-4)  # still warming up
    assert amago.lr_at(args, total // 2) == pytest.approx(5e-4)
    assert amago.lr_at(args, total - 200) == pytest.approx(1e-4) and amago.lr_at(args, total) == 0.0
    agent, opt, acc, args2, _ = build(0)
    args2.anneal_lr, args2.warmup_steps = True, 1
    total2 = amago.num_epochs(args2) * amago.updates_per_epoch(args2)
    amago.train_step(agent, opt, acc, random_batch(agent), args2, total2 // 4)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.75 * args2.learning_rate)  # the optimizer gets lr_at's value
