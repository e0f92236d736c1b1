"""Hindsight relabeling in the replay buffer (--relabel, with MazeRunner's relabel functions): relabeled windows stay
consistent with the env's own rules, real goals are kept, and relabeling runs in the DataLoader worker."""

import itertools
import random

import numpy as np
import pytest
import torch
from conftest import same

import amago_agent as amago
from amago_agent import collate
from envs.mazerunner import MazeRunner, relabel, relabel_all, relabel_some


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
        loader = torch.utils.data.DataLoader(buffer, batch_size=8, collate_fn=collate, num_workers=1)
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
