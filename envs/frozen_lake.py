"""Meta-Frozen-Lake (AMAGO, amago/envs/builtin/toy_gym.py): k attempts on one random N x N lake.

Each rollout draws a new lake with gymnasium's `generate_random_map` (start top-left, goal bottom-right, holes
elsewhere, always a path) and gives the agent k attempts on it. An attempt ends at the goal (+1), in a hole (0) or
after N^2 steps (0); the agent is then put back on the start of the same lake (a soft reset inside the rollout).
Holes are invisible: the observation is the position, so the only way to do better in later attempts is to
remember where the earlier ones fell in. That is the meta-RL test: success should rise with the attempt index for a
memory policy and stay flat without memory (the reference's figure: ~0.22 in attempt 0 -> ~0.9 by attempt 6 on 5x5).

Observation Box(4) in [0, 1]: [x / N, y / N, soft-reset flag, attempt / k]. Actions Discrete(5): noop, +x, -x, +y,
-y (moves off the lake are clipped). `show_attempt=False` drops the attempt feature (Box(3); MetaFrozenLake-HideK-v0).
The rollout terminates after k attempts and logs `info[f"{LOG_PREFIX} attempt {i} success"]` (and `... return`) for
every attempt i.
We leave out the reference's hard mode (swapped actions, noisy position, holes appearing behind the agent).
"""

import gymnasium as gym
import numpy as np
from gymnasium.envs.toy_text.frozen_lake import generate_random_map

from envs.kshot import KShot

MOVES = [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)]  # noop, +x, -x, +y, -y as (dx, dy)


class FrozenLakeAttempt(gym.Env):
    """One attempt on the current lake; `reset_task(rng)` draws a new lake, `reset()` keeps it."""

    metadata = {"render_modes": []}

    def __init__(self, size: int = 4, max_steps: int | None = None):
        if size < 2:
            raise ValueError(f"lake size must be >= 2, got {size}")
        self.N = size
        self.max_steps = size * size if max_steps is None else max_steps  # the reference's default: N^2
        if self.max_steps < 1:
            raise ValueError(f"max_steps per attempt must be >= 1, got {max_steps}")
        self.observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(5)
        self.lake = None

    def reset_task(self, rng: np.random.Generator):
        # generate_random_map has its own RNG: seed it from ours so that the lake is a function of the env's seed
        self.lake = generate_random_map(self.N, seed=int(rng.integers(2**31)))  # N strings, lake[x][y] in "SFHG"

    def _obs(self):
        return np.array([self.x / self.N, self.y / self.N], np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        if self.lake is None:
            self.reset_task(self.np_random)
        self.x, self.y, self.t = 0, 0, 0
        return self._obs(), {}

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action must be an int in [0, 5) (noop, +x, -x, +y, -y), got {action!r}")
        dx, dy = MOVES[int(action)]
        self.x, self.y = min(max(self.x + dx, 0), self.N - 1), min(max(self.y + dy, 0), self.N - 1)
        self.t += 1
        cell = self.lake[self.x][self.y]
        success = cell == "G"
        terminated, truncated = cell in "GH", self.t >= self.max_steps and cell not in "GH"
        info = {"success": float(success)} if terminated or truncated else {}
        return self._obs(), float(success), terminated, truncated, info


class MetaFrozenLake(KShot):
    def __init__(self, size: int = 4, k_attempts: int = 5, max_steps: int | None = None, show_attempt: bool = True):
        super().__init__(FrozenLakeAttempt(size, max_steps), k_attempts, show_attempt)

    @property
    def lake(self):  # the current rollout's map (N strings of "SFHG")
        return self.env.lake
