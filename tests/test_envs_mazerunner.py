"""MazeRunner (envs.mazerunner): connected mazes, goals reached in order, the time limit and the lidar observation."""

from collections import deque

import numpy as np
import pytest
from conftest import check_strict, record, same

from envs import LOG_PREFIX
from envs.mazerunner import MOVES, MazeRunner


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
    a, b, c = (record(MazeRunner(**kwargs), seed, acts) for seed in (4, 4, 5))
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
