"""Atari 2600 games (the Arcade Learning Environment) with AMAGO's multi-game settings (the reference:
amago/envs/builtin/ale_retro.py).

    python amago_agent.py --env-id envs:Atari-Pong-v0 --tstep-encoder cnn --max-seq-len 32

- games: one game per env id (`Atari-<Game>-v0`), or a set (`Atari-MultiGame-v0`) where every reset draws a game;
  the env's name is the game's (`Atari-Pong`), so eval returns come out per game.
- actions: ALE's full 18-action set for every game, so that games share one action space.
- frames: frame skip 4 (the action repeats, rewards are summed, the frame is the max of the last two to undo Atari's
  flicker), sticky actions 0.25, grayscale (or RGB), resized to 84 x 84 with PIL, channels first: (1, 84, 84) uint8,
  which the CNN timestep encoder reads (`--tstep-encoder cnn`, or auto).
- rewards: unclipped (AMAGO's critic is trained on symlog / two-hot returns, so Atari's scores need no clipping).
- episodes: the game's end is `terminated`; 108,000 frames (30 minutes of play) `truncated`. Losing a life does not
  end the episode.
Needs `pip install ale-py` (ROMs bundled).
"""

import gymnasium as gym
import numpy as np
from PIL import Image

from envs import require

MULTI_GAME = ("Pong", "Boxing", "Breakout", "Gopher", "MsPacman")  # five of the reference's ten-game list


class Atari(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, games=("Pong",), frame_skip: int = 4, size: int = 84, grayscale: bool = True,
                 sticky: float = 0.25, max_frames: int = 108_000):  # fmt: skip
        ale_py = require("ale_py", "ale-py")
        gym.register_envs(ale_py)
        if isinstance(games, str):
            games = (games,)
        for game in games:
            if f"ALE/{game}-v5" not in gym.registry:
                raise ValueError(f"unknown Atari game {game!r}; accepted: ALE's names, e.g. Pong, Breakout, MsPacman")
        if frame_skip < 1:
            raise ValueError(f"frame_skip must be >= 1, got {frame_skip}")
        self.games, self.skip, self.size, self.grayscale = tuple(games), frame_skip, size, grayscale
        self.kwargs = dict(
            frameskip=1,  # we skip frames ourselves, to max-pool the last two
            repeat_action_probability=sticky,
            full_action_space=True,
            obs_type="grayscale" if grayscale else "rgb",
            max_num_frames_per_episode=max_frames,
        )
        self.envs, self.seeded = {}, set()
        self.game = self.games[0]
        self.env_name = f"Atari-{self.game}"
        self.observation_space = gym.spaces.Box(0, 255, (1 if grayscale else 3, size, size), np.uint8)
        self.action_space = gym.spaces.Discrete(18)

    def _frame(self, frame):  # (210, 160) or (210, 160, 3) uint8 -> (C, size, size)
        img = Image.fromarray(frame).resize((self.size, self.size), Image.BILINEAR)
        img = np.asarray(img, np.uint8)
        return img[None] if self.grayscale else img.transpose(2, 0, 1).copy()

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.seeded.clear()  # every game reseeds from this generator the next time it is played
        self.game = self.games[int(self.np_random.integers(len(self.games)))]
        self.env_name = f"Atari-{self.game}"
        if self.game not in self.envs:
            self.envs[self.game] = gym.make(f"ALE/{self.game}-v5", **self.kwargs)
        game_seed = None
        if self.game not in self.seeded:  # ALE reloads the ROM to reseed (~0.1 s), so only when asked to
            game_seed = int(self.np_random.integers(2**31))
            self.seeded.add(self.game)
        self.env = self.envs[self.game]
        frame, _ = self.env.reset(seed=game_seed)
        self.last = frame
        return self._frame(frame), {}

    def step(self, action):
        total, terminated, truncated, prev = 0.0, False, False, self.last
        for _ in range(self.skip):
            prev = self.last
            self.last, reward, terminated, truncated, _ = self.env.step(int(action))
            total += float(reward)
            if terminated or truncated:
                break
        frame = np.maximum(prev, self.last)  # Atari draws some sprites on alternate frames
        return self._frame(frame), total, bool(terminated), bool(truncated), {}

    def close(self):
        for env in self.envs.values():
            env.close()
