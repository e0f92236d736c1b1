"""MazeRunner: reach a sequence of k goals, in order, in a random maze (AMAGO appendix C.4; a Memory-Maze-like task
without pixels; the reference: amago/envs/builtin/mazerunner.py and examples/13_mazerunner_relabeling.py).

    python amago_agent.py --env-id envs:MazeRunner-v0 --max-seq-len 250 --traj-save-len 500 \
        --relabel envs.mazerunner:relabel_some

Every reset draws a new n x n maze (n odd; walls on the border), k distinct goal cells and, with
`randomized_actions`, a new permutation of the five actions (the appendix's "rewired" controls). The agent starts
at the bottom middle. Goals must be reached in order: stepping onto the current goal pays +1 and makes the next one
current; reaching the last one terminates. So does the time limit T: the timer is part of the observation, which
makes the horizon part of the task (as in the reference).

Observation, a dict:
- `obs` Box(7) in [0, 1]: [i/n, j/n, free cells to the west, north, east, south (a 4-ray "lidar") / n, t/T].
- `goals` (k, 2) int32: the goal cells, a goal already reached shown as (-1, -1).
- `achieved` (1, 2) int32: the current cell. The reference hides it from the policy; our timestep encoder reads
  every key, which costs nothing here since (i/n, j/n) already says the same.
Actions Discrete(5): west, north, east, south, stay. A move into a wall stays put.

Hindsight relabeling (AMAGO Alg. 1, "hindsight instruction relabeling": HER for goal *sequences*):
`relabel_all` / `relabel_some` are `--relabel` hooks for the replay buffer. Each sampled window keeps the goals
its agent really reached and replaces some of the pending ones by cells it visited instead, sorted by the time of
the visit; rewards, `goals` and termination are then recomputed from the `achieved` cells, so the window is a
possible episode of the relabeled task. `all` turns every failed window into a success, `some` adds a random number
of goals and so gives a mix of returns. A window that starts at the episode's start (max_seq_len >= T, as the
reference runs it) is relabeled exactly; one that starts later keeps the goals reached before it and relabels the
pending ones from its own visits only.
"""

import random
from functools import partial
from typing import Optional

import gymnasium as gym
import numpy as np

from envs import LOG_PREFIX

MOVES = np.array([(0, -1), (-1, 0), (0, 1), (1, 0), (0, 0)])  # west, north, east, south, stay as (di, dj)


def random_maze(n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, n) bool walls of a perfect maze (one path between any two cells): randomized depth-first search over the
    cells at odd coordinates, knocking down the wall between a cell and the unvisited neighbour it moves to."""
    wall = np.ones((n, n), bool)
    stack = [(1, 1)]
    wall[1, 1] = False
    while stack:
        i, j = stack[-1]
        nbrs = [(i + 2 * di, j + 2 * dj) for di, dj in MOVES[:4] if 0 < i + 2 * di < n - 1 and 0 < j + 2 * dj < n - 1]
        nbrs = [c for c in nbrs if wall[c]]
        if not nbrs:
            stack.pop()
            continue
        ni, nj = nbrs[rng.integers(len(nbrs))]
        wall[(i + ni) // 2, (j + nj) // 2] = wall[ni, nj] = False
        stack.append((ni, nj))
    return wall


class MazeRunner(gym.Env):
    metadata = {"render_modes": []}

    def __init__(
        self, maze_size: int = 11, num_goals: int = 3, time_limit: int = 250, randomized_actions: bool = False
    ):
        if maze_size < 5 or maze_size % 2 == 0:
            raise ValueError(f"maze_size must be odd and >= 5 (cells sit at odd coordinates), got {maze_size}")
        free = 2 * (maze_size // 2) ** 2 - 1  # open squares of a perfect maze: c cells and c - 1 passages
        if not 1 <= num_goals < free:
            raise ValueError(f"num_goals must be in [1, {free - 1}] for maze_size {maze_size}, got {num_goals}")
        if time_limit < 1:
            raise ValueError(f"time_limit must be >= 1, got {time_limit}")
        self.n, self.k, self.T, self.randomized_actions = maze_size, num_goals, time_limit, randomized_actions
        self.start = (self.n - 2, 2 * (self.n // 4) + 1)  # the bottom row's middle cell
        self.env_name = f"MazeRunner-{self.n}x{self.n}-k{self.k}"
        self.observation_space = gym.spaces.Dict(
            {
                "obs": gym.spaces.Box(0.0, 1.0, (7,), np.float32),
                "goals": gym.spaces.Box(-1, self.n - 1, (self.k, 2), np.int32),
                "achieved": gym.spaces.Box(0, self.n - 1, (1, 2), np.int32),
            }
        )
        self.action_space = gym.spaces.Discrete(5)

    def _lidar(self):
        out = []
        for di, dj in MOVES[:4]:
            d, (i, j) = 0, self.pos
            while not self.maze[i + di * (d + 1), j + dj * (d + 1)]:  # the border is all wall, so this stops
                d += 1
            out.append(d)
        return out

    def _obs(self):
        goals = self.goals.copy()
        goals[: self.active] = -1
        i, j = self.pos
        obs = np.array([i, j, *self._lidar(), 0], np.float32) / self.n
        obs[-1] = self.t / self.T
        return {"obs": obs, "goals": goals, "achieved": np.array([self.pos], np.int32)}

    def _info(self):
        return {f"{LOG_PREFIX} goals reached": self.active, f"{LOG_PREFIX} success": float(self.active == self.k)}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        self.maze = random_maze(self.n, self.np_random)
        free = [c for c in zip(*np.nonzero(~self.maze)) if c != self.start]
        self.goals = np.array([free[i] for i in self.np_random.choice(len(free), self.k, replace=False)], np.int32)
        self.moves = self.np_random.permutation(MOVES) if self.randomized_actions else MOVES
        self.pos, self.t, self.active = self.start, 0, 0
        return self._obs(), self._info()

    def step(self, action):
        di, dj = self.moves[int(action)]
        nxt = (self.pos[0] + di, self.pos[1] + dj)
        if not self.maze[nxt]:
            self.pos = nxt
        self.t += 1
        reward = 0.0
        if self.pos == tuple(self.goals[self.active]):
            reward, self.active = 1.0, self.active + 1
        truncated = self.t >= self.T
        # the timer is observed, so the time limit is a true terminal of this finite-horizon task (as the reference)
        terminated = self.active == self.k or truncated
        return self._obs(), reward, terminated, truncated, self._info()


def relabel(window: dict, strategy: str = "some", rng=random) -> dict:
    """Hindsight instruction relabeling of one replay window (AMAGO Alg. 1). `window` holds the buffer's arrays:
    obs_* and rl2, time (W+1 timesteps), actions, rewards, terminated (W transitions). Returns new arrays (the
    input's are views of a cached file and are never written); a window with nothing to relabel comes back as is.
    `rng`: python's `random` by default, which the DataLoader seeds in each worker."""
    if strategy not in ("some", "all"):
        raise ValueError(f"relabel strategy must be 'some' or 'all', got {strategy!r}")
    goals, achieved = window["obs_goals"], window["obs_achieved"][:, 0]  # (W+1, k, 2), (W+1, 2)
    W, k = len(window["rewards"]), goals.shape[1]
    done_before = int((goals[0, :, 0] < 0).sum())  # goals reached before the window starts: kept as they were
    hits = (np.flatnonzero(window["rewards"] > 0) + 1).tolist()  # timesteps at which a real goal was reached
    pending = k - done_before - len(hits)
    h = pending if strategy == "all" else rng.randint(0, pending)
    candidates = sorted(set(range(1, W + 1)) - set(hits))  # any visited cell can be a goal (not the real hits')
    h = min(h, len(candidates))
    if h == 0:  # nothing added: relabeling would reproduce the window
        return window
    # Alg. 1: the new goal sequence is the real hits plus h visited cells, in the order they were reached;
    # goals still pending after them keep their original cells
    picked = sorted(hits + rng.sample(candidates, h))
    new_goals = goals[0].copy()
    new_goals[done_before : done_before + len(picked)] = achieved[picked]
    # replay the window under the new goals: the env's reward is "the current cell is the current goal"
    timeout = window["terminated"] & (window["obs_obs"][1:, -1] >= 1.0)  # the timer ended the episode
    rewards, terminated = np.zeros(W, np.float32), timeout.copy()
    goals_t = np.repeat(new_goals[None], W + 1, axis=0)
    active, end = done_before, W
    for t in range(1, W + 1):
        if active < k and (achieved[t] == new_goals[active]).all():
            rewards[t - 1], active = 1.0, active + 1
        goals_t[t, :active] = -1
        if active == k:  # the relabeled task is solved here: the episode ends
            terminated[t - 1], end = True, t
            break
    out = {
        key: v[: end + 1] if key in ("rl2", "time") or key.startswith("obs_") else v[:end] for key, v in window.items()
    }
    out["obs_goals"] = goals_t[: end + 1]
    out["rewards"], out["terminated"] = rewards[:end], terminated[:end]
    out["rl2"] = out["rl2"].copy()
    out["rl2"][1:, 0] = rewards[:end]  # rl2 = [previous reward, previous action]
    return out


relabel_all = partial(relabel, strategy="all")  # `--relabel envs.mazerunner:relabel_all`
relabel_some = partial(relabel, strategy="some")  # `--relabel envs.mazerunner:relabel_some`
