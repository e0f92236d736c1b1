"""Pixel T-Maze: envs/tmaze.py's T-Maze (same rules, reward and cue timing) seen from above as a small image.

The maze's three rows of cells (goal up, corridor, goal down) are drawn with `cell` x `cell` pixels per cell,
centred in a `size` x `size` frame (default 24 x 24, corridor H = 10: 11 cells of 2 px). Walls are black, free cells
grey, the agent white. The cue is a yellow mark on the wall cell above (goal up) or below (goal down) the oracle cell,
drawn only in the frame where TMaze shows its cue (the first one, in the passive version). So the agent sees where it
is, but must remember the cue for H steps; a memory-free policy succeeds half of the time.

Options: `grayscale` (1 channel), `channels_first` ((C, H, W) frames), `dict_obs` ({"image": frame, "state":
[x / junction, y]}, an image beside a vector, to exercise dict observations).
"""

import gymnasium as gym
import numpy as np

from envs.tmaze import TMaze

WALL, FREE, CUE, AGENT = (0, 0, 0), (80, 80, 80), (255, 255, 0), (255, 255, 255)  # RGB


class PixelTMaze(TMaze):
    def __init__(
        self, corridor_length=10, size=24, grayscale=False, channels_first=False, dict_obs=False, **tmaze_kwargs
    ):
        super().__init__(corridor_length, **tmaze_kwargs)
        self.cell = size // (self.junction + 1)
        if self.cell < 1:
            raise ValueError(
                f"a corridor of {corridor_length} cells does not fit a {size}-pixel frame: use size >= {self.junction + 1}"
            )
        self.grayscale, self.channels_first, self.dict_obs = grayscale, channels_first, dict_obs
        self.x0 = (size - (self.junction + 1) * self.cell) // 2  # left edge of the oracle cell
        self.y0 = (size - 3 * self.cell) // 2 + self.cell  # top edge of the corridor row
        self.background = np.zeros((size, size, 3), np.uint8)
        for x in range(self.junction + 1):
            for y in (-1, 0, 1):
                if self._free(x, y):
                    self._paint(self.background, x, y, FREE)
        C = 1 if grayscale else 3
        image = gym.spaces.Box(0, 255, (C, size, size) if channels_first else (size, size, C), np.uint8)
        state = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = gym.spaces.Dict({"image": image, "state": state}) if dict_obs else image

    def _paint(self, frame, x, y, color):  # cell (x, y) -> pixels; y = +1 is up, i.e. higher in the frame
        r, c = self.y0 - y * self.cell, self.x0 + x * self.cell
        frame[r : r + self.cell, c : c + self.cell] = color

    def _obs(self):
        vec = super()._obs()  # TMaze decides when the cue shows: [0, goal] at the oracle cell the first time only
        frame = self.background.copy()
        if self.x == 0 and vec[1] != 0:
            self._paint(frame, 0, int(vec[1]), CUE)
        self._paint(frame, self.x, self.y, AGENT)
        if self.grayscale:
            frame = frame.mean(-1, keepdims=True).astype(np.uint8)
        if self.channels_first:
            frame = np.ascontiguousarray(frame.transpose(2, 0, 1))
        if self.dict_obs:
            return {"image": frame, "state": np.array([self.x / self.junction, self.y], np.float32)}
        return frame
