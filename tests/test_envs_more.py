"""POPGym adapter, HalfCheetah-Vel, MazeRunner and the replay buffer's hindsight relabeling hook."""

import itertools
import random
import subprocess
import sys
import warnings
from collections import deque
from importlib.util import find_spec
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

import amago_agent as amago
import envs  # noqa: F401  (registers the ids)
from envs import LOG_PREFIX
from envs.mazerunner import MOVES, MazeRunner, relabel, relabel_all, relabel_some

needs_popgym = pytest.mark.skipif(find_spec("popgym") is None, reason="popgym is not installed")
needs_mujoco = pytest.mark.skipif(find_spec("mujoco") is None, reason="mujoco is not installed")


@pytest.fixture(autouse=True)
def in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo 4 writes a deprecation warning about gymnasium's model to ./MUJOCO_LOG.TXT


INF_BOUNDS = ".*Box observation space (minimum|maximum) value is -?infinity"


def check_strict(env, ignore=()):
    """gymnasium's env checker with every warning an error, except the listed ones (regexes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for message in ignore:
            warnings.filterwarnings("ignore", message=message)
        check_env(env, skip_render_check=True)


def rollout(env, seed, actions):
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


# ----------------------------------------------------------------------------------------------------------------
# POPGym
# ----------------------------------------------------------------------------------------------------------------
@needs_popgym
def test_popgym_every_game_passes_the_env_checker():
    from envs.popgym_env import POPGym, popgym_games

    games = sorted(popgym_games())
    assert len(games) >= 39 and "RepeatPreviousEasy" in games
    for game in games:
        ignore = []
        if game.startswith("VelocityOnlyCartpole"):  # popgym's own observation space is unbounded
            ignore.append(INF_BOUNDS)
        if "Pendulum" in game:  # popgym's own torque space is [-2, 2]; AmagoEnv rescales Box actions to [-1, 1]
            ignore.append(".*symmetric and normalized space")
        check_strict(POPGym(game), ignore)


@needs_popgym
def test_popgym_one_hot_observations_and_timer():
    import popgym.envs

    from envs.popgym_env import POPGym

    env, raw = POPGym("RepeatPreviousEasy"), popgym.envs.RepeatPreviousEasy()
    assert env.observation_space.shape == (4 + 1,)  # Discrete(4) card suit one-hot + timer
    obs, _ = env.reset(seed=3)
    raw_obs, _ = raw.reset(seed=3)
    for t in range(1, 30):
        assert obs.dtype == np.float32 and obs[:4].sum() == 1 and obs[raw_obs] == 1  # the suit, one-hot
        assert obs[4] == np.float32((t - 1) / 1000)
        a = t % 4
        obs, r, *_ = env.step(a)
        raw_obs, raw_r, *_ = raw.step(a)
        assert r == raw_r
    # Tuple(Discrete(2), Discrete(4)): both parts one-hot, then the timer
    auto = POPGym("popgym-AutoencodeEasy-v0")
    obs, _ = auto.reset(seed=0)
    assert obs.shape == (2 + 4 + 1,) and obs[:2].sum() == 1 and obs[2:6].sum() == 1 and obs[6] == 0
    # MultiDiscrete([2, 2]): one one-hot slot per component
    count = POPGym("CountRecallEasy")
    assert count.observation_space.shape == (2 + 2 + 1,)
    assert count.reset(seed=0)[0][:4].sum() == 2


@needs_popgym
def test_popgym_multidiscrete_actions_are_raveled():
    from envs.popgym_env import POPGym

    env = POPGym("BattleshipEasy")  # shoot at a cell of an 8 x 8 board
    assert env.action_space == gym.spaces.Discrete(64)
    env.reset(seed=0)
    sent, inner_step = [], env.env.step
    env.env.step = lambda a: (sent.append(tuple(int(x) for x in a)), inner_step(a))[1]
    env.step(19)
    env.step(63)
    assert sent == [(2, 3), (7, 7)]  # row-major: 19 = 2 * 8 + 3


@needs_popgym
def test_popgym_time_limit_truncation_is_terminal():
    import popgym.envs

    from envs.popgym_env import POPGym

    env, raw = POPGym("MultiarmedBanditEasy"), popgym.envs.MultiarmedBanditEasy()  # only ever ends by truncation
    env.reset(seed=0)
    raw.reset(seed=0)
    for t in itertools.count(1):  # noqa: B007
        _, _, term, trunc, _ = env.step(0)
        _, _, raw_term, raw_trunc, _ = raw.step(0)
        assert (term, trunc) == (raw_trunc, raw_trunc) and not raw_term  # truncated -> terminated as well
        if trunc:
            break
    assert t == 200


@needs_popgym
@pytest.mark.parametrize("game", ["RepeatPreviousEasy", "BattleshipEasy", "PositionOnlyCartPoleEasy"])
def test_popgym_is_deterministic_under_a_seed(game):
    from envs.popgym_env import POPGym

    acts = np.random.default_rng(0).integers(0, POPGym(game).action_space.n, 60)
    a, b, c = (rollout(POPGym(game), seed, acts) for seed in (5, 5, 6))
    assert same(a, b) and not same(a, c)


@needs_popgym
def test_popgym_ids_are_registered_and_bad_names_are_clear_errors():
    from envs.popgym_env import POPGym

    env = gym.make("PopGym-RepeatPreviousEasy-v0")
    assert env.unwrapped.env_name == "PopGym-RepeatPreviousEasy" and env.observation_space.shape == (5,)
    with pytest.raises(ValueError, match="unknown POPGym game 'RepeatLast'; accepted: .*RepeatPreviousEasy"):
        POPGym("RepeatLast")


# ----------------------------------------------------------------------------------------------------------------
# HalfCheetah-Vel
# ----------------------------------------------------------------------------------------------------------------
@needs_mujoco
def test_half_cheetah_vel_env_checker_and_determinism():
    from envs.half_cheetah_vel import HalfCheetahVel

    check_strict(HalfCheetahVel(), ignore=[INF_BOUNDS])  # MuJoCo velocities are unbounded (HalfCheetah-v5's space)
    acts = np.random.default_rng(0).uniform(-1, 1, (30, 6)).astype(np.float32)
    envs_ = [HalfCheetahVel() for _ in range(3)]
    a, b, c = (rollout(e, seed, acts) for e, seed in zip(envs_, (1, 1, 2)))
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


# ----------------------------------------------------------------------------------------------------------------
# MazeRunner
# ----------------------------------------------------------------------------------------------------------------
def shortest_path(maze, start, goal):
    """Actions (MOVES indices) of a shortest path, by breadth-first search; None if goal cannot be reached."""
    prev, queue = {start: None}, deque([start])
    while queue:
        cell = queue.popleft()
        if cell == goal:
            break
        for a, (di, dj) in enumerate(MOVES[:4]):
            nxt = (cell[0] + di, cell[1] + dj)
            if not maze[nxt] and nxt not in prev:
                prev[nxt] = (cell, a)
                queue.append(nxt)
    if goal not in prev:
        return None
    acts = []
    while prev[goal] is not None:
        goal, a = prev[goal]
        acts.append(a)
    return acts[::-1]


@pytest.mark.parametrize("kwargs", [{}, {"maze_size": 7, "num_goals": 2, "time_limit": 30, "randomized_actions": True}])
def test_mazerunner_env_checker_and_determinism(kwargs):
    check_strict(MazeRunner(**kwargs))
    acts = np.random.default_rng(0).integers(0, 5, 100)
    a, b, c = (rollout(MazeRunner(**kwargs), seed, acts) for seed in (4, 4, 5))
    assert same(a, b) and not same(a, c)


def test_mazerunner_mazes_are_connected_and_goals_valid():
    env = MazeRunner(maze_size=9, num_goals=4)
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        free = {tuple(c) for c in np.argwhere(~env.maze)}
        assert env.maze[0].all() and env.maze[-1].all() and env.maze[:, 0].all() and env.maze[:, -1].all()
        assert all(shortest_path(env.maze, env.start, c) is not None for c in free)  # every open cell reachable
        goals = {tuple(g) for g in obs["goals"]}
        assert len(goals) == 4 and goals <= free and env.start not in goals
        assert tuple(obs["achieved"][0]) == env.start and obs["obs"][-1] == 0


def test_mazerunner_goals_reached_in_order_terminate():
    env = MazeRunner(maze_size=11, num_goals=3, time_limit=500)
    for seed in range(20):  # a maze where the way to goal 1 does not pass goal 0, to test the order too
        obs, _ = env.reset(seed=seed)
        g = [tuple(x) for x in obs["goals"]]
        to_g1 = shortest_path(env.maze, env.start, g[1])
        cells = np.cumsum([MOVES[a] for a in to_g1], 0) + env.start
        if g[0] not in {tuple(c) for c in cells}:
            break
    else:
        pytest.fail("no maze among 20 seeds has goal 1 reachable without passing goal 0")
    for a in to_g1:  # goal 1 first: out of order, no reward
        obs, r, term, *_ = env.step(a)
        assert r == 0 and not term
    assert tuple(obs["achieved"][0]) == g[1] and (obs["goals"] >= 0).all()
    pos, total = g[1], 0.0
    for i in range(3):
        path = shortest_path(env.maze, pos, g[i])
        for step, a in enumerate(path):
            obs, r, term, trunc, info = env.step(a)
            total += r
            last = step == len(path) - 1
            assert r == float(last) and term == (last and i == 2) and not trunc
        assert (obs["goals"][: i + 1] == -1).all() and (obs["goals"][i + 1 :] >= 0).all()
        pos = g[i]
    assert total == 3 and info[f"{LOG_PREFIX} success"] == 1.0 and info[f"{LOG_PREFIX} goals reached"] == 3


def test_mazerunner_time_limit_and_lidar():
    env = MazeRunner(maze_size=7, num_goals=2, time_limit=12)
    obs, _ = env.reset(seed=0)
    i, j = env.start
    west = next(d for d in range(7) if env.maze[i, j - d - 1])
    assert obs["obs"][0] == np.float32(i / 7) and obs["obs"][2] == np.float32(west / 7)
    for t in range(1, 13):
        obs, r, term, trunc, _ = env.step(4)  # stay: never reaches a goal
        assert (term, trunc) == (t == 12, t == 12) and obs["obs"][-1] == np.float32(t / 12)
    with pytest.raises(ValueError, match="maze_size must be odd and >= 5.*got 8"):
        MazeRunner(maze_size=8)


# ----------------------------------------------------------------------------------------------------------------
# Hindsight relabeling in the replay buffer
# ----------------------------------------------------------------------------------------------------------------
def fill_buffer(buffer, episodes, seed=0, **kwargs):
    """Random-policy MazeRunner episodes written through the real wrapper and trajectory writer."""
    env = amago.AmagoEnv(MazeRunner(**kwargs), "MazeRunner")
    writer = amago.TrajectoryWriter(
        1, buffer, save_len=10_000, max_seq_len=buffer.max_seq_len, rng=np.random.default_rng(0)
    )
    rng, returns = np.random.default_rng(seed), []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        writer.start(0, obs)
        ret, done = 0.0, False
        while not done:
            a = int(rng.integers(5))
            obs, r, term, trunc, _ = env.step(a)
            done = term or trunc
            writer.step(0, a, r, term, obs, done)
            ret += r
        returns.append(ret)
    return returns


def assert_consistent(w):
    """The env's own rules hold in window w: the reward is 1 exactly when the cell reached is the current (first
    pending) goal, which then shows as (-1, -1); rl2 carries that reward; terminated = all goals reached or the
    timer ran out, and nothing follows a termination."""
    goals, cells, rew = w["obs_goals"], w["obs_achieved"][:, 0], w["rewards"]
    k, W = goals.shape[1], len(rew)
    for t in range(1, W + 1):
        pending = np.flatnonzero(goals[t - 1][:, 0] >= 0)
        hit = len(pending) > 0 and (cells[t] == goals[t - 1][pending[0]]).all()
        assert rew[t - 1] == float(hit)
        expected = goals[t - 1].copy()
        if hit:
            expected[pending[0]] = -1
        assert (goals[t] == expected).all() and w["rl2"][t, 0] == rew[t - 1]
        solved = len(pending) == int(hit)
        assert w["terminated"][t - 1] == (solved or w["obs_obs"][t, -1] >= 1.0)
        assert not solved or t == W
    assert (goals[:, :, 0] < 0).sum(1).max() <= k


def sampled(buffer, n):
    return list(itertools.islice(iter(buffer), n))


def test_relabel_all_turns_failed_windows_into_consistent_successes(tmp_path):
    kw = {"maze_size": 9, "num_goals": 3, "time_limit": 40}
    plain = amago.DiskReplayBuffer(tmp_path, 100, max_seq_len=40, action_dim=5, discrete=True)
    returns = fill_buffer(plain, 12, **kw)
    assert np.mean(returns) < 1.5  # a random policy mostly fails
    hers = amago.DiskReplayBuffer(tmp_path, 100, max_seq_len=40, action_dim=5, discrete=True, relabel=relabel_all)
    random.seed(0)  # the buffer samples with python's random (seeded per DataLoader worker in training)
    for w in sampled(plain, 20):  # the checker agrees with the env itself
        assert_consistent(w)
    for w in sampled(hers, 40):  # whole episodes (max_seq_len = T): every one becomes a success
        assert_consistent(w)
        assert w["time"][0] == 0 and w["rewards"].sum() == 3 and w["terminated"][-1]
        assert (w["obs_goals"][-1] == -1).all() and (w["obs_goals"][0] >= 0).all()


def test_relabel_keeps_real_goals_and_never_writes_into_the_sample(tmp_path):
    buffer = amago.DiskReplayBuffer(tmp_path, 100, max_seq_len=60, action_dim=5, discrete=True)
    fill_buffer(buffer, 30, seed=100, maze_size=7, num_goals=3, time_limit=60)
    windows = sampled(buffer, 200)
    partial_wins = [w for w in windows if 0 < w["rewards"].sum() < 3]
    assert partial_wins, "a random policy in a 7x7 maze reaches some goals"
    for i, w in enumerate(partial_wins):
        before = {k: v.copy() for k, v in w.items()}
        new = relabel(w, "all", rng=random.Random(i))
        assert same(w, before)  # the input arrays are untouched
        assert_consistent(new)
        assert new["rewards"].sum() == 3
        real = [tuple(before["obs_achieved"][t + 1, 0]) for t in np.flatnonzero(before["rewards"])]
        new_goals = [tuple(g) for g in new["obs_goals"][0]]
        assert all(g in new_goals for g in real)  # real achievements stay goals
    assert relabel(new, "all") is new  # a success: nothing to relabel


def test_relabel_mid_episode_windows_and_some_gives_a_mix_of_returns(tmp_path):
    buffer = amago.DiskReplayBuffer(tmp_path, 100, max_seq_len=12, action_dim=5, discrete=True, relabel=relabel_some)
    fill_buffer(buffer, 10, seed=7, maze_size=7, num_goals=3, time_limit=60)
    random.seed(3)
    windows = sampled(buffer, 300)
    for w in windows:
        assert_consistent(w)  # also windows that start mid-episode, some goals already reached
    assert any(w["time"][0] > 0 and (w["obs_goals"][0, :, 0] < 0).any() for w in windows)
    returns = {float(w["rewards"].sum()) for w in windows}
    assert {0.0, 1.0, 2.0} <= returns  # "some": a mixture of returns, not only successes


def test_relabel_runs_in_the_dataloader_worker_with_collate(tmp_path):
    kw = {"maze_size": 9, "num_goals": 3, "time_limit": 40}
    plain = amago.DiskReplayBuffer(tmp_path, 100, max_seq_len=40, action_dim=5, discrete=True)
    fill_buffer(plain, 8, **kw)
    hers = amago.DiskReplayBuffer(tmp_path, 100, max_seq_len=40, action_dim=5, discrete=True, relabel=relabel_all)
    batch = {}
    torch.manual_seed(0)  # seeds the worker's python random, which picks windows and relabels
    for name, buffer in (("plain", plain), ("hers", hers)):
        loader = torch.utils.data.DataLoader(buffer, batch_size=8, collate_fn=amago.collate, num_workers=1)
        batch[name] = next(iter(loader))
    assert (batch["plain"]["rewards"].sum(1) < 3).any()
    assert (batch["hers"]["rewards"].sum(1) == 3).all()  # relabeled in the worker, all successes
    lengths = batch["hers"]["mask"].sum(1)
    assert (lengths < 41).any()  # ended early at the last relabeled goal; collate pads with the mask
    assert batch["hers"]["obs"]["goals"].shape[1:] == (int(lengths.max()), 3, 2)
    for row, n in enumerate(lengths.tolist()):
        assert batch["hers"]["terminated"][row, n - 2] and not batch["hers"]["terminated"][row, n - 1 :].any()


def test_bad_relabel_spec_is_a_clear_error():
    with pytest.raises(ValueError, match="--relabel 'envs.mazerunner' must name a function as `module:function`"):
        amago.load_relabel("envs.mazerunner")
    assert amago.load_relabel("envs.mazerunner:relabel_all") is relabel_all and amago.load_relabel(None) is None


# ----------------------------------------------------------------------------------------------------------------
# Smoke runs of the agent
# ----------------------------------------------------------------------------------------------------------------
SCRIPT = Path(__file__).resolve().parents[1] / "amago_agent.py"
TINY = [
    "--total-timesteps",
    "64",
    "--num-envs",
    "2",
    "--timesteps-per-epoch",
    "16",
    "--batches-per-epoch",
    "2",
    "--batch-size",
    "4",
    "--max-seq-len",
    "8",
    "--traj-save-len",
    "16",
    "--d-model",
    "16",
    "--n-layers",
    "1",
    "--n-heads",
    "2",
    "--d-ff",
    "32",
    "--tstep-hidden",
    "16",
    "--tstep-dim",
    "16",
    "--actor-hidden",
    "16",
    "--critic-hidden",
    "16",
    "--eval-interval",
    "2",
    "--eval-episodes",
    "2",
]
SMOKE = [
    pytest.param(["--env-id", "envs:PopGym-RepeatPreviousEasy-v0"], marks=needs_popgym, id="popgym"),
    pytest.param(["--env-id", "envs:MazeRunner-v0", "--relabel", "envs.mazerunner:relabel_some"], id="mazerunner"),
    pytest.param(["--env-id", "envs:HalfCheetahVel-v0", "--eval-interval", "0"], marks=needs_mujoco, id="halfcheetah"),
]


@pytest.mark.parametrize("extra", SMOKE)
def test_smoke_run(tmp_path, extra):
    cmd = [sys.executable, str(SCRIPT), *TINY, *extra]
    out = subprocess.run(
        cmd,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(SCRIPT.parent), "PATH": "", "OMP_NUM_THREADS": "1"},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    (run,) = (tmp_path / "runs").iterdir()
    assert (run / "checkpoint.pt").exists() and list((tmp_path / "buffers" / run.name / "fifo").glob("*.npz"))
