"""Sparse Point Robot (envs.point_robot): a goal hidden on the upper half circle, reward only within its radius,
k attempts at one goal per rollout, and the scripted baselines its results are read against."""

import gymnasium as gym
import numpy as np
import pytest
from conftest import INF_BOUNDS, check_strict, record, same

import envs  # noqa: F401  (registers envs:SparsePointRobot-v0)
from envs import LOG_PREFIX
from envs.point_robot import SparsePointRobot, scripted_returns, toward


def test_point_robot_env_checker_and_determinism():
    check_strict(SparsePointRobot(), ignore=[INF_BOUNDS])
    acts = np.random.default_rng(0).uniform(-0.1, 0.1, (200, 2)).astype(np.float32)
    envs_ = [SparsePointRobot() for _ in range(3)]
    a, b, _ = (record(e, seed, acts) for e, seed in zip(envs_, (1, 1, 2)))
    assert same(a, b) and len(a) == 181  # the moves do not depend on the goal: only the reward and the goal do
    assert np.array_equal(envs_[0].goal, envs_[1].goal) and not np.array_equal(envs_[0].goal, envs_[2].goal)


def test_goals_lie_on_the_upper_half_circle_and_change_per_rollout():
    env = gym.make("SparsePointRobot-v0").unwrapped
    goals = []
    for seed in range(200):
        env.reset(seed=seed)
        goals.append(env.goal)
    goals = np.array(goals)
    assert np.allclose(np.linalg.norm(goals, axis=1), 1.0) and (goals[:, 1] >= 0).all()
    angles = np.arctan2(goals[:, 1], goals[:, 0])
    assert angles.min() < 0.3 and angles.max() > np.pi - 0.3 and len(np.unique(angles)) == 200


def test_reward_is_zero_outside_the_goal_radius_and_one_minus_distance_inside():
    env = SparsePointRobot(k_attempts=1, max_steps=100)
    env.reset(seed=3)
    pos, seen = np.zeros(2), []
    for _ in range(30):  # walk straight to the goal and past it
        step = toward(pos, env.goal * 1.3)
        obs, r, *_ = env.step(step)
        pos = obs[:2].astype(np.float64)
        seen.append((np.linalg.norm(pos - env.goal), r))
    dist, rew = np.array(seen).T
    assert (rew[dist > 0.2] == 0).all() and (rew[dist <= 0.2] > 0).any()
    assert np.allclose(rew[dist <= 0.2], 1 - dist[dist <= 0.2], atol=1e-5)
    with pytest.raises(ValueError, match="2 finite numbers"):
        env.step(np.array([np.nan, 0.0]))


def test_attempts_share_the_goal_and_log_their_success():
    env = SparsePointRobot(k_attempts=3, max_steps=60)
    obs, _ = env.reset(seed=5)
    goal = env.goal.copy()
    infos, pos = [], np.zeros(2)
    done = False
    while not done:  # attempt 0: stand still (no reward); attempts 1, 2: drive to the goal
        act = np.zeros(2) if obs[3] == 0 else toward(pos, goal)
        obs, r, done, _, info = env.step(act)
        pos = obs[:2].astype(np.float64)
        infos.append(info)
        assert np.array_equal(env.goal, goal)
    final = infos[-1]
    assert final[f"{LOG_PREFIX} attempt 0 success"] == 0.0 and final[f"{LOG_PREFIX} attempt 0 return"] == 0.0
    assert final[f"{LOG_PREFIX} attempt 2 success"] == 1.0 and final[f"{LOG_PREFIX} attempt 2 return"] > 40
    assert len(infos) == 180


def test_scripted_baselines_order_random_sweep_and_search_then_return():
    """Noise rarely finds the goal; the memory-free sweep finds it in every attempt but pays for the search each
    time; search-then-return pays once, so its later attempts beat its first (memory's worth on this task)."""
    rnd, sweep, mem = (scripted_returns(p, episodes=60, seed=0) for p in ("random", "sweep", "search_then_return"))
    assert rnd["attempt 0 success"] < 0.2 and rnd["return"] < 5
    assert all(sweep[f"attempt {i} success"] == 1.0 for i in range(3))
    assert sweep["attempt 0 return"] == pytest.approx(sweep["attempt 2 return"])
    assert mem["attempt 0 return"] == pytest.approx(sweep["attempt 0 return"])
    assert mem["attempt 1 return"] > mem["attempt 0 return"] + 8 and mem["return"] > sweep["return"] + 15
    with pytest.raises(ValueError, match="'random', 'sweep' or 'search_then_return'"):
        scripted_returns("oracle", episodes=1)
