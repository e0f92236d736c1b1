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
    agent.eval()  # acting mid-rollout (no dropout, cached sigma-reparam weights): an eval on the clock keeps it so
    evaluate(agent, envs, episodes=2, greedy=True, device="cpu")
    assert not agent.training


def test_evaluation_also_runs_on_a_clock(tmp_path):
    """--eval-minutes: with epochs too long for --eval-interval to come round, an evaluation still comes once the
    minutes have passed, read after every env step, every update and at an epoch's end (here almost at once: each
    time); 0 leaves the epoch count alone (the last epoch only)."""
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
    # 4 epochs of 2 actors x 16 steps: each evaluation outlasts the 6-ms window, so one follows every env step, every
    # update and every epoch's end
    assert counts == {0.0001: (4 * 16 + updates + 4, updates), 0.0: (1, updates)}


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


def test_update_and_collect_rates_leave_evaluation_time_out(tmp_path):
    """charts/updates_per_s and charts/collect_SPS time the epoch's updates and env steps alone (benchmarks/
    loop_split.py's definition): with an evaluation on the clock after nearly every update and env step, each longer
    than many updates, the logged rates stay those of a run without them."""
    import statistics

    from conftest import run_script

    from common.logs import read_scalars

    rates = {}
    for minutes in (0.0001, 0.0):
        d = tmp_path / str(minutes)
        d.mkdir()
        run = dict(env_id="CartPole-v1", total_timesteps=128, timesteps_per_epoch=16, batches_per_epoch=20)
        run_script(d, **run, eval_interval=1000, eval_minutes=minutes, eval_episodes=40, num_workers=0, run_name="r")
        scalars = read_scalars(d / "runs/r")
        evals = len(scalars["eval/return"])
        rates[minutes] = [
            statistics.median(v for _, _, v in scalars[t][1:]) for t in ("charts/updates_per_s", "charts/collect_SPS")
        ]
    assert evals == 1  # the run without the clock: the last epoch's evaluation only
    assert rates[0.0001][0] > 0.5 * rates[0.0][0] and rates[0.0001][1] > 0.5 * rates[0.0][1], rates


def test_seeds_evaluate_on_tasks_of_their_own():
    """Runs of seeds 1-5 never share an eval episode's reset seed over 10,000 evaluations of 8 actors (with
    seed + 10,000 + epoch * 8 seeds 1 and 2 shared 7 of 8 at every eval); the same seed repeats its own."""
    from common.evaluate import eval_seed

    used = [{eval_seed(seed, epoch, 8) + i for epoch in range(10_000) for i in range(8)} for seed in range(1, 6)]
    assert sum(map(len, used)) == len(set().union(*used)) == 5 * 80_000
    assert eval_seed(3, 7, 8) == eval_seed(3, 7, 8) and max(map(max, used)) < 2**31
