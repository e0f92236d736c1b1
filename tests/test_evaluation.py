"""Evaluation: evaluate() runs the greedy policy in the eval envs; eval_metrics() turns episodes into logged means."""

import numpy as np
import torch
from conftest import SMALL

import amago_agent as amago
from common.evaluate import evaluate
from common.logs import eval_metrics


def test_evaluate_reports_metrics_per_env_name():
    """evaluate() runs each actor until its share of episodes is done and collects returns, env names and every
    info key under the log prefix; eval_metrics() turns them into per-env-name means and bottom quintiles."""
    envs = amago.make_vec_env("tests.dummy_envs:DummyDiscrete-v0", 2, "sync", 0)
    agent = amago.Agent(amago.Args(**SMALL), envs.single_observation_space["obs"], envs.single_action_space)
    returns, names, extra = evaluate(agent, envs, episodes=5, greedy=True, device="cpu")
    assert len(returns) == 6 and set(names) == {"tests.dummy_envs:DummyDiscrete-v0"}  # 3 per actor
    assert all(e == {"success": 5.0} for e in extra)  # the dummy env reports t at its last (5th) step
    assert all(5 * 1.0 <= r <= 5 * 2.0 for r in returns)  # 5 steps, reward 1 + 0.5 * action
    m = eval_metrics(
        [1.0, 2.0, 3.0, 10.0, 20.0], ["a", "a", "a", "b", "b"], [{"success": 1}, {"success": 0}, {}, {}, {}]
    )
    assert m["eval/a/return"] == 2.0 and m["eval/b/return"] == 15.0 and m["eval/return"] == 8.5  # names weigh equally
    assert m["eval/a/bottom_quintile_return"] == np.percentile([1, 2, 3], 20) and m["eval/a/success"] == 0.5
    assert agent.training and torch.is_grad_enabled()  # evaluation leaves the agent as it found it


def test_evaluation_also_runs_on_a_clock(tmp_path):
    """--eval-minutes: with epochs too long for --eval-interval to come round, an evaluation still comes once the
    minutes have passed, read after every update and at an epoch's end (here almost at once: each time); 0 leaves the
    epoch count alone (the last epoch only)."""
    from conftest import run_script

    from common.logs import read_scalars

    counts = {}
    for minutes in (0.0001, 0.0):
        d = tmp_path / str(minutes)
        d.mkdir()
        run = dict(env_id="CartPole-v1", total_timesteps=128, timesteps_per_epoch=16, batches_per_epoch=2)
        run_script(d, **run, eval_interval=1000, eval_minutes=minutes, num_workers=0, run_name="r")
        scalars = read_scalars(d / "runs/r")
        counts[minutes] = len(scalars["eval/return"]), int(scalars["charts/updates"][-1][2])
    updates = counts[0.0][1]
    assert counts == {0.0001: (updates + 4, updates), 0.0: (1, updates)}  # 4 epochs of 2 actors x 16 steps


def test_eval_sampled_too_logs_a_sampled_evaluation_beside_the_greedy_one(tmp_path):
    """--eval-sampled-too: every evaluation also runs the sampled policy on the same episodes and logs it under
    eval_sampled/ at the same step, in both scripts; without it only eval/ is logged."""
    from conftest import MULTITASK_SCRIPT, SCRIPT, run_script

    from common.logs import read_scalars

    run = dict(env_id="CartPole-v1", total_timesteps=64, timesteps_per_epoch=16, batches_per_epoch=2, num_workers=0)
    for script in (SCRIPT, MULTITASK_SCRIPT):
        for on in (True, False):
            d = tmp_path / f"{script.stem}_{on}"
            d.mkdir()
            run_script(d, script, **run, **({"eval_sampled_too": True} if on else {}), run_name="r")
            scalars = read_scalars(d / "runs/r")
            greedy = [s for _, s, _ in scalars["eval/return"]]
            assert len(greedy) == 1, script  # 2 epochs of 2 actors x 16 steps, an eval every 2 epochs
            if on:
                assert [s for _, s, _ in scalars["eval_sampled/return"]] == greedy, script
                assert "eval_sampled/CartPole-v1/bottom_quintile_return" in scalars
            else:
                assert not any(k.startswith("eval_sampled/") for k in scalars), script
