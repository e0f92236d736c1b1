"""DeepMind Control Suite tasks (Tassa et al., 2018) as gymnasium envs with Box actions.

    python amago_agent.py --env-id envs:DMC-cheetah-run-v0 --max-seq-len 64

- observation: the task's observation dict (e.g. cheetah: position (8,), velocity (9,)) concatenated in the suite's
  order into one float32 vector. dm_control declares no bounds for it, so the Box is unbounded.
- actions: the task's bounded actuator range ([-1, 1] for every task of the suite); AmagoEnv rescales from [-1, 1].
- episodes: 1,000 control steps (the suite's time limit), then `truncated` (dm_env's last step with discount 1: a time
  limit, so the critic bootstraps); `terminated` only where the task itself stops with discount 0.
- seeding: `reset(seed=s)` rebuilds the task with `task_kwargs={"random": s}` (dm_control seeds its initial states
  only at load); a reset without a seed continues that generator.
Needs `pip install dm-control` (MuJoCo comes with it).
"""

import warnings

import gymnasium as gym
import numpy as np

from envs import require


def load_suite():
    with warnings.catch_warnings():  # glfw warns at import when there is no display; rendering is never used here
        warnings.simplefilter("ignore")
        return require("dm_control.suite", "dm-control")


class DMControl(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, domain: str = "cheetah", task: str = "run"):
        suite = load_suite()
        if (domain, task) not in suite.ALL_TASKS:
            accepted = ", ".join(f"{d}-{t}" for d, t in suite.ALL_TASKS)
            raise ValueError(f"unknown DM Control task {domain}-{task}; accepted: {accepted}")
        self.domain, self.task, self.suite = domain, task, suite
        self.env_name = f"DMC-{domain}-{task}"
        self.env = suite.load(domain, task, task_kwargs={"random": 0})
        dim = sum(int(np.prod(s.shape)) for s in self.env.observation_spec().values())
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (dim,), np.float32)
        spec = self.env.action_spec()
        self.action_space = gym.spaces.Box(spec.minimum.astype(np.float32), spec.maximum.astype(np.float32))

    def _obs(self, ts):
        return np.concatenate([np.asarray(v, np.float32).ravel() for v in ts.observation.values()])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.env = self.suite.load(self.domain, self.task, task_kwargs={"random": seed})
        return self._obs(self.env.reset()), {}

    def step(self, action):
        ts = self.env.step(np.asarray(action, np.float64))
        last = ts.last()
        terminated = bool(last and ts.discount == 0.0)
        return self._obs(ts), float(ts.reward), terminated, bool(last and not terminated), {}
