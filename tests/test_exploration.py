"""Exploration: epsilon-greedy's schedule and noise, bilevel epsilon, T-Maze's low epsilon in the corridor, and
--train-greedy (argmax actions in training rollouts)."""

import gymnasium as gym
import numpy as np
import pytest
from conftest import run_script

import amago_agent as amago
from envs.tmaze import TMazeEpsilonGreedy


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


def test_log_uniform_scale_leaves_whole_corridor_walks_at_full_epsilon():
    """--eps-scale-min m draws each episode's scale log-uniformly in [m, 1]: at schedule 1.0 a third of the episodes
    (m = 1e-3) act with eps < 0.01, where U[0,1) (m = 0, AMAGO's) gives 1%."""
    n, space = 30_000, gym.spaces.Discrete(4)
    log = amago.EpsilonGreedy(n, space, 1.0, 0.05, 100, seed=0, scale_min=1e-3)
    uni = amago.EpsilonGreedy(n, space, 1.0, 0.05, 100, seed=0, scale_min=0.0)
    assert log.scale.min() >= 1e-3 and log.scale.max() <= 1.0
    assert abs(np.log10(log.scale).mean() + 1.5) < 0.02  # log10 scale ~ U[-3, 0]
    assert abs((log.epsilon(0) < 0.01).mean() - 1 / 3) < 0.01 and abs((uni.epsilon(0) < 0.01).mean() - 0.01) < 0.003
    assert abs(uni.scale.mean() - 0.5) < 0.01
    old = log.scale.copy()  # a finished episode redraws its scale from the same distribution, the others keep theirs
    done = np.arange(n) % 2 == 0
    log.end_episodes(done)
    assert (log.scale[~done] == old[~done]).all() and (log.scale[done] != old[done]).mean() > 0.99
    assert log.scale[done].min() >= 1e-3
    # 100 "right" actions in a row kept whole at schedule 1.0: 0.30 of episodes (the integral of (1 - 0.75 eps)^100
    # over the scale's distribution), where U[0,1) gives 0.013
    for ex, expect in ((log, 0.30), (uni, 0.013)):
        ex.anneal, ex.scale = 10**9, ex.draw_scale(n)
        walks = np.all([ex(np.zeros(n, int), np.zeros(n)) == 0 for _ in range(100)], axis=0)
        assert abs(walks.mean() - expect) < 0.015
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 3)
    assert amago.make_exploration(amago.Args(num_envs=3, eps_scale_min=1e-3), envs).scale_min == 1e-3
    assert amago.make_exploration(amago.Args(num_envs=3), envs).scale_min == amago.Args().eps_scale_min == 0.0


def test_tmaze_exploration_is_low_in_the_corridor_only():
    H, N = 20, 3
    space = gym.spaces.Discrete(4)
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("TMazePassive-v0", corridor_length=H)] * N)
    tm = TMazeEpsilonGreedy(amago.EpsilonGreedy, envs)(N, space, 1.0, 0.05, 100, seed=0)  # H read from the env
    eg = amago.EpsilonGreedy(N, space, 1.0, 0.05, 100, seed=0)
    for step in [0, 50, 200]:
        tm.step_count = eg.step_count = step
        for t in range(H + 2):
            eps = tm.epsilon(np.full(N, t))
            expect = np.full(N, 0.5 / H) if 1 <= t <= H - 4 else eg.epsilon(np.full(N, t))
            np.testing.assert_allclose(eps, expect)
    assert not np.allclose(eg.epsilon(0), 0.5 / H)  # outside, the annealed (and randomly scaled) schedule
    # the actions: inside the corridor, a random action replaces the agent's w.p. 0.5/H (changes it w.p. 3/4 of that)
    tm.step_count = 0
    changed = np.mean([tm(np.zeros(N, int), np.full(N, 5)) != 0 for _ in range(20_000)])
    assert abs(changed - 0.5 / H * 0.75) < 0.004
    made = amago.make_exploration(amago.Args(exploration="envs.tmaze:TMazeEpsilonGreedy", num_envs=N), envs)
    assert isinstance(made, amago.EpsilonGreedy) and made.corridor == H


def test_train_greedy_makes_training_rollouts_deterministic(tmp_path):
    """With no exploration and no updates, a greedy policy plays the same actions in every T-Maze episode with the
    same cue; a sampling policy (the default) does not."""

    def actions_by_goal(**flag):
        d = tmp_path / ("greedy" if flag else "sampled")
        d.mkdir()
        run_script(
            d,
            env_id="envs:TMazePassive-v0",
            traj_encoder="ff",
            eps_start=0,
            eps_end=0,
            batches_per_epoch=0,
            traj_save_len=64,
            total_timesteps=612,
            timesteps_per_epoch=51,
            eval_interval=0,
            num_workers=0,
            run_name="r",
            **flag,
        )
        seqs, count = {-1: set(), 1: set()}, {-1: 0, 1: 0}
        for f in (d / "buffers" / "r" / "fifo").glob("*.npz"):
            data = np.load(f)
            assert len(data["actions"]) == 51  # whole episodes (traj_save_len 64)
            goal = int(data["obs_observation"][0, 1])  # the cue in the first observation
            seqs[goal].add(data["actions"].argmax(-1).tobytes())
            count[goal] += 1
        assert sum(count.values()) == 12 and max(count.values()) >= 2  # 12 episodes: some share a cue
        return seqs

    greedy = actions_by_goal(train_greedy=True)
    assert all(len(s) <= 1 for s in greedy.values())
    sampled = actions_by_goal()
    assert any(len(s) > 1 for s in sampled.values())


def test_a_collector_anneals_like_one_process():
    """A collector started to run until its learner ends (a huge --total-timesteps, as common.launch's help suggests)
    has, after N vector steps, the epsilon of a single process after N steps: the schedule counts each actor's env
    steps (--eps-anneal-steps), not a fraction of the run's length."""
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 4)
    one = amago.make_exploration(amago.Args(num_envs=4), envs)
    collector = amago.make_exploration(amago.Args(num_envs=4, mode="collect", total_timesteps=10**12), envs)
    actions = np.zeros(4, int)
    for n in range(1, 20_001):
        one(actions, np.zeros(4))
        collector(actions, np.zeros(4))
        if n in (1, 1_000, 6_250, 12_500, 20_000):
            s1, s2 = one.schedule(one.eps_start, one.eps_end), collector.schedule(one.eps_start, one.eps_end)
            assert s1 == s2, (n, s1, s2)
    assert s1 == 0.05  # annealed after --eps-anneal-steps 12,500 steps per actor


def test_eps_scale_min_outside_0_1_is_refused():
    for bad in (1.0, -0.1):
        with pytest.raises(ValueError, match=rf"--eps-scale-min must lie in \[0, 1\).*got {bad}"):
            amago.check_args(amago.Args(eps_scale_min=bad))
    amago.check_args(amago.Args(eps_scale_min=0.0))  # 0: AMAGO's U[0,1) scale
