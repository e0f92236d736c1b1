"""How often a Sparse Point Robot run's training rollouts reached the goal, counted in its replay files
(benchmarks/out/<run>/buffers): exploration's hit rate as the run went on.

    python benchmarks/probes/point_robot_episodes.py point_robot_transformer_s1 --record

Each file is one rollout (3 attempts of 60 steps; --traj-save-len above 180 saves them whole). An attempt reached the
goal when it got any reward (reward is 0 outside the goal's radius). Rollouts are taken in the order they were written
and split into sixths; for each sixth: the rollouts, the share of attempts that reached the goal per attempt index, and
the mean return per attempt. Prints one line `RESULT {json}`; --record also writes it to
benchmarks/results/<recipe>/<run>_episodes.json (<recipe>: the run's recorded result's folder).
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from common.logs import print_result  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def attempts(path, k=3):
    """(k,) rewards per attempt of one rollout file of a KShot env (envs/kshot.py: its observation ends with the
    soft-reset flag and the attempt index): attempts split where the flag is 1."""
    f = np.load(path)
    flags, rewards = (
        f["obs_observation"][1:, -2],
        f["rewards"],
    )  # obs t+1 follows reward t: flag 1 after an attempt's last step
    ends = np.flatnonzero(flags == 1.0)
    bounds = np.concatenate([[0], ends + 1])[: k + 1]
    return np.array([rewards[a:b].sum() for a, b in zip(bounds[:-1], bounds[1:])])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("run", help="a run under benchmarks/out/")
    p.add_argument("--record", action="store_true")
    a = p.parse_args()
    out = ROOT / "benchmarks" / "out" / a.run
    files = sorted(out.glob("buffers/**/*.npz"), key=os.path.getmtime)
    rows = np.array([attempts(f) for f in files if np.load(f)["rewards"].shape[0] >= 180])  # whole rollouts only
    if not len(rows):
        raise SystemExit(f"error: no whole rollout in {out}/buffers")
    sixths = []
    for part in np.array_split(rows, 6):
        sixths.append(
            {
                "rollouts": len(part),
                "reached per attempt": [round(float(x), 3) for x in (part > 0).mean(0)],
                "return per attempt": [round(float(x), 2) for x in part.mean(0)],
            }
        )
    result = {"run": a.run, "rollouts": len(rows), "sixths": sixths}
    recorded = next(RESULTS.glob(f"*/{a.run}.json"), None)
    print_result(result, recorded.with_name(f"{a.run}_episodes.json") if a.record and recorded else None)


if __name__ == "__main__":
    main()
