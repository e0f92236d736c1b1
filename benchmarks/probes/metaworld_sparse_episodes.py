"""How far a sparse Meta-World reach run's training rollouts took the hand, and how often they found the reward,
counted in its replay files (benchmarks/out/<run>/buffers): what exploration reached as the run went on.

    python benchmarks/probes/metaworld_sparse_episodes.py suites_metaworld_reach50_sparse10cm_cpu_s1 --record

Each file is one rollout (3 attempts of 50 steps, saved whole). The observation's first 3 numbers are the hand's
position: its y starts at 0.60 m and ML1's 50 train goals lie at y 0.80-0.90, so the farthest y a rollout reached says
whether it got near any goal at all. Rollouts are taken in the order they were written and split into sixths; for each
sixth: the rollouts, the farthest y (median and max over its rollouts), and the share of attempts rewarded. Prints one
line `RESULT {json}`; --record also writes it to benchmarks/results/<recipe>/<run>_episodes.json (<recipe>: the run's
recorded result's folder).
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks" / "probes")]
from point_robot_episodes import attempts  # noqa: E402

from common.logs import print_result  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def rollout(path):
    """One rollout file -> (the hand's farthest y, (k,) whether each attempt got any reward)."""
    return float(np.load(path)["obs_observation"][:, 1].max()), [float(r > 0) for r in attempts(path)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("run", help="the run's name (benchmarks/out/<run>)")
    p.add_argument("--record", action="store_true", help="write benchmarks/results/<recipe>/<run>_episodes.json")
    a = p.parse_args()
    files = sorted(
        (ROOT / "benchmarks" / "out" / a.run / "buffers").glob("*/*/*.npz"), key=lambda f: (os.path.getmtime(f), f.name)
    )
    if not files:
        sys.exit(f"error: no replay files under benchmarks/out/{a.run}/buffers")
    rows = [rollout(f) for f in files]
    result = {"run": a.run, "rollouts": len(rows), "goals_y": [0.80, 0.90], "start_y": 0.60, "sixths": []}
    for part in np.array_split(np.arange(len(rows)), 6):
        ys = [rows[i][0] for i in part]
        found = np.array([rows[i][1] for i in part])
        result["sixths"].append(
            {
                "rollouts": len(part),
                "farthest_y_median": round(float(np.median(ys)), 3),
                "farthest_y_max": round(float(np.max(ys)), 3),
                "attempts_rewarded": round(float(found.mean()), 4),
            }
        )
    record = None
    if a.record:
        recipe = next(RESULTS.glob(f"*/{a.run}.json"), None)
        if recipe is None:
            sys.exit(f"error: no recorded result benchmarks/results/*/{a.run}.json to file this beside")
        record = recipe.parent / f"{a.run}_episodes.json"
    print_result(result, record)


if __name__ == "__main__":
    main()
