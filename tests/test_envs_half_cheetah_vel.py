"""HalfCheetah-Vel (envs.half_cheetah_vel): the hidden target velocity is drawn per reset, and the reward peaks at it."""

import numpy as np
import pytest
from conftest import INF_BOUNDS, check_strict, needs_mujoco, record, same

from envs import LOG_PREFIX


@pytest.fixture(autouse=True)
def in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo 4 writes a deprecation warning about gymnasium's model to ./MUJOCO_LOG.TXT


@needs_mujoco
def test_half_cheetah_vel_env_checker_and_determinism():
    from envs.half_cheetah_vel import HalfCheetahVel

    check_strict(HalfCheetahVel(), ignore=[INF_BOUNDS])  # MuJoCo velocities are unbounded (HalfCheetah-v5's space)
    acts = np.random.default_rng(0).uniform(-1, 1, (30, 6)).astype(np.float32)
    envs_ = [HalfCheetahVel() for _ in range(3)]
    a, b, c = (record(e, seed, acts) for e, seed in zip(envs_, (1, 1, 2)))
    assert same(a, b) and not same(a, c)
    assert envs_[0].target_velocity == envs_[1].target_velocity != envs_[2].target_velocity


@needs_mujoco
def test_half_cheetah_vel_target_changes_across_resets():
    from envs.half_cheetah_vel import HalfCheetahVel

    env = HalfCheetahVel()
    env.reset(seed=0)
    targets = []
    for _ in range(30):
        env.reset()
        targets.append(env.target_velocity)
    assert len(set(targets)) == 30 and 0 <= min(targets) and max(targets) <= 3 and max(targets) - min(targets) > 1.5


@needs_mujoco
def test_half_cheetah_vel_reward_peaks_at_the_target_velocity():
    """From one state, give the torso different forward speeds and step with zero torque (no control cost): the
    step whose measured velocity is closest to the hidden target gets the highest reward, and every reward is
    -|v - target|. With torque, the reward drops by exactly 0.05 * sum(a^2) on top."""
    from envs.half_cheetah_vel import HalfCheetahVel

    env = HalfCheetahVel()
    env.reset(seed=0)
    env.target_velocity = 1.7
    qpos, qvel = env.data.qpos.copy(), env.data.qvel.copy()
    velocities, rewards = [], []
    for speed in np.linspace(-1, 4, 21):
        v0 = qvel.copy()
        v0[0] = speed  # the slider joint's velocity: forward speed of the torso
        env.set_state(qpos, v0)
        _, r, *_, info = env.step(np.zeros(6, np.float32))
        velocities.append(info["x_velocity"])
        rewards.append(r)
    velocities, rewards = np.array(velocities), np.array(rewards)
    assert velocities.max() - velocities.min() > 3  # the speeds really differ
    np.testing.assert_allclose(rewards, -np.abs(velocities - 1.7), atol=1e-9)
    assert np.argmax(rewards) == np.argmin(np.abs(velocities - 1.7)) and rewards.max() > -0.3
    env.set_state(qpos, qvel)
    a = np.full(6, 0.5, np.float32)
    _, r, *_, info = env.step(a)
    assert r == pytest.approx(-abs(info["x_velocity"] - 1.7) - 0.05 * np.sum(a**2))


@needs_mujoco
def test_half_cheetah_vel_episode_end_logs_the_final_velocity_error():
    from envs.half_cheetah_vel import HalfCheetahVel

    assert HalfCheetahVel().episode_length == 1000
    env = HalfCheetahVel(episode_length=60)
    env.reset(seed=0)
    vs = []
    for t in range(60):
        _, _, term, trunc, info = env.step(np.ones(6, np.float32) * (-1) ** t)
        vs.append(info["x_velocity"])
        assert not term and trunc == (t == 59)
    key = f"{LOG_PREFIX} target velocity error (final 50 steps)"
    assert info[key] == pytest.approx(abs(np.mean(vs[-50:]) - env.target_velocity))
    with pytest.raises(ValueError, match="task_min_velocity 3 must be <= task_max_velocity 1"):
        HalfCheetahVel(task_min_velocity=3, task_max_velocity=1)


@needs_mujoco
def test_the_even_eval_set_gives_each_actor_of_an_eval_its_own_target():
    """envs:HalfCheetahVel-Even8-v0: the 8 actors of one evaluation (reset seeds s..s+7, as the eval resets them) get
    the 8 midpoints of [0, 3]'s eighths, whatever s; a velocity-blind speed's mean error on them is 0.75 at best."""
    import gymnasium as gym

    import envs  # noqa: F401 (registers the ids)
    from envs.half_cheetah_vel import EVEN_TARGETS

    env = gym.make("HalfCheetahVel-Even8-v0").unwrapped
    assert env.targets == EVEN_TARGETS
    for start in (10_001, 1_010_019):
        got = []
        for i in range(8):
            env.reset(seed=start + i)
            got.append(env.target_velocity)
        assert sorted(got) == list(EVEN_TARGETS)
    env.reset()  # an unseeded reset: the next target of the set
    assert env.target_velocity == EVEN_TARGETS[(start + 7 + 1) % 8]
    speeds = np.linspace(0, 3, 301)
    assert np.abs(speeds[:, None] - np.array(EVEN_TARGETS)).mean(1).min() == pytest.approx(0.75)
