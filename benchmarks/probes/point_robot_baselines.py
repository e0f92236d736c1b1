"""The Sparse Point Robot's baselines, per attempt: the dashed lines of its plot and its results row.

    python benchmarks/probes/point_robot_baselines.py --episodes 1000 --record benchmarks/results/point_robot/point_robot_baselines.json

Three scripted policies (envs/point_robot.py) on envs:SparsePointRobot-v0's default task (3 attempts of 60 steps):
- `random`: uniform random steps, what exploration by noise alone finds;
- `sweep`: memory-free, walks out to the circle and along it until the reward appears, then stays (it reads only the
  position and the previous reward), so it searches again in every attempt;
- `search_then_return`: the same search in the first attempt, then straight to where it found the reward in every
  later attempt: what remembering the goal is worth.
Ends with one line `RESULT {json}`: each policy's mean return per attempt, success per attempt and rollout return.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from common.logs import print_result  # noqa: E402
from envs.point_robot import scripted_returns  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--episodes", type=int, default=1000, help="rollouts (tasks) per policy")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--record", default=None, help="also write the RESULT to this JSON file")
    a = p.parse_args()
    result = {"env_id": "envs:SparsePointRobot-v0", "episodes": a.episodes}
    for policy in ("random", "sweep", "search_then_return"):
        out = scripted_returns(policy, episodes=a.episodes, seed=a.seed)
        result[policy] = {k: round(v, 3) for k, v in out.items()}
    print_result(result, a.record)


if __name__ == "__main__":
    main()
