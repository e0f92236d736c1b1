"""gymnax environments (jax) as one numpy env that steps all actors at once, for `--env-mode already_vectorized`:

    python amago_agent.py --env-id envs.gymnax_env:gymnax-MemoryChain-bsuite --env-mode already_vectorized --num-envs 512

Importing this module registers every gymnax id as `gymnax-<id>` with a gymnasium `vector_entry_point`, so
`gym.make_vec(id, num_envs)` builds a `GymnaxVecEnv`: num_envs copies of the env in one jit(vmap(step)) call, which is
how 512 actors run from one process (CPU jax is fine). The reference notes that "many gymnax envs appear to be broken
by recent versions of jax": CartPole-v1 and MemoryChain-bsuite run with gymnax 1.0.1 and jax 0.10.2 (our tests).
"""

import functools

import gymnasium as gym
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
from gymnax.environments.spaces import gymnax_space_to_gym_space


@functools.cache  # one compile per env and batch size, shared by the train and eval envs
def compiled(gymnax_id, **env_kwargs):
    env, params = gymnax.make(gymnax_id, **env_kwargs)
    reset = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))  # one key per actor, shared params
    return env, params, reset, jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))


class GymnaxVecEnv(gym.vector.VectorEnv):
    """num_envs copies of one gymnax env with numpy inputs and outputs. gymnax resets a finished actor inside step()
    (same-step autoreset) and returns its true last observation, passed on as info["final_obs"]."""

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, gymnax_id: str, **env_kwargs):
        self.env, self.params, self._reset, self._step = compiled(gymnax_id, **env_kwargs)
        self.num_envs = num_envs
        self.single_observation_space = gymnax_space_to_gym_space(self.env.observation_space(self.params))
        self.single_action_space = gymnax_space_to_gym_space(self.env.action_space(self.params))
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.action_dtype = self.env.action_space(self.params).dtype  # jax's (int32 / float32), not numpy's int64
        self.key = jax.random.key(0)

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.key = jax.random.key(seed)
        self.key, key = jax.random.split(self.key)
        obs, self.state = self._reset(jax.random.split(key, self.num_envs), self.params)
        return np.array(obs), {}

    def step(self, actions):
        self.key, key = jax.random.split(self.key)
        keys, actions = jax.random.split(key, self.num_envs), jnp.asarray(actions, dtype=self.action_dtype)
        obs, self.state, rew, term, trunc, info = self._step(keys, self.state, actions, self.params)
        # np.array copies: jax's buffers are read-only, torch wants writable arrays
        obs, rew, term, trunc, final = (np.array(x) for x in (obs, rew, term, trunc, info["final_observation"]))
        return obs, rew, term, trunc, {"final_obs": final}


for _id in gymnax.registered_envs:
    if f"gymnax-{_id}" not in gym.registry:
        gym.register(f"gymnax-{_id}", vector_entry_point=GymnaxVecEnv, kwargs={"gymnax_id": _id})
