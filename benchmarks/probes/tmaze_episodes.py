"""What a T-Maze run's training episodes did, counted in its replay files (benchmarks/out/<run>/buffers).

    python benchmarks/probes/tmaze_episodes.py memory_revisit_tmaze_h500_s2 --record
    python benchmarks/probes/tmaze_episodes.py memory_revisit_tmaze_h500_s2_resumed --new-only --record

For each episode (one file: T-Maze runs save whole episodes, --traj-save-len >= H + 1): whether it stood at the
junction at step H (on time), stood on a goal cell at its end (turned), and was rewarded (final reward >= 0.5), and
the share of "right" among its first H actions (the corridor walk, which needs H of them in a row). Episodes are taken
in the order they were written and split into sixths. --new-only keeps the episodes a run continued with
`run.py --resume-from` wrote itself (the copied buffer holds the earlier run's too). Prints one line `RESULT {json}`;
--record also writes it to benchmarks/results/<recipe>/<run>_episodes.json (<recipe>: the run's recorded result).
"""

import argparse
import json
import os
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # envs: the `envs:<id>` ids import it
RESULTS = ROOT / "benchmarks" / "results"


def horizon(env_id):
    """The corridor length H of a T-Maze env id, as the env registered under it has it."""
    env = gym.make(env_id).unwrapped
    if not hasattr(env, "H"):
        raise SystemExit(f"{env_id!r} is not a T-Maze env id")
    return env.H


def episodes(out, H, new_only):
    """(minutes since the run's start, on time, turned, rewarded, right share of the first H actions) per file."""
    flags = next(out.glob("runs/*/flags.json"))
    start = flags.stat().st_mtime  # written when the run starts (run.py rewrites a continued run's copy then)
    files = sorted(out.glob("buffers/**/*.npz"), key=os.path.getmtime)
    rows = []
    for f in files:
        if new_only and f.stat().st_mtime <= start:
            continue
        d = np.load(f)
        obs, actions, rewards = d["obs_observation"], d["actions"].argmax(-1), d["rewards"]
        if len(actions) < H + 1:
            raise SystemExit(f"{f} holds {len(actions)} steps, less than a whole episode (H + 1 = {H + 1})")
        on_time = bool(obs[H, 0] == 1)  # obs[:, 0] is 1 at the junction and the goal cells
        turned = bool(obs[-1, 0] == 1 and abs(obs[-1, 1]) == 1)
        rows.append(
            ((f.stat().st_mtime - start) / 60, on_time, turned, bool(rewards[-1] >= 0.5), (actions[:H] == 0).mean())
        )
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("run", help="a run name under benchmarks/out/ with a recorded result")
    p.add_argument("--new-only", action="store_true", help="only the episodes of a continued run's own minutes")
    p.add_argument("--record", action="store_true", help="write <run>_episodes.json beside the run's recorded result")
    a = p.parse_args()
    recorded = next(RESULTS.glob(f"*/{a.run}.json"), None)
    if recorded is None:
        raise SystemExit(f"no recorded result named {a.run} under {RESULTS}")
    result = json.loads(recorded.read_text())
    H = horizon(result["env_id"])
    rows = episodes(ROOT / "benchmarks" / "out" / a.run, H, a.new_only)
    if not rows:
        raise SystemExit(f"no episode files in benchmarks/out/{a.run}/buffers")
    offset = 0.0
    if a.new_only:  # minutes go on from the earlier run's, as run.py's curve of a continued run
        offset = json.loads((recorded.parent / f"{result['resumed_from']}.json").read_text())["wall_s"] / 60
    minutes, on_time, turned, rewarded, right = (np.array(c) for c in zip(*rows))
    sixths = np.array_split(np.arange(len(rows)), 6) if len(rows) >= 6 else [np.arange(len(rows))]
    out = {
        "run": a.run,
        "H": H,
        "new_only": a.new_only,
        "episodes": len(rows),
        "on_time": int(on_time.sum()),
        "turned": int(turned.sum()),
        "rewarded": int(rewarded.sum()),
        "first_minute": {
            k: round(float(minutes[v][0] + offset), 1) if v.any() else None
            for k, v in (("on_time", on_time), ("turned", turned), ("rewarded", rewarded))
        },
        "right_share": round(float(right.mean()), 3),
        "median_other_actions": float(np.median(np.round((1 - right) * H))),
        "right_share_by_sixth": [round(float(right[s].mean()), 3) for s in sixths],
        "median_other_actions_by_sixth": [float(np.median(np.round((1 - right[s]) * H))) for s in sixths],
        "right_share_last_40": round(float(right[-40:].mean()), 3),
    }
    print("RESULT " + json.dumps(out), flush=True)
    if a.record:
        (recorded.parent / f"{a.run}_episodes.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
