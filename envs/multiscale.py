"""MultiScaleBandit: one small in-context task under hidden reward scales, the setting of AMAGO-2 (Grigsby et al.,
NeurIPS 2024, "Breaking the multi-task barrier"): tasks that differ only by the scale of their returns.

Each episode draws a hidden scale s from `scales` (x1, x10, x100) and a hidden good arm among `arms`. The agent pulls
`pulls` times; the good arm pays s, the others 0. It is never told s or the arm: it has to find the arm by trying
(in context: from rl2's previous action and reward, or its memory) and then keep pulling it. The optimal policy is
the same at every scale (try arms in a fixed order until one pays, then stay), so only the learning signal differs:
with reward_multiplier 10 the returns are 10 ... 60, 100 ... 600 and 1,000 ... 6,000 (inside the critic's bins).

Observation Box(1): log(1 + previous payout), a score display (0 at reset and after a miss; 0.69, 2.40, 4.62 after
a hit at x1, x10, x100). It shows hit or miss at every scale, which the raw rl2 reward, z-scored by the agent's
running input norm across scales, hardly does for x1 (a hit of 1 next to hits of 100 looks like a miss). The same
squashing is what the reference's CNN timestep encoder applies to rl2 (symlog).
Actions Discrete(arms). Reward s for the good arm, else 0. The episode terminates after `pulls` pulls.

Success (the eval metric, logged as f"{LOG_PREFIX} success" at the last step) is 1 if the last pull is on the good
arm: 1/arms for a policy that does not adapt, 1.0 for the optimal one (pulls >= arms). `env_name` is
"MultiScaleBandit-x{s}", so eval metrics and frame counts are split per scale. MultiScaleBandit-x1-v0, -x10-v0 and
-x100-v0 each hold one scale: as separate env ids of one run (`--env-id a,b,c`), the actors are split among them.
"""

import gymnasium as gym
import numpy as np

from envs import LOG_PREFIX


class MultiScale(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, arms: int = 3, pulls: int = 6, scales: tuple = (1.0, 10.0, 100.0), max_scale: float = 0.0):
        if arms < 2:
            raise ValueError(f"arms must be >= 2, got {arms}")
        if pulls < arms:
            raise ValueError(
                f"pulls must be >= arms ({arms}) so that trying every arm leaves a pull to exploit, got {pulls}"
            )
        if len(scales) < 1 or min(scales) <= 0:
            raise ValueError(f"scales must be a non-empty list of positive reward scales, got {scales}")
        self.arms, self.pulls, self.scales = arms, pulls, tuple(float(s) for s in scales)
        # the display's bound: the largest scale of the task family, so that one-scale envs (MultiScaleBandit-x1-v0
        # ...) share one observation space and can run side by side in one multi-env run
        high = np.log1p(max(*self.scales, max_scale))
        self.observation_space = gym.spaces.Box(0.0, float(high), (1,), np.float32)
        self.action_space = gym.spaces.Discrete(arms)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.scale = self.scales[self.np_random.integers(len(self.scales))]
        self.good = int(self.np_random.integers(self.arms))
        self.t = 0
        self.env_name = f"MultiScaleBandit-x{self.scale:g}"  # AmagoEnv reads it at every reset
        return np.zeros(1, np.float32), {}

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action must be an int in [0, {self.arms}) (the arm to pull), got {action!r}")
        self.t += 1
        hit = int(action) == self.good
        reward = self.scale if hit else 0.0
        done = self.t >= self.pulls
        info = {f"{LOG_PREFIX} success": float(hit)} if done else {}
        return np.array([np.log1p(reward)], np.float32), reward, done, False, info
