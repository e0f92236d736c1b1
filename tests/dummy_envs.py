"""Tiny envs for the tests; importing this module registers them (also used as `tests.dummy_envs:DummyBox-v0`)."""

import gymnasium as gym
import numpy as np


class CountingEnv(gym.Env):
    """Observation = step count; reward = 1 + 0.5 * action index (Discrete) or the sum of the env-scale action (Box).
    Terminates after `length` steps (or truncates, if `truncate`). Records the actions it received."""

    def __init__(self, length=5, box=False, truncate=False):
        self.length, self.truncate = length, truncate
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
        self.action_space = gym.spaces.Box(np.array([-2.0, 0.0], np.float32), np.array([2.0, 10.0], np.float32)) if box else gym.spaces.Discrete(3)
        self.received = []

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0, self.np_random.random()], np.float32), {}

    def step(self, action):
        self.received.append(np.array(action, copy=True))
        self.t += 1
        reward = float(np.sum(action)) if isinstance(self.action_space, gym.spaces.Box) else 1.0 + 0.5 * int(action)
        end = self.t >= self.length
        info = {"AMAGO_LOG_METRIC success": float(self.t)} if end else {}
        return np.array([self.t, 0.0], np.float32), reward, end and not self.truncate, end and self.truncate, info


gym.register("DummyBox-v0", entry_point=lambda **kw: CountingEnv(box=True, **kw))
gym.register("DummyDiscrete-v0", entry_point=lambda **kw: CountingEnv(**kw))
