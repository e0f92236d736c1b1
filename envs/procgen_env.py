"""Multi-game Procgen (Cobbe et al., 2020) with two attempts per level, AMAGO's `TwoAttemptMTProcgen` (the reference:
amago/envs/builtin/procgen_envs.py).

    python amago_multitask.py --env-id envs:Procgen-Memory-TwoShot-v0 --tstep-encoder cnn --cnn impala

Every reset draws a game and one level (a level seed in [0, 2000)); the agent then plays that level `attempts` times
in a row, as one rollout: an attempt that ends inside the rollout is a soft reset to the same level (procgen replays
it because the env is built with num_levels=1), so what the agent learned in the first attempt pays in the second.
- distribution mode "memory" (the mode with large, maze-like levels where remembering the layout helps) exists for
  dodgeball, caveflyer, heist, jumper, maze and miner; other games fall back to "hard" (the reference's
  "memory-hard"). "easy" and "hard" are procgen's own.
- observation: {"rgb": (64, 64, 3) uint8 frame, "attempt": [soft-reset flag, attempt index / attempts]}.
- actions: procgen's 15 (shared by all games). Rewards: the game's, unscaled.
- the env's name is the game's (`Procgen-maze`); at the end of the rollout `info` has
  `f"{LOG_PREFIX} attempt {i} return"` and `... attempt {i} success` (procgen's level_complete) for every attempt.
- gym3 starts the next episode inside the step that ends one, so the observation of the last step of a rollout is
  the level's first frame again (the rollout is terminated: that observation is never bootstrapped from).
Needs `pip install --no-deps procgen-mirror==0.10.7 gym3==0.3.3 gym==0.26.2 gym-notices` (see requirements-suites.txt:
their declared numpy<2 pin is stale; procgen runs on numpy 2 through cffi).
"""

import contextlib
import io

import gymnasium as gym
import numpy as np

from envs import LOG_PREFIX, require

MEMORY_GAMES = ("dodgeball", "caveflyer", "heist", "jumper", "maze", "miner")
GAMES = MEMORY_GAMES + ("fruitbot", "plunder", "chaser", "leaper", "bigfish", "starpilot", "bossfight", "ninja",
                        "coinrun", "climber")  # fmt: skip
MODES = ("easy", "hard", "memory")


class Procgen(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, games=("maze",), mode: str = "memory", attempts: int = 2, num_levels: int = 2000):
        if isinstance(games, str):
            games = (games,)
        bad = [g for g in games if g not in GAMES]
        if bad:
            raise ValueError(f"unknown Procgen game(s) {bad}; accepted: {', '.join(GAMES)}")
        if mode not in MODES:
            raise ValueError(f"unknown Procgen distribution mode {mode!r}; accepted: {', '.join(MODES)}")
        if attempts < 1:
            raise ValueError(f"attempts must be >= 1, got {attempts}")
        self.games, self.mode, self.attempts, self.num_levels = tuple(games), mode, attempts, num_levels
        with contextlib.redirect_stderr(io.StringIO()):  # the old gym prints an "unmaintained" notice at import
            self.procgen = require("procgen", "--no-deps procgen-mirror==0.10.7 gym3==0.3.3 gym==0.26.2 gym-notices")
        self.env, self.game = None, self.games[0]
        self.env_name = f"Procgen-{self.game}"
        self.observation_space = gym.spaces.Dict(
            {"rgb": gym.spaces.Box(0, 255, (64, 64, 3), np.uint8), "attempt": gym.spaces.Box(0, 1, (2,), np.float32)}
        )
        self.action_space = gym.spaces.Discrete(15)

    def _obs(self, rgb, flag):
        return {"rgb": rgb[0].copy(), "attempt": np.array([flag, self.attempt / self.attempts], np.float32)}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.game = self.games[int(self.np_random.integers(len(self.games)))]
        self.level = int(self.np_random.integers(self.num_levels))
        self.env_name = f"Procgen-{self.game}"
        mode = "hard" if self.mode == "memory" and self.game not in MEMORY_GAMES else self.mode
        if self.env is not None:
            self.env.close()
        self.env = self.procgen.ProcgenGym3Env(
            num=1, env_name=self.game, distribution_mode=mode, start_level=self.level, num_levels=1,
            rand_seed=int(self.np_random.integers(2**31)),
        )  # fmt: skip
        self.attempt, self.ret, self.returns, self.successes = 0, 0.0, [], []
        return self._obs(self.env.observe()[1]["rgb"], 1.0), {}

    def step(self, action):
        self.env.act(np.array([int(action)], np.int32))
        reward, obs, first = self.env.observe()  # first: the step ended an attempt and obs starts the level again
        reward = float(reward[0])
        self.ret += reward
        if not first[0]:
            return self._obs(obs["rgb"], 0.0), reward, False, False, {}
        self.returns.append(self.ret)
        self.successes.append(float(self.env.get_info()[0]["prev_level_complete"]))
        self.attempt, self.ret = self.attempt + 1, 0.0
        done = self.attempt >= self.attempts
        info = {}
        if done:
            info = {f"{LOG_PREFIX} attempt {i} return": r for i, r in enumerate(self.returns)}
            info.update({f"{LOG_PREFIX} attempt {i} success": s for i, s in enumerate(self.successes)})
        return self._obs(obs["rgb"], 1.0), reward, done, False, info

    def close(self):
        if self.env is not None:
            self.env.close()
