"""Dark Key-To-Door (Algorithm Distillation, Laskin et al. 2022; AMAGO's RoomKeyDoor in toy_gym.py).

An N x N room hides a key and a door. In each attempt the agent starts on the same start cell, gets +1 the first time
it steps on the key, then +1 on the door, which ends the attempt (back to the start, key dropped). An attempt also
ends after `episode_length` steps. Start, key and door are drawn once per rollout and stay fixed for all its
`meta_horizon` steps, so the task is: find the key and the door by exploring, then walk the shortest path as many
times as the horizon allows. In the dark room (default) the observation hides the key and door, so doing better
than exploring each time needs memory of earlier attempts; the light room shows them (an upper reference).

Observation (dark) Box(4) in [0, 1]: [x / N, y / N, has_key, t_attempt / episode_length];
light (`light_room=True`) Box(8): the same + [key_x / N, key_y / N, door_x / N, door_y / N].
Actions Discrete(5): -y, -x, +y, +x, noop (moves off the room are clipped).
At the end of the rollout, `info[f"{LOG_PREFIX} doors opened"]` and `... keys found` hold the rollout's totals.
"""

import gymnasium as gym
import numpy as np

from envs import LOG_PREFIX

MOVES = np.array([[0, -1], [-1, 0], [0, 1], [1, 0], [0, 0]])  # the reference's order: -y, -x, +y, +x, noop


class RoomKeyDoor(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, room_size: int = 8, episode_length: int = 50, meta_horizon: int = 500, light_room: bool = False):
        for name, v, lo in [
            ("room_size", room_size, 2),
            ("episode_length", episode_length, 1),
            ("meta_horizon", meta_horizon, 1),
        ]:
            if v < lo:
                raise ValueError(f"{name} must be >= {lo}, got {v}")
        self.N, self.H, self.H_meta, self.light = room_size, episode_length, meta_horizon, light_room
        self.observation_space = gym.spaces.Box(0.0, 1.0, (8 if light_room else 4,), np.float32)
        self.action_space = gym.spaces.Discrete(5)

    def _obs(self):
        o = [*(self.pos / self.N), float(self.has_key), self.t / self.H]
        if self.light:
            o += [*(self.key / self.N), *(self.door / self.N)]
        return np.array(o, np.float32)

    def _new_attempt(self):
        self.pos, self.has_key, self.t = self.start.copy(), False, 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        # uniform and independent, as the reference: the key may lie on the start or on the door
        self.start, self.key, self.door = self.np_random.integers(0, self.N, (3, 2))
        self.global_t, self.doors, self.keys = 0, 0, 0
        self._new_attempt()
        return self._obs(), {}

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action must be an int in [0, 5) (-y, -x, +y, +x, noop), got {action!r}")
        self.global_t += 1
        self.t += 1
        self.pos = np.clip(self.pos + MOVES[int(action)], 0, self.N - 1)
        reward = 0.0
        if not self.has_key and (self.pos == self.key).all():
            reward, self.has_key, self.keys = 1.0, True, self.keys + 1
        elif self.has_key and (self.pos == self.door).all():
            reward, self.doors = 1.0, self.doors + 1
            self._new_attempt()
        if self.t >= self.H:
            self._new_attempt()
        # The reference spends one extra step on each reset (the action is ignored, reward 0); we reset at once,
        # so the observation after the door already shows the start (has_key 0, t 0).
        # deviation: the meta-horizon ends a finite-horizon task and the agent sees the time index, so the rollout
        # *terminates* (the reference sets both flags): bootstrapping would value doors that can no longer be opened.
        done = self.global_t >= self.H_meta
        info = (
            {f"{LOG_PREFIX} doors opened": float(self.doors), f"{LOG_PREFIX} keys found": float(self.keys)}
            if done
            else {}
        )
        return self._obs(), reward, done, False, info
