"""POPGym (Morad et al., ICLR 2023): partially observable games, control and diagnostic tasks, as AMAGO plays them
(the reference adapter: amago/envs/builtin/popgym_envs.py).

    python amago_agent.py --env-id envs:PopGym-RepeatPreviousEasy-v0 --max-seq-len 64

Design. `envs/__init__.py` registers one id per popgym game, `PopGym-<Game>-v0` (e.g. `PopGym-RepeatPreviousEasy-v0`,
`PopGym-MineSweeperMedium-v0`), each making `POPGym(game)`. It lists the games from popgym's own table
(`popgym.envs.ALL`) and only when popgym is installed (`pip install popgym`), so `import envs` works without it.
`POPGym` itself takes a game name with or without popgym's prefix and version (`RepeatPreviousEasy` or
`popgym-RepeatPreviousEasy-v0`).

What the agent sees:
- observation: the game's observation flattened by gymnasium's `flatten`, which one-hot encodes Discrete and
  MultiDiscrete parts (a Tuple is the concatenation of its parts; a Box is passed through), as float32, followed
  by a timer t/1000. The timer is a post-paper addition of the reference (AMAGO's rl2 inputs covered it before).
- actions: Discrete as is; MultiDiscrete (Battleship, MineSweeper: a board cell) raveled into one Discrete of
  prod(nvec) actions; Box (the pendulum games) as is, since the agent handles continuous actions itself.
- termination: a time-limit truncation counts as terminated (the reference's `truncated_is_done=True`): POPGym was
  written for pre-gymnasium gym, where running out of time ended the episode, and the timer in the observation
  makes the horizon part of the state. The returned `truncated` flag is left as popgym set it.
"""

import copy
from typing import Optional

import gymnasium as gym
import numpy as np
import popgym.envs

TIMER_SCALE = 1000  # the reference's t/1000 timer feature


def popgym_games() -> dict:
    """{game name (e.g. "RepeatPreviousEasy"): env class} for every game popgym registers."""
    return {spec["id"].split("-")[1]: cls for cls, spec in popgym.envs.ALL.items()}


class POPGym(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, game: str = "RepeatPreviousEasy"):
        games = popgym_games()
        name = game.split("-")[1] if game.startswith("popgym-") else game
        if name not in games:
            raise ValueError(f"unknown POPGym game {game!r}; accepted: {', '.join(sorted(games))}")
        self.env_name = f"PopGym-{name}"  # the name eval metrics are logged under
        self.env = games[name]()
        self.raw_obs_space = self.env.observation_space
        flat = gym.spaces.flatten_space(self.raw_obs_space)  # Box; Discrete parts become one-hot slots in [0, 1]
        # + the timer in [0, 1]: every popgym game ends within 1000 steps (the longest, RepeatFirstHard, after 831)
        self.observation_space = gym.spaces.Box(
            np.append(flat.low, 0.0).astype(np.float32), np.append(flat.high, 1.0).astype(np.float32), dtype=np.float32
        )
        space = self.env.action_space
        if isinstance(space, gym.spaces.MultiDiscrete):
            self.nvec = space.nvec
            self.action_space = gym.spaces.Discrete(int(np.prod(space.nvec)))
        elif isinstance(space, (gym.spaces.Discrete, gym.spaces.Box)):
            self.nvec = None
            self.action_space = space
        else:
            raise ValueError(f"POPGym game {name} has action space {space}; accepted: Discrete, MultiDiscrete, Box")

    def _obs(self, obs):
        flat = gym.spaces.flatten(self.raw_obs_space, obs).astype(np.float32)
        return np.append(flat, np.float32(self.t / TIMER_SCALE))

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        self.t = 0
        obs, info = self.env.reset(seed=seed, options=options)
        return self._obs(obs), copy.deepcopy(info)  # some games hand out the same info arrays at every call

    def step(self, action):
        if self.nvec is not None:
            action = np.array(np.unravel_index(int(action), self.nvec))
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.t += 1
        terminated = terminated or truncated  # truncated_is_done, as the reference (module docstring)
        return self._obs(obs), float(reward), bool(terminated), bool(truncated), copy.deepcopy(info)
