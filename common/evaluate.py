"""Evaluation: run the policy in the eval envs for a number of episodes, and collect their returns, env names and the
metrics each env reports at an episode's end (info keys that start with LOG_PREFIX); helpers for batched observation
dicts (one actor's slice, torch tensors)."""

import math

import numpy as np
import torch

from common.guards import check_eval_ended

LOG_PREFIX = "AMAGO_LOG_METRIC"  # envs report extra eval metrics as info[f"{LOG_PREFIX} success"] etc.


def eval_seed(seed, epoch, num_envs):
    """The reset seed of a run's evaluation at `epoch` (actor i resets with it + i): the same for same-seed runs, and
    apart for runs of other seeds (125,000 epochs of 8 actors each before two seeds' evaluations meet; below 2^31, as
    some simulators want, for seeds up to 2,000), so that the seeds of a results table are independent samples of the
    eval tasks, not mostly the same episodes."""
    return 10_000 + seed * 1_000_003 + epoch * num_envs


def index_obs(obs, i):
    """Actor i's slice of a (nested) batched observation dict."""
    return {k: index_obs(v, i) for k, v in obs.items()} if isinstance(obs, dict) else obs[i]


def obs_to_torch(obs, device):  # a wrapped observation -> (obs {key: tensor}, rl2, time) on the device
    t = lambda x: torch.as_tensor(x, device=device)
    return {k: t(v) for k, v in obs["obs"].items()}, t(obs["rl2"]), t(obs["time"])


@torch.no_grad()
def evaluate(agent, envs, episodes, greedy, device, seed=None, max_steps=100_000):
    """Run every actor until it has finished its share of `episodes`, or for max_steps steps; returns (returns, env
    names, metrics) of the finished episodes. torch's random state is restored afterwards, so that an evaluation
    (sampled actions, or one more on a clock) never changes what training draws."""
    with torch.random.fork_rng():
        return _evaluate(agent, envs, episodes, greedy, device, seed, max_steps)


def _evaluate(agent, envs, episodes, greedy, device, seed, max_steps):
    training = agent.training  # restored after: an eval between a rollout's env steps leaves it acting as it was
    agent.eval()
    N = envs.num_envs
    per_env = math.ceil(episodes / N)
    obs, info = envs.reset(seed=seed)
    hidden = agent.traj.init_hidden(N, device)
    ep_ret, finished = np.zeros(N), np.zeros(N, int)
    returns, names, extra = [], [], []
    for _ in range(max_steps):
        if not (finished < per_env).any():
            break
        a, hidden = agent.get_actions(*obs_to_torch(obs, device), hidden, greedy=greedy)
        obs, rew, term, trunc, info = envs.step(a.cpu().numpy())
        ep_ret += rew
        done = term | trunc
        for i in np.flatnonzero(done):
            if finished[i] < per_env:
                final_info = info["final_info"]
                returns.append(ep_ret[i])
                names.append(final_info["env_name"][i])
                extra.append(
                    {k[len(LOG_PREFIX) :].strip(): final_info[k][i] for k in final_info if k.startswith(LOG_PREFIX)}
                )
            finished[i] += 1
        ep_ret[done] = 0
        hidden = agent.traj.reset_hidden(hidden, torch.as_tensor(done, device=device))
    agent.train(training)
    check_eval_ended(info["env_name"][0], len(returns), per_env * N, max_steps)  # an env that never ends
    return returns, names, extra
