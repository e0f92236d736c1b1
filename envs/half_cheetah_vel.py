"""HalfCheetah-Vel: the classic meta-RL locomotion task (Finn et al. 2017; rewards as in VariBAD, Zintgraf et al.
2020), remade on gymnasium's MuJoCo HalfCheetah-v5 as AMAGO does (amago/envs/builtin/half_cheetah_v4_vel.py, v4).

    python amago_agent.py --env-id envs:HalfCheetahVel-v0      (needs `pip install "gymnasium[mujoco]"`)

Each reset draws a hidden target velocity v* ~ U[0, 3] (`task_min_velocity`, `task_max_velocity`); the agent has
to infer it from the rewards it gets while running:

    reward = -|v - v*| - 0.05 * sum(action^2)        (v: forward velocity of the torso)

The control-cost weight 0.05 is half of HalfCheetah's default 0.1, as in the original task. Episodes last 1000
steps and end by truncation (the target does not change within an episode). At the last step, info reports under
LOG_PREFIX the target velocity error averaged over the final 50 steps, the reference's measure of a solved task,
with the mean velocity over the episode.
"""

from typing import Optional

import numpy as np
from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv

from envs import LOG_PREFIX


class HalfCheetahVel(HalfCheetahEnv):
    def __init__(
        self,
        task_min_velocity: float = 0.0,
        task_max_velocity: float = 3.0,
        episode_length: int = 1000,
        ctrl_cost_weight: float = 0.5 * 0.1,
        **kwargs,
    ):
        if not task_min_velocity <= task_max_velocity:
            raise ValueError(f"task_min_velocity {task_min_velocity} must be <= task_max_velocity {task_max_velocity}")
        if episode_length < 1:
            raise ValueError(f"episode_length must be >= 1, got {episode_length}")
        super().__init__(ctrl_cost_weight=ctrl_cost_weight, **kwargs)
        self.task_range, self.episode_length = (task_min_velocity, task_max_velocity), episode_length
        self.target_velocity = float(np.mean(self.task_range))  # replaced at every reset

    def _get_rew(self, x_velocity: float, action):  # HalfCheetah-v5's reward hook: -|v - v*| replaces +v
        forward = -self._forward_reward_weight * abs(x_velocity - self.target_velocity)
        ctrl = self.control_cost(action)
        return forward - ctrl, {"reward_forward": forward, "reward_ctrl": -ctrl}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        obs, info = super().reset(seed=seed, options=options)
        self.target_velocity = float(self.np_random.uniform(*self.task_range))  # seeded: same seed, same task
        self.t, self.velocities = 0, []
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        self.t += 1
        self.velocities.append(info["x_velocity"])
        truncated = truncated or self.t >= self.episode_length
        if terminated or truncated:
            info[f"{LOG_PREFIX} target velocity error (final 50 steps)"] = abs(
                np.mean(self.velocities[-50:]) - self.target_velocity
            )
            info[f"{LOG_PREFIX} mean velocity"] = float(np.mean(self.velocities))
        return obs, reward, terminated, truncated, info
