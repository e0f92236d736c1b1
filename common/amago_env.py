"""What the agent sees of a gymnasium env: its observation as a dict, with rl2 = [previous reward, previous action]
(zero at reset) and the absolute time index beside it; Box actions exposed in [-1, 1]. AmagoEnv wraps one env (for
gymnasium's vector envs), AmagoVecEnv an env that steps all actors itself (`--env-mode already_vectorized`, gymnax)."""

import importlib

import gymnasium as gym
import numpy as np

LOG_PREFIX = "AMAGO_LOG_METRIC"  # envs report extra eval metrics as info[f"{LOG_PREFIX} success"] etc.


def resolve_env_id(env_id: str) -> str:
    """Import `pkg.module:` ids first; an id that is not registered (e.g. LunarLander-v2 on gymnasium 1.x, or a bare
    name) resolves to the newest registered version of the same name."""
    if ":" in env_id:
        module, env_id = env_id.split(":", 1)
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise ValueError(f"--env-id {module}:{env_id}: cannot import {module!r} ({e})") from None
    if env_id in gym.registry:
        return env_id
    ns, name, _ = gym.envs.registration.parse_env_id(env_id)
    newest = gym.envs.registration.find_highest_version(ns, name)
    if newest is None:
        try:
            gym.spec(env_id)  # gymnasium's own error, with its "did you mean" suggestion
        except gym.error.Error as e:
            raise type(e)(
                f"--env-id {env_id!r}: {e} (your own env: `package.module:{env_id}` imports it first)"
            ) from None
    new_id = gym.envs.registration.get_env_id(ns, name, newest)
    print(f"note: {env_id} is not registered in gymnasium {gym.__version__}; using {new_id}")
    return new_id


def amago_spaces(obs_space, action_space):
    """What the agent sees of an env with these spaces: (action dim A, the action space (Box: rescaled to [-1, 1]),
    the observation dict {"obs": the env's obs as a dict, "rl2": [previous reward, previous action] (A+1,), "time"})."""
    if isinstance(action_space, gym.spaces.Discrete):
        A = int(action_space.n)
    elif isinstance(action_space, gym.spaces.Box):
        A = int(np.prod(action_space.shape))
        if not (np.isfinite(action_space.low).all() and np.isfinite(action_space.high).all()):
            raise ValueError(f"Box action space {action_space} must be bounded: AMAGO rescales actions to [-1, 1]")
        action_space = gym.spaces.Box(-1.0, 1.0, action_space.shape, np.float32)
    elif isinstance(action_space, gym.spaces.MultiBinary):
        A = int(np.prod(action_space.shape))
    else:
        raise ValueError(f"action space {action_space} is not supported: use Discrete, Box or MultiBinary")
    if not isinstance(obs_space, gym.spaces.Dict):
        obs_space = gym.spaces.Dict({"observation": obs_space})
    for k, s in obs_space.items():  # each key is flattened into one vector of the timestep encoder's input
        if not isinstance(s, (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiBinary, gym.spaces.MultiDiscrete)):
            raise ValueError(
                f"observation {k!r}: {s} is not supported: use Box, Discrete, MultiBinary or MultiDiscrete spaces, "
                "alone or as the values of one Dict (wrap the env to encode other spaces as arrays)"
            )
    rl2 = gym.spaces.Box(-np.inf, np.inf, (A + 1,), np.float32)
    time_idx = gym.spaces.Box(0, np.iinfo(np.int64).max, (), np.int64)
    return A, action_space, gym.spaces.Dict({"obs": obs_space, "rl2": rl2, "time": time_idx})


def to_env_actions(space, a):
    """Agent actions of N actors -> (rep (N, A) float32: the action as rl2 records it, the env's actions (N, ...)).
    Discrete: index -> one-hot; Box: [-1, 1] -> the env's [low, high]; MultiBinary: 0/1 -> int8 bits."""
    N = len(a)
    if isinstance(space, gym.spaces.Discrete):
        idx = np.asarray(a).reshape(N).astype(np.int64)
        return np.eye(space.n, dtype=np.float32)[idx], idx
    rep = np.asarray(a, np.float32).reshape(N, -1)
    if isinstance(space, gym.spaces.Box):
        rep = np.clip(rep, -1.0, 1.0)
        low, high = space.low.astype(np.float64), space.high.astype(np.float64)
        return rep, (low + (rep.reshape(N, *space.shape) + 1.0) * 0.5 * (high - low)).astype(space.dtype)
    return rep, rep.reshape(N, *space.shape).astype(np.int8)


def wrap_obs(obs, reward, rep, t):
    """The agent's observation dict, for one actor (reward, rep (A,), t: scalars) or N (reward (N,), rep (N, A), t)."""
    obs = obs if isinstance(obs, dict) else {"observation": obs}
    rl2 = np.concatenate([np.expand_dims(reward, -1), rep], axis=-1).astype(np.float32)
    return {"obs": obs, "rl2": rl2, "time": np.array(t, np.int64)}  # a copy: the caller's counter moves on


class AmagoEnv(gym.Wrapper):
    """Adds what the agent sees besides the observation: rl2 = [previous reward, previous action] (zero at reset)
    and the absolute time index. Box actions are exposed in [-1, 1] and rescaled for the inner env."""

    def __init__(self, env: gym.Env, env_name: str):
        super().__init__(env)
        self.env_name = getattr(env.unwrapped, "env_name", env_name)
        self.action_dim, self.action_space, self.observation_space = amago_spaces(
            env.observation_space, env.action_space
        )

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.t = 0
        info["env_name"] = self.env_name = getattr(self.env.unwrapped, "env_name", self.env_name)
        return wrap_obs(obs, 0.0, np.zeros(self.action_dim, np.float32), 0), info

    def step(self, action):
        if isinstance(self.env.action_space, gym.spaces.Discrete):  # the common case, without array round trips
            env_action = int(action)
            rep = np.eye(self.action_dim, dtype=np.float32)[env_action]
        else:
            rep, env_action = (x[0] for x in to_env_actions(self.env.action_space, np.asarray(action)[None]))
        obs, reward, terminated, truncated, info = self.env.step(env_action)
        self.t += 1
        info["env_name"] = self.env_name
        return wrap_obs(obs, float(reward), rep, self.t), reward, terminated, truncated, info


def index_obs(obs, i):
    """Actor i's slice of a (nested) batched observation dict."""
    return {k: index_obs(v, i) for k, v in obs.items()} if isinstance(obs, dict) else obs[i]


class AmagoVecEnv(gym.vector.VectorWrapper):
    """AmagoEnv for an env that steps all N actors itself: the same observation dict and same-step autoreset info
    (final_obs, final_info) that SyncVectorEnv(AmagoEnv) gives the training loop. The env takes and returns batched
    numpy arrays (fresh each step), resets finished actors inside step() (as gymnax does; the reference's
    AlreadyVectorizedEnv relies on it too) and should return their true last observations as info["final_obs"];
    without it the reset observation stands in, as in the reference, so a truncated episode then bootstraps from the
    next episode's first observation."""

    def __init__(self, env: gym.vector.VectorEnv, env_name: str):
        super().__init__(env)
        mode = env.metadata.get("autoreset_mode", gym.vector.AutoresetMode.SAME_STEP)
        if mode != gym.vector.AutoresetMode.SAME_STEP:
            raise ValueError(
                f"--env-mode already_vectorized needs an env that resets finished actors in the same step "
                f"(autoreset_mode SAME_STEP, as gymnax); {env} has {mode}"
            )
        self.env_name = getattr(env.unwrapped, "env_name", env_name)
        spaces = amago_spaces(env.single_observation_space, env.single_action_space)
        self.action_dim, self.single_action_space, self.single_observation_space = spaces
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.metadata = {**env.metadata, "autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        N = self.num_envs
        self.t = np.zeros(N, np.int64)
        info["env_name"] = np.full(N, self.env_name, object)
        return wrap_obs(obs, np.zeros(N), np.zeros((N, self.action_dim), np.float32), self.t), info

    def step(self, actions):
        rep, env_actions = to_env_actions(self.env.single_action_space, actions)
        obs, rew, term, trunc, info = self.env.step(env_actions)
        done = term | trunc
        self.t += 1
        # deviation: the true last observation is stored (the reference's AlreadyVectorizedEnv keeps the reset one)
        last = wrap_obs(info.get("final_obs", obs), rew, rep, self.t)  # each actor's observation after its action
        self.t[done] = 0
        next_obs = wrap_obs(obs, np.where(done, 0.0, rew), np.where(done[:, None], 0.0, rep), self.t)  # zero rl2
        names = np.full(self.num_envs, self.env_name, object)
        info = {
            "env_name": names,
            "final_obs": [index_obs(last, i) if d else None for i, d in enumerate(done)],
            "final_info": {"env_name": names, **{k: v for k, v in info.items() if k.startswith(LOG_PREFIX)}},
        }
        return next_obs, rew, term, trunc, info
