"""Exploration: epsilon-greedy's schedule and noise, bilevel epsilon, T-Maze's low epsilon in the corridor, and
--train-greedy (argmax actions in training rollouts)."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from conftest import make_agent, run_script

import amago_agent as amago
from common.args import check_args
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
        d = tmp_path / ("_".join(flag) or "sampled")
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
    assert actions_by_goal(greedy_episodes=1.0) == greedy  # every episode drawn greedy: the same argmax actions
    sampled = actions_by_goal()
    assert any(len(s) > 1 for s in sampled.values())


def test_greedy_episodes_are_drawn_per_episode_and_act_on_the_argmax():
    """--greedy-episodes p: each new episode acts greedily with probability p, drawn like its eps scale; at 0 nothing
    is drawn, so the eps stream is the one without the flag; the draw survives a checkpoint; and get_actions takes the
    argmax for exactly the actors marked greedy."""
    space, N = gym.spaces.Discrete(4), 2000
    half = amago.EpsilonGreedy(N, space, 1.0, 0.05, 100, seed=0, greedy_frac=0.5)
    assert 0.45 < half.greedy.mean() < 0.55
    drawn = half.greedy.copy()
    done = np.arange(N) < N // 2  # half of the episodes end: only they draw again
    half.end_episodes(done)
    assert (half.greedy[~done] == drawn[~done]).all() and (half.greedy[done] != drawn[done]).any()
    restored = amago.EpsilonGreedy(N, space, 1.0, 0.05, 100, seed=1, greedy_frac=0.5)
    restored.load_state_dict(half.state_dict())
    assert (restored.greedy == half.greedy).all()
    stream = np.random.default_rng(0)  # the scales AMAGO's exploration draws with seed 0: one per actor, then redraws
    first, redrawn = stream.random(N), stream.random(N)
    off = amago.EpsilonGreedy(N, space, 1.0, 0.05, 100, seed=0, greedy_frac=0.0)
    off.end_episodes(done)
    assert not off.greedy.any() and (off.scale == np.where(done, redrawn, first)).all()
    every = amago.EpsilonGreedy(N, space, 1.0, 0.05, 100, seed=0, greedy_frac=1.0)  # what --train-greedy makes
    every.end_episodes(done)
    assert every.greedy.all() and (every.scale == np.where(done, redrawn, first)).all()  # no draw at 1 either
    assert (half.scale[done] != redrawn[done]).all()  # at 0.5 the greedy draws come between the scales
    old = half.state_dict()
    del old["greedy"]  # a checkpoint written before the option: no episode greedy
    restored.load_state_dict(old)
    assert not restored.greedy.any()
    every.load_state_dict(old)  # an older --train-greedy run resumes with every episode greedy
    assert every.greedy.all()

    def act(agent, rl2, greedy):  # one rollout step of 256 actors, all with the same inputs
        obs, t = {"observation": torch.ones(256, 4)}, torch.zeros(256, dtype=torch.long)
        return agent.get_actions(obs, rl2, t, agent.traj.init_hidden(256, "cpu"), greedy=greedy)[0]

    mask = torch.arange(256) % 2 == 0
    for kind, rl2_dim in (("discrete", 3 + 1), ("box", 2 + 1)):  # rl2: the last reward and action (one-hot or vector)
        agent, _ = make_agent(kind)
        agent.eval()
        rl2 = torch.zeros(256, rl2_dim)
        torch.manual_seed(0)
        a, argmax = act(agent, rl2, mask), act(agent, rl2, True)
        assert (a[mask] == argmax[mask]).all() and (a[~mask] != argmax[~mask]).any(), kind
        torch.manual_seed(0)
        none = act(agent, rl2, torch.zeros(256, dtype=torch.bool))
        torch.manual_seed(0)
        sampled = act(agent, rl2, False)
        assert (none == sampled).all(), kind  # no actor marked greedy: the sampled actions, the same random draws
    with pytest.raises(ValueError, match="--greedy-episodes must lie in"):
        check_args(amago.Args(greedy_episodes=1.5))


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


def test_revisit_power_walks_a_corridor_whole_and_keeps_epsilon_at_new_observations():
    """--eps-revisit-power 2 divides eps by n**2 at an observation seen n times this episode: a T-Maze corridor
    (one observation, repeated) is walked whole at eps 0.5 about a third of the time, where AMAGO's eps never walks
    it, and the junction (a new observation) gets the whole eps. Counts are per actor and restart with the episode;
    continuous observations, which never repeat, keep AMAGO's eps."""
    H, N, space = 100, 4000, gym.spaces.Discrete(4)

    def walk(power):  # the fraction of N actors whose "right" actions all survive the oracle cell and the corridor
        ex = amago.EpsilonGreedy(N, space, 0.5, 0.5, 100, seed=0, revisit_power=power)
        ex.scale[:] = 1.0
        cue = np.stack([np.zeros(N), np.where(np.arange(N) % 2, 1.0, -1.0)], 1).astype(np.float32)
        whole = np.ones(N, bool)
        for t in range(H):  # x = t: the oracle cell (the cue), then H - 1 identical corridor cells
            obs = {"observation": cue if t == 0 else np.zeros((N, 2), np.float32)}
            whole &= ex(np.zeros(N, int), np.full(N, t), obs) == 0
        junction = {"observation": np.tile(np.float32([1, 0]), (N, 1))}
        return whole.mean(), ex.revisit_factor(junction), ex

    p = 0.75 * 0.5  # the chance that eps 0.5 changes a "right" action
    expect = (1 - p) ** 2 * np.prod([1 - p / n**2 for n in range(2, H)])  # oracle and first corridor cell: n = 1
    walked, at_junction, ex = walk(2.0)
    assert abs(walked - expect) < 0.03 and 0.25 < expect < 0.35
    np.testing.assert_allclose(at_junction, 1.0)  # first sight: the whole eps
    assert walk(0.0)[0] == 0.0  # (1 - 0.375)^100: AMAGO's eps never walks it
    corridor = {"observation": np.zeros((N, 2), np.float32)}
    np.testing.assert_allclose(ex.revisit_factor(corridor), 1 / H**2)  # its H-th sight
    done = np.arange(N) < N // 2
    ex.end_episodes(done)  # a new episode: the corridor is new again for the actors that finished, only
    factor = ex.revisit_factor(corridor)
    np.testing.assert_allclose(factor[done], 1.0)
    np.testing.assert_allclose(factor[~done], 1 / (H + 1) ** 2)
    rng = np.random.default_rng(0)  # continuous observations never repeat exactly: eps as AMAGO's
    lander = amago.EpsilonGreedy(8, gym.spaces.Discrete(4), 1.0, 0.05, 100, seed=0, revisit_power=2.0)
    for _ in range(50):
        np.testing.assert_allclose(lander.revisit_factor({"observation": rng.standard_normal((8, 8))}), 1.0)
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 3)
    assert amago.make_exploration(amago.Args(num_envs=3, eps_revisit_power=2.0), envs).revisit_power == 2.0
    with pytest.raises(ValueError, match=r"--eps-revisit-power must be >= 0.*got -1.0"):
        amago.check_args(amago.Args(eps_revisit_power=-1.0))


def test_revisit_power_leaves_a_landing_lunar_lander_as_amago_explores_it():
    """LunarLander's observations never repeat exactly within an episode (an episode ends when the lander comes to
    rest), so the default --eps-revisit-power changes none of its actions: the same seed explores exactly as with the
    term off (AMAGO's epsilon-greedy), step for step, over whole landings by gymnasium's heuristic pilot."""
    from gymnasium.envs.box2d.lunar_lander import heuristic

    env = gym.make("LunarLander-v3")
    space = env.action_space
    amago_eps = amago.EpsilonGreedy(1, space, 1.0, 0.05, 2_000, seed=0, revisit_power=0.0)
    revisit = amago.EpsilonGreedy(1, space, 1.0, 0.05, 2_000, seed=0, revisit_power=amago.Args().eps_revisit_power)
    assert revisit.revisit_power > 0
    steps = 0
    for episode in range(4):
        obs, _ = env.reset(seed=episode)
        done = False
        while not done:
            pilot = np.array([heuristic(env.unwrapped, obs)])
            seen = {"observation": obs[None]}
            a = amago_eps(pilot, np.array([steps]), seen)
            assert (revisit(pilot, np.array([steps]), seen) == a).all()
            obs, _, term, trunc, _ = env.step(int(a[0]))
            done = term or trunc
            amago_eps.end_episodes(np.array([done]))
            revisit.end_episodes(np.array([done]))
            steps += 1
    assert steps > 600  # whole landings, not crashes in a few steps


def test_updates_per_epoch_keep_the_replay_ratio_across_context_lengths():
    """--batches-per-epoch unset: as many updates as train --replay-ratio timesteps per env step collected, 200 at the
    defaults and fewer, longer windows for a longer context; an explicit count wins."""
    A = amago.Args
    assert amago.updates_per_epoch(A()) == 200  # 192 * 800 / (24 * 32): the user's LunarLander command is unchanged
    assert [amago.updates_per_epoch(A(max_seq_len=L)) for L in (51, 101, 104, 416, 501)] == [125, 63, 62, 15, 13]
    assert amago.updates_per_epoch(A(batches_per_update=2)) == 100  # one update trains two batches
    assert amago.updates_per_epoch(A(max_seq_len=10_000)) == 1  # never 0
    assert amago.updates_per_epoch(A(max_seq_len=501, batches_per_epoch=100)) == 100
    assert amago.updates_per_epoch(A(batches_per_epoch=0)) == 0  # collect only
    for bad, msg in (
        (dict(replay_ratio=0.0), "--replay-ratio must be > 0"),
        (dict(batches_per_epoch=-1), "must be >= 0"),
    ):
        with pytest.raises(ValueError, match=msg):
            amago.check_args(A(**bad))


def test_eps_floor_keeps_random_actions_at_revisited_observations():
    """--eps-floor: at an observation seen many times, where --eps-revisit-power 2 leaves almost no epsilon, a random
    action still comes with probability >= the floor; 0 changes nothing."""
    space, N, steps = gym.spaces.Discrete(4), 64, 400
    obs = {"observation": np.zeros((N, 2), np.float32)}  # the same observation at every step: a corridor, or a wall
    rates = {}
    for floor in (0.0, 0.01):
        ex = amago.EpsilonGreedy(N, space, 0.5, 0.5, 100, seed=0, revisit_power=2.0, floor=floor)
        changed = sum((ex(np.zeros(N, np.int64), np.zeros(N), obs) != 0).sum() for _ in range(steps))
        rates[floor] = changed / (N * steps)
    assert rates[0.0] < 0.002  # 0.5 * 3/4 * (1 + 1/4 + 1/9 + ...) / 400 random non-zero actions per step
    assert 0.006 < rates[0.01] < 0.0105  # the floor: 0.01 * 3/4 of the steps take another action, plus the first ones
    with pytest.raises(ValueError, match="--eps-floor must lie in"):
        check_args(amago.Args(eps_floor=1.5))
