"""XLand-MiniGrid (Nikulin et al., 2023): jax grid worlds where a ruleset (goal, rules, objects) is the task, as one
numpy env that steps all actors at once, for `--env-mode already_vectorized` (as envs/gymnax_env.py; the reference:
amago/envs/builtin/xland_minigrid.py).

    python amago_agent.py --env-id envs:XLand-Trivial-R1-9x9-v0 --env-mode already_vectorized --num-envs 256

Meta-RL: every actor plays one ruleset for a trial of k episodes (attempts), then draws a new ruleset. Within a trial
an ended episode is a soft reset (a fresh layout, same ruleset); the trial's end is `terminated`.
- rulesets: `XLand-Trivial-*` draws them here: n_objects distinct (shape, color) objects are placed in the room and
  the goal is to pick up one of them, which one is hidden (no goal in the observation), so the agent finds it by
  trying and remembers it for the next attempts. `benchmark="trivial-1m"` (or small-1m, medium-1m, high-1m)
  samples xminigrid's published rulesets instead (downloaded on first use) and shows their goal, as XLand's own
  setting (there the rules are what is hidden).
- observation: {"grid": the agent's 5 x 5 view, (tile, color) per cell, flat (50,) uint8; "extra": [heading one-hot
  (4), soft-reset flag, attempt index / k]} (+ "goal": the goal's encoding, with a published benchmark).
- reward: xminigrid's (1 - 0.9 t / max_steps when the goal is met, else 0); an episode lasts at most 3 * height *
  width steps.
- metrics: at a trial's end, `info[f"{LOG_PREFIX} attempt {i} return"]` and `... success"` for every attempt i, so
  that evaluation reports whether later attempts do better (in-context adaptation).
Needs `pip install xminigrid` (jax).
"""

import functools

import gymnasium as gym
import numpy as np

from envs import LOG_PREFIX, require

SHAPES = (3, 4, 5, 7, 11, 12)  # xminigrid's Tiles: ball, square, pyramid, key, hex, star
COLORS = (1, 2, 3, 4, 5)  # red, green, blue, purple, yellow


@functools.cache  # one compile per configuration, shared by the train and eval envs
def compiled(grid: str, k: int, n_objects: int, benchmark: str):
    jax, xminigrid = require("jax", "xminigrid"), require("xminigrid", "xminigrid")
    jnp = jax.numpy
    from xminigrid.core.goals import AgentHoldGoal
    from xminigrid.core.rules import EmptyRule

    env, base = xminigrid.make(f"XLand-MiniGrid-{grid}")
    if benchmark:
        sample_ruleset = xminigrid.load_benchmark(benchmark).sample_ruleset
    else:
        combos = jnp.array([(s, c) for s in SHAPES for c in COLORS], jnp.uint8)  # (30, 2)

        def sample_ruleset(key):  # n distinct objects; the goal: hold the first
            objects = jax.random.permutation(key, combos)[:n_objects]
            goal = AgentHoldGoal(tile=objects[0]).encode()
            return xminigrid.types.RuleSet(goal=goal, rules=EmptyRule().encode()[None], init_tiles=objects)

    def pick(cond, new, old):  # per-leaf select of whole pytrees by one scalar
        return jax.tree_util.tree_map(lambda a, b: jnp.where(cond, a, b), new, old)

    def reset(key):  # one actor -> (timestep, ruleset, attempt)
        k1, k2 = jax.random.split(key)
        ruleset = sample_ruleset(k1)
        return env.reset(base.replace(ruleset=ruleset), k2), ruleset, jnp.int32(0)

    def step(ts, ruleset, attempt, action, key):
        ts = env.step(base.replace(ruleset=ruleset), ts, action)
        ep_done = ts.last()
        attempt = attempt + ep_done.astype(jnp.int32)
        trial_done = attempt >= k
        k1, k2 = jax.random.split(key)
        ruleset = pick(trial_done, sample_ruleset(k1), ruleset)
        nxt = pick(ep_done, env.reset(base.replace(ruleset=ruleset), k2), ts)  # same ruleset unless the trial ended
        return ts, nxt, ruleset, jnp.where(trial_done, 0, attempt), ep_done, trial_done

    return env, base, jax.jit(jax.vmap(reset)), jax.jit(jax.vmap(step))


class XLandVecEnv(gym.vector.VectorEnv):
    """num_envs actors in one jit(vmap(step)) call; a finished trial restarts inside step() (same-step autoreset) and
    its true last observation is passed on as info["final_obs"]."""

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, grid: str = "R1-9x9", k: int = 4, n_objects: int = 3, benchmark: str = ""):
        if k < 1 or not 1 <= n_objects <= len(SHAPES) * len(COLORS):
            raise ValueError(f"k must be >= 1 and n_objects in [1, 30], got k={k}, n_objects={n_objects}")
        self.jax = require("jax", "xminigrid")
        env, base, self._reset, self._step = compiled(grid, k, n_objects, benchmark)
        self.num_envs, self.k, self.show_goal = num_envs, k, bool(benchmark)
        self.env_name = f"XLand-{benchmark or 'Trivial'}-{grid}"
        V = base.view_size
        spaces = {
            "grid": gym.spaces.Box(0, 255, (V * V * 2,), np.uint8),
            "extra": gym.spaces.Box(0, 1, (6,), np.float32),
        }
        if self.show_goal:
            spaces["goal"] = gym.spaces.Box(0, 255, base.ruleset.goal.shape, np.uint8)
        self.single_observation_space = gym.spaces.Dict(spaces)
        self.single_action_space = gym.spaces.Discrete(env.num_actions(base))
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.key = self.jax.random.key(0)
        self.attempt_return = np.zeros((num_envs, k), np.float32)  # the running trial's return per attempt

    def _obs(self, ts, ruleset, attempt, flag):  # -> {key: (N, ...)} numpy
        N = self.num_envs
        extra = np.zeros((N, 6), np.float32)
        extra[np.arange(N), np.array(ts.state.agent.direction)] = 1
        extra[:, 4], extra[:, 5] = flag, np.array(attempt) / self.k
        obs = {"grid": np.array(ts.observation, np.uint8).reshape(N, -1), "extra": extra}
        if self.show_goal:
            obs["goal"] = np.array(ruleset.goal, np.uint8)
        return obs

    def _keys(self):
        self.key, key = self.jax.random.split(self.key)
        return self.jax.random.split(key, self.num_envs)

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.key = self.jax.random.key(seed)
        self.ts, self.ruleset, self.attempt = self._reset(self._keys())
        self.attempt_return[:] = 0
        return self._obs(self.ts, self.ruleset, self.attempt, np.ones(self.num_envs)), {}

    def step(self, actions):
        prev_attempt, prev_ruleset = self.attempt, self.ruleset
        actions = self.jax.numpy.asarray(np.asarray(actions), self.jax.numpy.int32)
        last, self.ts, self.ruleset, self.attempt, ep_done, trial_done = self._step(
            self.ts, self.ruleset, self.attempt, actions, self._keys()
        )
        ep_done, trial_done = np.array(ep_done), np.array(trial_done)
        final = self._obs(last, prev_ruleset, prev_attempt + ep_done, ep_done.astype(np.float32))
        obs = self._obs(self.ts, self.ruleset, self.attempt, ep_done.astype(np.float32))
        rew = np.array(last.reward, np.float32)
        self.attempt_return[np.arange(self.num_envs), np.array(prev_attempt)] += rew
        info = {"final_obs": final}
        if trial_done.any():  # read for the actors whose trial ended; the others' entries are ignored
            for i in range(self.k):
                info[f"{LOG_PREFIX} attempt {i} return"] = self.attempt_return[:, i].copy()
                info[f"{LOG_PREFIX} attempt {i} success"] = (self.attempt_return[:, i] > 0).astype(np.float32)
            self.attempt_return[trial_done] = 0
        return obs, rew, trial_done, np.zeros(self.num_envs, bool), info
