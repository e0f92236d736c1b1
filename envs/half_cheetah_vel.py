"""HalfCheetah-Vel: the classic meta-RL locomotion task (Finn et al. 2017; rewards as in VariBAD, Zintgraf et al.
2020), remade on gymnasium's MuJoCo HalfCheetah-v5 as AMAGO does (amago/envs/builtin/half_cheetah_v4_vel.py, v4).

    python amago_agent.py --env-id envs:HalfCheetahVel-v0      (needs `pip install "gymnasium[mujoco]"`)

Each reset draws a hidden target velocity v* ~ U[0, 3] (`task_min_velocity`, `task_max_velocity`); the agent has
to infer it from the rewards it gets while running. envs:HalfCheetahVel-Even8-v0, for evaluation, takes v* from 8
fixed, evenly spread targets instead (EVEN_TARGETS: 0.19, 0.56, ..., 2.81), one per actor of an 8-actor evaluation:

    reward = -|v - v*| - 0.05 * sum(action^2)        (v: forward velocity of the torso)

The control-cost weight 0.05 is half of HalfCheetah's default 0.1, as in the original task. Episodes last 1000
steps and end by truncation (the target does not change within an episode). At the last step, info reports under
LOG_PREFIX the target velocity error averaged over the final 50 steps, the reference's measure of a solved task,
with the mean velocity over the episode.
"""

from typing import Optional

import numpy as np
from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv

from envs import EVEN_TARGETS, LOG_PREFIX  # noqa: F401 (EVEN_TARGETS: the eval set's targets)


class HalfCheetahVel(HalfCheetahEnv):
    def __init__(
        self,
        task_min_velocity: float = 0.0,
        task_max_velocity: float = 3.0,
        episode_length: int = 1000,
        ctrl_cost_weight: float = 0.5 * 0.1,
        targets: Optional[tuple] = None,
        **kwargs,
    ):
        """targets: a fixed set instead of U[min, max]: a reset with a seed takes targets[seed % len(targets)], each
        later reset the next one, so the actors of one evaluation (seeds s, s+1, ...) cover the set evenly."""
        if not task_min_velocity <= task_max_velocity:
            raise ValueError(f"task_min_velocity {task_min_velocity} must be <= task_max_velocity {task_max_velocity}")
        if episode_length < 1:
            raise ValueError(f"episode_length must be >= 1, got {episode_length}")
        if targets is not None and not len(targets):
            raise ValueError("targets must hold at least one velocity (or be None: U[min, max])")
        super().__init__(ctrl_cost_weight=ctrl_cost_weight, **kwargs)
        self.task_range, self.episode_length = (task_min_velocity, task_max_velocity), episode_length
        self.targets, self.next_target = targets, 0
        self.target_velocity = float(np.mean(self.task_range))  # replaced at every reset

    def _get_rew(self, x_velocity: float, action):  # HalfCheetah-v5's reward hook: -|v - v*| replaces +v
        forward = -self._forward_reward_weight * abs(x_velocity - self.target_velocity)
        ctrl = self.control_cost(action)
        return forward - ctrl, {"reward_forward": forward, "reward_ctrl": -ctrl}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        obs, info = super().reset(seed=seed, options=options)
        if self.targets is None:
            self.target_velocity = float(self.np_random.uniform(*self.task_range))  # seeded: same seed, same task
        else:
            self.next_target = seed % len(self.targets) if seed is not None else self.next_target
            self.target_velocity = float(self.targets[self.next_target])
            self.next_target = (self.next_target + 1) % len(self.targets)
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
