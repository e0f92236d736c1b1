"""k-shot meta-RL: reset to the same task k times, as one rollout.

AMAGO expects a meta-RL env to handle its own k-shot resets: `terminated`/`truncated` mean "the whole rollout is
over", and an attempt that ends inside the rollout is a soft reset the env performs itself (AMAGO tutorial, "Meta-RL
and Auto-Resets"). The agent's rl2 inputs carry the previous reward and action but not the reset, so the reset goes
into the observation.

    env = KShot(inner_env, k=5)

- A new task per rollout: `reset()` calls `inner.reset_task(rng)` with the rollout's seeded generator if the inner
  env has that hook (`inner.reset()` must then keep the task); otherwise it draws one task seed per rollout and
  resets the inner env with that same seed at every attempt (for envs whose task is a function of the reset seed;
  their transition noise then repeats too).
- Observation: the inner (flat Box) observation + [soft-reset flag, attempt index / k]. The flag is 1 on the first
  observation of the rollout and on every observation that follows the end of an attempt (the terminal one too).
  `show_attempt=False` leaves out the attempt index (the reference's `hide_k_progress`): a memory-free policy then
  cannot tell one attempt from another, which is what a fair no-memory baseline needs.
- Logging: at the end of the rollout, `info[f"{LOG_PREFIX} attempt {i} return"]` for every attempt i, and
  `... attempt {i} success` where the inner env reports `info["success"]` at the end of its episodes; AMAGO's eval
  averages each key, giving a success rate per attempt.
"""

import gymnasium as gym
import numpy as np

from envs import LOG_PREFIX


class KShot(gym.Env):
    """A gym.Env that owns its inner env (not a gym.Wrapper: check_env and AMAGO see one plain env)."""

    metadata = {"render_modes": []}

    def __init__(self, env: gym.Env, k: int, show_attempt: bool = True):
        if k < 1:
            raise ValueError(f"k (attempts per rollout) must be >= 1, got {k}")
        space = env.observation_space
        if not (isinstance(space, gym.spaces.Box) and len(space.shape) == 1):
            raise ValueError(f"KShot needs a flat Box observation space to append its reset features, got {space}")
        self.env, self.k, self.show_attempt = env, k, show_attempt
        extra = 2 if show_attempt else 1
        low, high = np.append(space.low, [0] * extra), np.append(space.high, [1] * extra)
        self.observation_space = gym.spaces.Box(low.astype(space.dtype), high.astype(space.dtype), dtype=space.dtype)
        self.action_space = env.action_space

    def _obs(self, obs, flag):
        extra = [flag, self.attempt / self.k] if self.show_attempt else [flag]
        return np.append(obs, extra).astype(self.observation_space.dtype)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.task_seed = int(self.np_random.integers(2**31))
        self.hook = getattr(self.env.unwrapped, "reset_task", None)
        if self.hook:
            self.hook(self.np_random)
        self.attempt, self.ret, self.returns, self.successes = 0, 0.0, [], {}
        obs, _ = self.env.reset(seed=self.task_seed)  # the first attempt seeds the inner env (determinism)
        return self._obs(obs, 1.0), {}

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.ret += float(reward)
        if not (terminated or truncated):
            return self._obs(obs, 0.0), reward, False, False, info
        self.returns.append(self.ret)
        if "success" in info:
            self.successes[self.attempt] = float(info["success"])
        self.attempt, self.ret = self.attempt + 1, 0.0
        done = self.attempt >= self.k
        info = {}
        if done:  # deviation: the rollout's end ends the task: terminated, never bootstrapped (the reference: both)
            info = {f"{LOG_PREFIX} attempt {i} return": r for i, r in enumerate(self.returns)}
            info.update({f"{LOG_PREFIX} attempt {i} success": s for i, s in self.successes.items()})
        else:  # soft reset to the same task (a hook-made task stays put; a seed-made one is re-made by the seed)
            obs, _ = self.env.reset(seed=None if self.hook else self.task_seed)
        return self._obs(obs, 1.0), reward, done, False, info
