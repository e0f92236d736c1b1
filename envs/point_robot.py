"""Sparse Point Robot (Semi-Circle): the standard sparse-reward meta-RL task with continuous actions (Rakelly et al.
2019's sparse point robot, as in VariBAD and pomdp-baselines' Semi-Circle), given k attempts per task.

A point starts at the origin of the plane and moves by its action, a step of at most 0.1 per axis. Each task hides
a goal on the upper half of the unit circle, at an angle drawn from U[0, pi]. The reward is sparse: nothing outside
the goal's radius 0.2, and 1 - distance inside it (so between 0.8 and 1 per step once there). An attempt lasts 60
steps; then the point is put back at the origin with the same goal, k times (3 by default) in one rollout.

    python amago_agent.py --env-id envs:SparsePointRobot-v0

The first attempt has to search: walk out to the circle and along it until the reward appears. A policy with memory
can then go straight back to the goal in every later attempt; a memory-free policy has to search again each time,
since its observation (the position, the soft-reset flag and the attempt index) says nothing of where it found the
goal. `scripted_returns` computes both, and `benchmarks/probes/point_robot_baselines.py` records them per attempt
beside the uniform-random policy's.

Observation Box(4): [x, y, soft-reset flag, attempt / k] (envs/kshot.py). Actions Box(-0.1, 0.1, (2,)). At the end of
the rollout, info reports every attempt's return and its success (the goal's radius reached at least once).
"""

import gymnasium as gym
import numpy as np

from envs.kshot import KShot


class PointRobotAttempt(gym.Env):
    """One attempt at the current goal; `reset_task(rng)` draws a new goal, `reset()` keeps it."""

    metadata = {"render_modes": []}

    def __init__(self, max_steps: int = 60, goal_radius: float = 0.2, step_size: float = 0.1):
        if max_steps < 1:
            raise ValueError(f"max_steps per attempt must be >= 1, got {max_steps}")
        if not 0 < goal_radius < 1:
            raise ValueError(f"goal_radius must lie in (0, 1), got {goal_radius}")
        self.max_steps, self.goal_radius = max_steps, goal_radius
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
        self.action_space = gym.spaces.Box(-step_size, step_size, (2,), np.float32)
        self.goal = None

    def reset_task(self, rng: np.random.Generator):
        angle = rng.uniform(0.0, np.pi)
        self.goal = np.array([np.cos(angle), np.sin(angle)])

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        if self.goal is None:
            self.reset_task(self.np_random)
        self.pos, self.t, self.reached = np.zeros(2), 0, False
        return self.pos.astype(np.float32), {}

    def step(self, action):
        action = np.asarray(action, dtype=np.float64)
        if action.shape != (2,) or not np.all(np.isfinite(action)):
            raise ValueError(f"action must be 2 finite numbers (dx, dy), got {action!r}")
        self.pos = self.pos + np.clip(action, self.action_space.low, self.action_space.high)
        self.t += 1
        dist = float(np.linalg.norm(self.pos - self.goal))
        reward = 1.0 - dist if dist <= self.goal_radius else 0.0  # sparse: only inside the goal's radius
        self.reached |= reward > 0
        truncated = self.t >= self.max_steps
        info = {"success": float(self.reached)} if truncated else {}
        return self.pos.astype(np.float32), reward, False, truncated, info


class SparsePointRobot(KShot):
    def __init__(self, k_attempts: int = 3, max_steps: int = 60, goal_radius: float = 0.2, show_attempt: bool = True):
        super().__init__(PointRobotAttempt(max_steps, goal_radius), k_attempts, show_attempt)

    @property
    def goal(self):  # the current rollout's hidden goal, (2,)
        return self.env.goal


# ---------------------------------------------------------------------------------------------------------------------
# Scripted baselines: what a policy without memory and one with it can get, to read a learning curve against
def toward(pos, target, step=0.1):
    """The action that moves from pos toward target by at most `step` per axis (and stops on it)."""
    return np.clip(target - pos, -step, step)


class SweepPolicy:
    """Walk out to the circle at angle 0, then along the upper half circle until the reward appears, and stay there.
    It reads only the observation and the previous reward, so it is memory-free: it searches again in every attempt.
    With `remember=True` it keeps the place of the first reward and, in every later attempt, goes straight there
    (search once, then return): what memory is worth on this task."""

    def __init__(self, remember=False, step=0.1):
        self.remember, self.step, self.found = remember, step, None

    def new_task(self):
        self.found = None

    def __call__(self, pos, prev_reward):
        if prev_reward > 0:  # inside the goal's radius: stay (and, with memory, note where)
            if self.remember and self.found is None:
                self.found = pos.copy()
            return np.zeros(2)
        if self.found is not None:
            return toward(pos, self.found, self.step)
        r, angle = np.linalg.norm(pos), np.arctan2(pos[1], pos[0])
        if r < 1.0 - 1e-6 and abs(angle) < 1e-6 or r < 1e-9:  # still on the way out along the x axis
            return toward(pos, np.array([1.0, 0.0]), self.step)
        nxt = angle + self.step  # one step of arc length 0.1 along the unit circle
        return toward(pos, np.array([np.cos(nxt), np.sin(nxt)]), self.step)


def scripted_returns(policy, episodes=100, seed=0, **env_kwargs):
    """Each attempt's mean return and success over `episodes` rollouts of `policy` ("random", "sweep" or
    "search_then_return") on SparsePointRobot(**env_kwargs): {"attempt i return": ..., "attempt i success": ...,
    "return": ...}."""
    env = SparsePointRobot(**env_kwargs)
    rng = np.random.default_rng(seed)
    scripted = {"sweep": SweepPolicy(), "search_then_return": SweepPolicy(remember=True)}.get(policy)
    if scripted is None and policy != "random":
        raise ValueError(f"policy must be 'random', 'sweep' or 'search_then_return', got {policy!r}")
    totals, sums = [], {}
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        if scripted:
            scripted.new_task()
        reward, total, done = 0.0, 0.0, False
        while not done:
            if scripted:
                action = scripted(obs[:2].astype(np.float64), 0.0 if obs[2] == 1.0 else reward)
            else:
                action = rng.uniform(-0.1, 0.1, 2)
            obs, reward, done, _, info = env.step(action)
            total += reward
        totals.append(total)
        for key, value in info.items():
            name = key.split(" ", 1)[1]  # drop the log prefix
            sums[name] = sums.get(name, 0.0) + value
    out = {k: v / episodes for k, v in sorted(sums.items())}
    out["return"] = float(np.mean(totals))
    return out
