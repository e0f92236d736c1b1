import gymnasium as gym
import numpy as np
import pytest

import amago_agent as amago
from tests.dummy_envs import CountingEnv


def test_old_lunarlander_id_resolves_to_newest(capsys):
    assert amago.resolve_env_id("LunarLander-v2") == "LunarLander-v3"
    assert "using LunarLander-v3" in capsys.readouterr().out
    assert amago.resolve_env_id("CartPole-v1") == "CartPole-v1"
    assert amago.resolve_env_id("CartPole-v0") == "CartPole-v0"  # an old version that still exists is kept
    assert amago.resolve_env_id("CartPole") == "CartPole-v1"


def test_module_colon_id_imports_the_module():
    assert amago.resolve_env_id("tests.dummy_envs:DummyBox-v0") == "DummyBox-v0"


def test_unknown_id_gives_clear_error():
    with pytest.raises(gym.error.Error, match="NotAnEnv-v0"):
        amago.resolve_env_id("NotAnEnv-v0")


def test_rl2_and_time_alignment_through_vector_env():
    """Through the real (same-step autoreset) vector env and across episode boundaries: rl2 at t+1 is
    [r_t, onehot(a_t)], the time index counts steps since reset, the true final obs arrives in final_obs,
    and the reset obs has zero rl2 and time 0."""
    envs = gym.vector.SyncVectorEnv(
        [lambda: amago.AmagoEnv(CountingEnv(length=4), "c"), lambda: amago.AmagoEnv(CountingEnv(length=6), "c")],
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
    )
    # use the script's own vector-env settings
    assert (
        amago.make_vec_env("CartPole-v1", 2, "sync", 0).metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    )
    obs, _ = envs.reset(seed=0)
    assert (obs["rl2"] == 0).all() and (obs["time"] == 0).all()
    rng = np.random.default_rng(0)
    seen_done = 0
    for _step in range(14):
        a = rng.integers(0, 3, 2)
        prev_time = obs["time"].copy()
        obs, rew, term, trunc, info = envs.step(a)
        for i in range(2):
            expect = np.concatenate([[rew[i]], np.eye(3)[a[i]]])
            if term[i] or trunc[i]:
                seen_done += 1
                final = info["final_obs"][i]
                np.testing.assert_allclose(final["rl2"], expect)
                assert final["time"] == prev_time[i] + 1 == (4, 6)[i]
                assert (obs["rl2"][i] == 0).all() and obs["time"][i] == 0
            else:
                np.testing.assert_allclose(obs["rl2"][i], expect)
                assert obs["time"][i] == prev_time[i] + 1
    assert seen_done >= 3


def test_box_actions_are_rescaled_and_recorded_in_minus_one_one():
    inner = CountingEnv(box=True)
    env = amago.AmagoEnv(inner, "box")
    assert env.action_space.low.tolist() == [-1, -1] and env.action_space.high.tolist() == [1, 1]
    env.reset(seed=0)
    obs, *_ = env.step(np.array([0.5, -1.0], np.float32))
    np.testing.assert_allclose(inner.received[-1], [1.0, 0.0])  # [-2, 2] and [0, 10] scales
    np.testing.assert_allclose(obs["rl2"], [1.0, 0.5, -1.0])  # reward (env scale), then the [-1, 1] action


def test_unbounded_box_action_space_is_rejected():
    env = CountingEnv(box=True)
    env.action_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
    with pytest.raises(ValueError, match="bounded"):
        amago.AmagoEnv(env, "x")


def test_exploration_schedule_and_noise():
    space = gym.spaces.Discrete(4)
    ex = amago.EpsilonGreedy(1000, space, 1.0, 0.05, anneal_steps=100, seed=0)
    greedy = np.zeros(1000, int)
    first = ex(greedy, np.zeros(1000))
    frac_random = (first != 0).mean()  # E[U * 1.0] * 3/4 = 0.375
    assert 0.3 < frac_random < 0.45
    ex.step_count = 10_000
    assert ex.schedule(1.0, 0.05) == 0.05
    box = amago.EpsilonGreedy(4, gym.spaces.Box(-1, 1, (2,)), 1.0, 0.05, 100, 0)
    out = box(np.full((4, 2), 0.99, np.float32), np.zeros(4))
    assert out.dtype == np.float32 and (np.abs(out) <= 1).all()
    bilevel = amago.BilevelEpsilonGreedy(3, space, 1.0, 0.05, 100, 0, horizon=10, eps_end_schedule=(0.5, 0.01))
    bilevel.scale[:] = 1.0
    np.testing.assert_allclose(bilevel.epsilon(np.array([0, 5, 10])), [1.0, 0.75, 0.5])


def test_evaluate_reports_metrics_per_env_name():
    """evaluate() runs each actor until its share of episodes is done and collects returns, env names and every
    info key under the log prefix; eval_metrics() turns them into per-env-name means and bottom quintiles."""
    import torch

    envs = amago.make_vec_env("tests.dummy_envs:DummyDiscrete-v0", 2, "sync", 0)
    args = amago.Args(
        d_model=16, n_layers=1, n_heads=2, d_ff=32, tstep_hidden=16, tstep_dim=16, actor_hidden=16, critic_hidden=16
    )
    agent = amago.Agent(args, envs.single_observation_space["obs"], envs.single_action_space)
    returns, names, extra = amago.evaluate(agent, envs, episodes=5, greedy=True, device="cpu")
    assert len(returns) == 6 and set(names) == {"tests.dummy_envs:DummyDiscrete-v0"}  # 3 per actor
    assert all(e == {"success": 5.0} for e in extra)  # the dummy env reports t at its last (5th) step
    assert all(5 * 1.0 <= r <= 5 * 2.0 for r in returns)  # 5 steps, reward 1 + 0.5 * action
    m = amago.eval_metrics(
        [1.0, 2.0, 3.0, 10.0, 20.0], ["a", "a", "a", "b", "b"], [{"success": 1}, {"success": 0}, {}, {}, {}]
    )
    assert m["eval/a/return"] == 2.0 and m["eval/b/return"] == 15.0 and m["eval/return"] == 8.5  # names weigh equally
    assert m["eval/a/bottom_quintile_return"] == np.percentile([1, 2, 3], 20) and m["eval/a/success"] == 0.5
    assert agent.training and torch.is_grad_enabled()  # evaluation leaves the agent as it found it
