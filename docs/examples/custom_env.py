"""Your own environment, as amago_agent.py takes it: a plain gymnasium env, registered when its module is imported.

    python amago_agent.py --env-id docs.examples.custom_env:HiddenGoal-v0 --max-seq-len 32 --total-timesteps 40000

HiddenGoal is a small meta-RL task with everything a custom env may use:
- **dict observations**: {"position": a Box, "attempt": a Discrete}; the timestep encoder flattens every key;
- **k-shot resets**: one episode holds `attempts` tries at the same hidden goal; the position resets between tries and
  the goal does not, so a memory that remembers where the reward came from finds it at once on later tries;
- **metrics**: an info key that starts with LOG_PREFIX at an episode's end is averaged per env name at evaluation and
  logged as eval/HiddenGoal-v0/<name> (here: the success of the first and of the last try).
The agent adds the previous reward and action and the time index itself (the script's Environment section).
"""

import gymnasium as gym
import numpy as np

LOG_PREFIX = "AMAGO_LOG_METRIC"  # the prefix common/evaluate.py looks for


class HiddenGoal(gym.Env):
    """A line of `size` cells; a goal cell is drawn at reset and never shown. Each try starts in the middle and ends
    on the goal (reward 1) or after `steps` moves; `attempts` tries make one episode."""

    def __init__(self, size=7, steps=8, attempts=3):
        self.size, self.steps, self.attempts = size, steps, attempts
        self.observation_space = gym.spaces.Dict(
            {"position": gym.spaces.Box(0.0, 1.0, (1,), np.float32), "attempt": gym.spaces.Discrete(attempts)}
        )
        self.action_space = gym.spaces.Discrete(3)  # left, stay, right

    def obs(self):
        return {"position": np.array([self.pos / (self.size - 1)], np.float32), "attempt": self.attempt}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.goal = int(self.np_random.integers(self.size))
        self.attempt, self.pos, self.t, self.found = 0, self.size // 2, 0, []
        return self.obs(), {}

    def step(self, action):
        self.pos = int(np.clip(self.pos + int(action) - 1, 0, self.size - 1))
        self.t += 1
        reward = float(self.pos == self.goal)
        info = {}
        if reward or self.t == self.steps:  # this try ends: the next starts in the middle, same goal
            self.found.append(reward)
            self.attempt, self.pos, self.t = self.attempt + 1, self.size // 2, 0
        terminated = self.attempt == self.attempts
        if terminated:
            self.attempt = self.attempts - 1  # the last observation keeps a valid attempt index
            info[f"{LOG_PREFIX} first_try_success"] = self.found[0]
            info[f"{LOG_PREFIX} last_try_success"] = self.found[-1]
        return self.obs(), reward, terminated, False, info


gym.register("HiddenGoal-v0", entry_point=HiddenGoal)
