"""Tiny envs for the tests; importing this module registers them (also used as `tests.dummy_envs:DummyBox-v0`)."""

import gymnasium as gym
import numpy as np


class CountingEnv(gym.Env):
    """Observation = step count; reward = 1 + 0.5 * action index (Discrete) or the sum of the env-scale action (Box).
    Terminates after `length` steps (or truncates, if `truncate`). Records the actions it received."""

    def __init__(self, length=5, box=False, truncate=False):
        self.length, self.truncate = length, truncate
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
        self.action_space = (
            gym.spaces.Box(np.array([-2.0, 0.0], np.float32), np.array([2.0, 10.0], np.float32))
            if box
            else gym.spaces.Discrete(3)
        )
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


class BitsEnv(gym.Env):
    """MultiBinary(n) actions: the observation shows n target bits, the reward is the fraction of action bits that
    match them. Ends after `length` steps. Records the actions it received."""

    def __init__(self, n=3, length=5):
        self.length = length
        self.observation_space = gym.spaces.Box(0, 1, (n,), np.float32)
        self.action_space = gym.spaces.MultiBinary(n)
        self.received = []

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.target = 0, self.np_random.integers(0, 2, self.action_space.n)
        return self.target.astype(np.float32), {}

    def step(self, action):
        self.received.append(np.array(action, copy=True))
        self.t += 1
        reward = float(np.mean(np.asarray(action) == self.target))
        self.target = self.np_random.integers(0, 2, self.action_space.n)
        return self.target.astype(np.float32), reward, self.t >= self.length, False, {}


gym.register("DummyBox-v0", entry_point=lambda **kw: CountingEnv(box=True, **kw))
gym.register("DummyMultiBinary-v0", entry_point=lambda **kw: BitsEnv(**kw))
gym.register("DummyDiscrete-v0", entry_point=lambda **kw: CountingEnv(**kw))
gym.register("TMaze-H4-v0", entry_point="envs.tmaze:TMaze", kwargs={"corridor_length": 4})  # tests/test_learning.py
