"""T-Maze: a unit test of long-term memory (Ni et al. 2023, "When Do Transformers Shine in RL?"), in AMAGO's
"TMazeAlt" version (amago/envs/builtin/tmaze.py).

        oracle cell (cue)  corridor of length H              junction
            [x=0] ------------------------------------------ [x=H] -- goal above (y=+1) or below (y=-1)

The goal side is drawn at reset and shown once, at the oracle cell; the rest of the maze looks the same for both
goals. The agent walks the corridor and turns at the junction; the last step pays 1.0 if it turned to the goal
side, so it has to remember the cue for H steps.

- passive (default): the agent starts on the oracle cell and sees the cue in its first observation.
  Episode length H + 1.
- active (`active=True`): the agent starts one step right of the oracle cell and must step back to see the cue
  (memory *and* credit assignment). Episode length H + 2 + 1.

Observation Box(2) float32 (the reference's "ambiguous position"): [0, goal] on the oracle cell the first time it
is seen, [0, 0] in the corridor (and on the oracle cell afterwards), [1, y] at the junction and the goal cells.
Actions Discrete(4): right, up, left, down.
Reward: the final step gives 1.0 if the agent stands on the goal side, else 0; every earlier step after the oracle
steps gives `penalty` (default -1/H) when the action is not "right". AMAGO's TMazeAlt changed the original
penalty (x behind the optimal pace) to this action penalty, which epsilon-greedy can cope with (as the Memory-RL
authors found).

The optimal return is 1.0 (remember the cue, walk right, turn); a memory-free policy walks right and guesses,
which gets 0.5 in expectation.
"""

import gymnasium as gym
import numpy as np

from envs import LOG_PREFIX

MOVES = [(1, 0), (0, 1), (-1, 0), (0, -1)]  # right, up, left, down as (dx, dy)


class TMaze(gym.Env):
    metadata = {"render_modes": []}

    def __init__(
        self, corridor_length: int = 50, active: bool = False, penalty: float | None = None, goal_reward: float = 1.0
    ):
        if corridor_length < 1:
            raise ValueError(f"corridor_length must be >= 1, got {corridor_length}")
        if penalty is not None and penalty > 0:
            raise ValueError(f"penalty must be <= 0 (a cost for not walking right), got {penalty}")
        self.H = corridor_length
        self.oracle = 1 if active else 0  # steps needed to reach the cue (the reference's oracle_length)
        self.junction = self.oracle + self.H  # x of the junction
        self.episode_length = self.H + 2 * self.oracle + 1  # active: one step back to the cue, one to return
        self.penalty = -1.0 / self.H if penalty is None else penalty
        self.goal_reward = goal_reward
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(4)

    def _obs(self):
        if self.x == 0:
            cue = 0 if self.cue_seen else self.goal  # the cue shows only the first time the oracle cell is seen
            self.cue_seen = True
            return np.array([0, cue], np.float32)
        if self.x < self.junction:
            return np.zeros(2, np.float32)
        return np.array([1, self.y], np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.goal = int(self.np_random.choice([-1, 1]))
        self.x, self.y, self.t, self.cue_seen = self.oracle, 0, 0, False
        return self._obs(), {}

    def _free(self, x, y):  # the corridor row from the oracle cell to the junction, plus the two goal cells
        return (y == 0 and 0 <= x <= self.junction) or (x == self.junction and abs(y) == 1)

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action must be an int in [0, 4) (right, up, left, down), got {action!r}")
        self.t += 1
        dx, dy = MOVES[int(action)]
        if self._free(self.x + dx, self.y + dy):
            self.x, self.y = self.x + dx, self.y + dy
        done = self.t >= self.episode_length
        info = {}
        if done:
            reward = self.goal_reward * float(self.y == self.goal)
            info[f"{LOG_PREFIX} success"] = float(self.y == self.goal)
            info[f"{LOG_PREFIX} reached junction"] = float(self.x == self.junction)
        else:
            reward = self.penalty * float(action != 0 and self.t > self.oracle)
        # deviation: the fixed episode length ends the task (the agent sees the time index): terminated, never
        # bootstrapped (the reference sets terminated = truncated = True)
        return self._obs(), reward, done, False, info


def TMazeEpsilonGreedy(base, envs):
    """`--exploration envs.tmaze:TMazeEpsilonGreedy`: the script's epsilon-greedy (`base`), but with eps fixed at 0.5/H
    on corridor steps 1 .. H-4 (H: the corridor length of `envs`, a vector env of T-Mazes), and the annealed schedule
    at the start (the cue) and the last steps (the turn), as AMAGO's examples/04_tmaze.py. The corridor asks for H-1
    "right" actions in a row, a worst case for epsilon-greedy that the task (a test of memory) does not mean to pose."""
    try:
        H = int(envs.get_attr("H")[0])
    except AttributeError:
        raise ValueError("--exploration envs.tmaze:TMazeEpsilonGreedy needs a T-Maze env (envs.tmaze.TMaze)") from None

    class TMazeEpsilonGreedy(base):
        corridor = H

        def epsilon(self, time_idx):
            in_corridor = (time_idx > 0) & (time_idx < H - 3)
            return np.where(in_corridor, 0.5 / H, super().epsilon(time_idx))

    return TMazeEpsilonGreedy
