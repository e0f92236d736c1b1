"""The best return a policy WITHOUT memory gets on a T-Maze: the dashed baseline of the T-Maze plots.

    python benchmarks/probes/tmaze_memoryless.py --env-id envs:TMazePassive-H100-v0 --episodes 4000

Without memory the cue, shown only in the first observation, is gone at the junction, where every observation looks
the same for both goals. The best such policy walks right (no penalty) and turns up or down at random: success 0.5 in
expectation. This script plays that policy on the env id (through gymnasium, the wrappers of `envs/` included) and
ends with one line `RESULT {json}`: the mean return, its standard error and the success rate.
"""

import argparse
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from common.args import resolve_env_id  # noqa: E402
from common.logs import print_result  # noqa: E402

RIGHT, UP, DOWN = 0, 1, 3  # envs/tmaze.py's actions


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env-id", required=True, help="envs:TMazePassive[-H<n>]-v0 or envs:TMazeActive-v0")
    p.add_argument("--episodes", type=int, default=4000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--record", default=None, help="also write the RESULT to this JSON file")
    a = p.parse_args()
    env = gym.make(resolve_env_id(a.env_id))
    rng = np.random.default_rng(a.seed)
    returns, successes = [], []
    for ep in range(a.episodes):
        obs, _ = env.reset(seed=a.seed * 1_000_003 + ep)
        done, ret, info = False, 0.0, {}
        while not done:
            at_junction = obs[0] == 1  # [1, y]: the junction; the cue is not in view there
            act = int(rng.choice([UP, DOWN])) if at_junction else RIGHT
            obs, r, term, trunc, info = env.step(act)
            done, ret = term or trunc, ret + float(r)
        returns.append(ret)
        successes.append(next(v for k, v in info.items() if k.endswith(" success")))
    result = {
        "env_id": a.env_id,
        "policy": "best_memoryless",
        "episodes": a.episodes,
        "return": round(float(np.mean(returns)), 4),
        "return_sem": round(float(np.std(returns) / np.sqrt(len(returns))), 4),
        "success": round(float(np.mean(successes)), 4),
    }
    print_result(result, a.record)


if __name__ == "__main__":
    main()
