"""The uniform-random policy's eval metrics on any env id: the baseline a learning result has to beat (--policy zero:
the Box action 0 at every step, holding still).

    OMP_NUM_THREADS=1 python benchmarks/random_baseline.py --env-id envs:DMC-cheetah-run-v0 --episodes 32

Builds the eval envs exactly as amago_agent.py does (the same wrappers, `--env-mode`, per-env metrics) and runs them
through common/evaluate.py with actions drawn uniformly from the action space (Discrete: each index; Box: [-1, 1]
before rescaling to the env's bounds; MultiBinary: each bit). Ends with one line `RESULT {json}` of every eval/ metric
and the mean return's standard error over the episodes (return_sem).
"""

import argparse
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from amago_agent import make_vec_env  # noqa: E402
from common.args import resolve_env_id  # noqa: E402
from common.evaluate import evaluate  # noqa: E402
from common.logs import eval_metrics, print_result  # noqa: E402


class UniformRandom:
    """Duck-types the agent that evaluate() drives: no memory, uniform actions."""

    def __init__(self, space, seed, zero=False):
        self.space, self.rng, self.traj, self.zero = space, np.random.default_rng(seed), self, zero
        self.A = space.n if isinstance(space, gym.spaces.Discrete) else int(np.prod(space.shape))

    training = False  # evaluate() switches the agent's mode around its episodes and restores it

    def eval(self):
        pass

    def train(self, mode=True):
        pass

    def init_hidden(self, n, device):
        return None

    def reset_hidden(self, hidden, done):
        return None

    def get_actions(self, obs, rl2, time_idx, hidden, greedy):
        N = len(time_idx)
        if isinstance(self.space, gym.spaces.Discrete):
            a = self.rng.integers(self.A, size=N)
        elif isinstance(self.space, gym.spaces.Box):
            a = self.rng.uniform(-1.0, 1.0, size=(N, self.A)).astype(np.float32) * (not self.zero)
        else:  # MultiBinary
            a = self.rng.integers(2, size=(N, self.A))
        return torch.as_tensor(a), None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env-id", required=True, help="one env id, or several comma-separated")
    p.add_argument("--env-mode", default="sync", choices=["sync", "async", "already_vectorized"])
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--episodes", type=int, default=64)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=1_000_000, help="vector steps at most")
    p.add_argument("--record", default=None, help="also write the RESULT to this JSON file")
    p.add_argument(
        "--policy",
        default="uniform_random",
        choices=["uniform_random", "zero"],
        help="zero: the Box action 0 at every step (the middle of the Box): holding still, for a body that must move",
    )
    a = p.parse_args()
    env_id = ",".join(resolve_env_id(i) for i in a.env_id.split(","))
    envs = make_vec_env(env_id, a.num_envs, a.env_mode, a.seed)
    space = envs.single_action_space
    if a.policy == "zero" and not isinstance(space, gym.spaces.Box):
        p.error(f"--policy zero is for Box actions; {env_id}'s are {type(space).__name__}")
    if isinstance(space, gym.spaces.Box):
        space = gym.spaces.Box(-1.0, 1.0, space.shape, np.float32)
    start = time.time()
    policy = UniformRandom(space, a.seed, zero=a.policy == "zero")
    returns, names, extra = evaluate(policy, envs, a.episodes, True, "cpu", a.seed, a.max_steps)
    ev = eval_metrics(returns, names, extra)
    envs.close()
    result = {
        "env_id": a.env_id,
        "policy": a.policy,
        "episodes": a.episodes,
        "wall_s": round(time.time() - start, 1),
        "return_sem": round(float(np.std(returns) / np.sqrt(len(returns))), 4),  # the mean return's standard error
    }
    result.update({k: round(float(v), 4) for k, v in ev.items()})
    print_result(result, a.record)


if __name__ == "__main__":
    main()
