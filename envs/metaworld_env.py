"""Meta-World's meta-RL benchmarks (Yu et al., 2019): ML1, ML10 and ML45 with k attempts per task, the MultiTaskAgent's
showcase (the reference: amago/envs/builtin/metaworld_ml.py).

    python amago_multitask.py --env-id envs:MetaWorld-ML1-reach-v0 --max-seq-len 256

- a task is one (task family, goal) pair from the benchmark's split: ML1 has one family (e.g. reach-v3) with 50
  train goals and 50 other test goals; ML10 has 10 train families and 5 held-out test families, ML45 45 and 5. The
  goal is never in the observation (Meta-World's partially observable ML setting): the agent finds it by trying.
- every rollout draws a task (family, then goal), and the agent gets k attempts of `max_steps` steps at it (500;
  `MetaWorld-ML1-reach-Steps50-v0`: 50, so its 3 attempts fit a 150-step context; `…-Steps40-NoPuck-v0`: 40;
  `…-Steps30-NoPuck-v0`: 30; envs/kshot.py: Meta-World's 39-dim observation less its 3 goal slots, which the ML setting
  zeroes, + the soft reset flag and attempt index; the rollout is terminated after the k-th attempt). Rewards are
  Meta-World's dense shaped ones.
- `hide_objects=True` (`MetaWorld-ML1-reach-Steps50-NoPuck-v0`) observes the hand and gripper only, now and a step
  earlier (8 dims). For reach the puck is scenery, but each task places it anew: ML1's 50 train goals come with 50
  puck positions, so a network can learn the goal of each puck position and reach it from the first step, with no
  search and nothing to remember. On the test split such a lookup fails; without the puck, only search finds a goal.
- `success_bonus=B` (`…-Steps30-NoPuck-Bonus-v0`: 10) adds B to each step's reward while the point between the
  fingers, from which Meta-World measures the reach, is within its 5-cm success radius. reach's shaped reward is 10
  inside that sphere and still 9.8-9.9 at 6 cm, 8.4-9.3 at 8 cm (its tolerance falls off over the start-to-goal
  distance, 21-33 cm over ML1's 50 train goals), so it pays almost nothing for success itself; the bonus makes a step
  that succeeds worth twice one that comes close.
- `sparse=True` (`MetaWorld-ML1-reach-Steps50-NoPuck-Sparse-v0`) replaces the shaped reward by 1 per step within
  that success radius and 0 elsewhere, as the sparse point robot (envs/point_robot.py): the first attempt must search
  the goals' region, which a 50-step attempt cannot sweep whole, and only a memory of where the earlier attempts
  searched, and found, lets a later attempt succeed more often than the first.
- `reward_radius=R` (`…-Sparse10cm-v0`: 0.1) replaces the shaped reward by 1 - d / R within R of the goal and 0
  elsewhere (d: the distance Meta-World measures success by, < 5 cm), graded inside as the point robot's. The hand
  must drive ~38 of its 50 steps at the goals' box to reach it at all: noise around a fixed action (an untrained
  actor's) finds the 10-cm region in 2.5% of attempts, the 5-cm one in none of 600
  (benchmarks/probes/metaworld_sparse_baselines.py, `drift`), and inside it the reward leads to the goal. The
  agent's own exploration, a random walk at first, found neither in training (benchmarks/README.md, suites).
- logging: the env's name is the task family's (`MetaWorld-reach-v3`), so eval metrics are split per family; at the
  rollout's end `f"{LOG_PREFIX} attempt {i} success"` (the attempt reached the goal at any step) and `... return`.
- the benchmark's goal sets are built once per process with a fixed seed (ML10: ~8 s, ML45: ~30 s), so the train and
  eval envs of every run share them.
Needs `pip install metaworld==3.1.1` (it pins mujoco 3.3.0: Meta-World's models do not load on mujoco 4).
"""

import functools

import gymnasium as gym
import numpy as np

from envs import require
from envs.kshot import KShot

BENCHMARKS = ("ml10", "ml45")  # or an ML1 task family name, e.g. "reach-v3"


@functools.cache
def benchmark(name: str, seed: int = 0):
    metaworld = require("metaworld", "metaworld==3.1.1")
    if name == "ml10":
        return metaworld.ML10(seed=seed)
    if name == "ml45":
        return metaworld.ML45(seed=seed)
    if name not in metaworld.ML1.ENV_NAMES:
        raise ValueError(f"unknown Meta-World benchmark {name!r}; accepted: ml10, ml45, or an ML1 task: "
                         + ", ".join(metaworld.ML1.ENV_NAMES))  # fmt: skip
    return metaworld.ML1(name, seed=seed)


class MetaWorldTasks(gym.Env):
    """One attempt at the current task; `reset_task(rng)` draws the next task, `reset()` keeps it (KShot's hook)."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        name: str = "reach-v3",
        split: str = "train",
        max_steps: int = 500,
        hide_objects: bool = False,
        success_bonus: float = 0.0,
        sparse: bool = False,
        reward_radius: float = 0.0,
    ):
        if split not in ("train", "test"):
            raise ValueError(f"split must be 'train' or 'test', got {split!r}")
        if reward_radius < 0 or (sparse and reward_radius):
            raise ValueError(f"reward_radius must be >= 0 (0: none) and not beside sparse=True, got {reward_radius!r}")
        bench = benchmark(name)
        self.classes = bench.train_classes if split == "train" else bench.test_classes
        tasks = bench.train_tasks if split == "train" else bench.test_tasks
        self.tasks = {fam: [t for t in tasks if t.env_name == fam] for fam in self.classes}
        self.families, self.envs, self.max_steps = sorted(self.classes), {}, max_steps
        self.success_bonus, self.sparse, self.reward_radius = float(success_bonus), bool(sparse), float(reward_radius)
        # the observed slots: all but the goal's 3 (zeroed by the ML setting); hide_objects: the hand and gripper only
        self.keep = np.r_[0:4, 18:22] if hide_objects else slice(0, 36)  # a slice: no extra copy per step
        self.family = self.families[0]
        self.reset_task(np.random.default_rng(0))
        space = self.env.observation_space  # (39,): hand, gripper, 2 objects, the same 18 a step earlier, goal
        low, high = space.low[self.keep].astype(np.float32), space.high[self.keep].astype(np.float32)
        self.observation_space = gym.spaces.Box(low, high)
        self.action_space = self.env.action_space

    @property
    def env_name(self):
        return f"MetaWorld-{self.family}"

    def reset_task(self, rng):
        self.family = self.families[int(rng.integers(len(self.families)))]
        if self.family not in self.envs:  # one MuJoCo model per family, built when first drawn
            self.envs[self.family] = self.classes[self.family]()
            self.envs[self.family].max_path_length = self.max_steps
        self.env = self.envs[self.family]
        tasks = self.tasks[self.family]
        self.env.set_task(tasks[int(rng.integers(len(tasks)))])  # fixes the goal: every reset() keeps it

    @property
    def goal(self):
        return self.env._target_pos.copy()  # (3,), for tests; the agent never sees it

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.success = 0.0
        obs, _ = self.env.reset()  # deterministic: the hand, object and goal positions are the task's
        return obs[self.keep].astype(np.float32), {}

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(np.asarray(action, np.float32))
        hit = float(info["success"])  # this step's success (within 5 cm)
        if self.sparse:
            reward = hit
        elif self.reward_radius > 0:  # graded within the radius, from the point between the fingers
            dist = float(np.linalg.norm(self.env.tcp_center - self.env._target_pos))
            reward = max(0.0, 1.0 - dist / self.reward_radius)
        reward += self.success_bonus * hit
        self.success = max(self.success, hit)
        info = {"success": self.success}  # KShot logs it at the attempt's end: success at any step of the attempt
        return obs[self.keep].astype(np.float32), float(reward), bool(terminated), bool(truncated), info


class MetaWorld(KShot):
    """k attempts per task: KShot around MetaWorldTasks, named after the current task family."""

    def __init__(self, name="reach-v3", split="train", k=3, max_steps=500, hide_objects=False, **reward):  # sparse, ...
        super().__init__(MetaWorldTasks(name, split, max_steps, hide_objects, **reward), k)

    @property
    def env_name(self):
        return self.env.env_name
