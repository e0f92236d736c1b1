"""How often exploration noise alone reaches the Sparse Point Robot's goal: white (the scripts' Box noise) against
pink (benchmarks/probes/pink_noise.py), at AMAGO's per-episode eps ~ U[0, 1) and at fixed eps.

    python benchmarks/probes/point_robot_exploration.py --episodes 1000 --record benchmarks/results/point_robot/point_robot_exploration.json

Each rollout (3 attempts of 60 steps at one goal) plays the action clip(eps * noise_t, -1, 1), scaled to the env's
bounds as the scripts scale actions: an untrained policy's mean of 0 plus the exploration noise, the situation of
the first epochs. Ends with one line `RESULT {json}`: the success rate per attempt for each noise and eps.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.probes.pink_noise import LENGTH, pink_sequences  # noqa: E402
from common.logs import print_result  # noqa: E402
from envs import LOG_PREFIX  # noqa: E402
from envs.point_robot import SparsePointRobot  # noqa: E402


def success_per_attempt(noise, eps, episodes, seed):
    env, rng = SparsePointRobot(), np.random.default_rng(seed)
    high = env.action_space.high
    total = np.zeros(env.k)
    for ep in range(episodes):
        env.reset(seed=seed * 1_000_003 + ep)
        scale = rng.random() if eps is None else eps
        z = rng.standard_normal((LENGTH, 2)) if noise == "white" else pink_sequences(rng, 1, LENGTH, 2)[0]
        done, t, info = False, 0, {}
        while not done:
            _, _, done, _, info = env.step(np.clip(scale * z[t], -1, 1) * high)
            t += 1
        total += [info[f"{LOG_PREFIX} attempt {i} success"] for i in range(env.k)]
    return [round(float(s), 3) for s in total / episodes]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--episodes", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--record", default=None, help="also write the RESULT to this JSON file")
    a = p.parse_args()
    result = {"env_id": "envs:SparsePointRobot-v0", "episodes": a.episodes, "success per attempt": {}}
    for noise in ("white", "pink"):
        for eps in (None, 1.0, 0.5, 0.3, 0.1):
            key = f"{noise}, eps {'U[0,1)' if eps is None else eps}"
            result["success per attempt"][key] = success_per_attempt(noise, eps, a.episodes, a.seed)
    print_result(result, a.record)


if __name__ == "__main__":
    main()
