"""Sparse Meta-World reach's baselines, per attempt: the dashed lines of its plot and its results row.

    python benchmarks/probes/metaworld_sparse_baselines.py --record benchmarks/results/suites_metaworld_reach50_sparse_cpu/suites_metaworld_reach50_sparse_cpu_baselines.json

envs:MetaWorld-ML1-reach-Steps50-NoPuck-Sparse-v0 (envs/metaworld_env.py): 3 attempts of 50 steps at one of ML1's 50
train goals, reward 1 per step while the point between the fingers is within the goal's 5-cm success radius. The goals
fill a box 19 cm wide (x), 10 cm deep (y) and 24 cm high (z), 20-30 cm ahead of the hand, and the hand moves ~0.65 cm
per axis per step: it reaches the box after ~35 of its 50 steps, so one attempt searches a small part of it. The three
searches below are two-waypoint paths through the box, chosen greedily (on a grid of waypoints, by a kinematic model of
the hand) so that each reaches as many of the goals the ones before missed as it can. Scripted on all 50 goals:
- `aim`: knows the goal and drives straight at it (the ceiling: what a perfect memory earns in every attempt);
- `sweep`: memory-free, follows the first search path and stops where the reward appears, in every attempt alike;
- `search_then_return`: follows search path k in attempt k until the reward appears, then, in every later attempt,
  drives straight to where it appeared: what remembering where it searched and what it found is worth.
Every controller moves the point between the fingers toward its next waypoint at full speed per axis (Meta-World's
actions move the hand by at most ~1 cm per axis per step) and keeps the gripper's action at 0. Ends with one line
`RESULT {json}`: each policy's success and return per attempt, and its rollout return.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from common.logs import print_result  # noqa: E402
from envs.metaworld_env import MetaWorldTasks  # noqa: E402

ENV_ID = "envs:MetaWorld-ML1-reach-Steps50-NoPuck-Sparse-v0"
# the search paths (x, y, z of the point between the fingers): the box spans x -9.3..9.7, y 80..90, z 5.4..29.5 cm
SEARCHES = (
    [(0.005, 0.82, 0.23), (-0.04, 0.88, 0.06)],  # through the box's middle, top front to bottom back
    [(0.10, 0.82, 0.175), (0.055, 0.85, 0.06)],  # its +x side
    [(-0.04, 0.85, 0.29), (0.005, 0.85, 0.06)],  # its -x side, top to bottom
)
SEARCHES = tuple([np.array(w) for w in path] for path in SEARCHES)


def attempt(env, waypoints, stop_on_reward=True):
    """One attempt following `waypoints` (for the point between the fingers); stops where the reward appears if
    stop_on_reward; None: straight at the goal (known after the reset). Returns (success, return, the point where the reward first appeared or None)."""
    env.reset()
    todo, ret, found = list(waypoints if waypoints is not None else [env.goal]), 0.0, None
    for _ in range(env.max_steps):
        tcp = env.env.tcp_center.copy()
        while todo and np.abs(todo[0] - tcp).max() < 0.005:
            todo.pop(0)
        move = np.zeros(3) if not todo or (found is not None and stop_on_reward) else (todo[0] - tcp) * 100
        _, r, _, _, info = env.step(np.append(np.clip(move, -1, 1), 0.0))
        ret += r
        if r > 0 and found is None:
            found = env.env.tcp_center.copy()
    return float(info["success"]), ret, found


def rollout(env, policy, k=3):
    """k attempts at env's current goal -> [(success, return)] per attempt."""
    out, found = [], None
    for i in range(k):
        if policy == "aim":
            path = None
        elif policy == "sweep":
            path = SEARCHES[0]
        else:  # search_then_return: search i until found, then straight to the find
            path = [found] if found is not None else SEARCHES[i % len(SEARCHES)]
        success, ret, hit = attempt(env, path)
        found = found if found is not None else hit
        out.append((success, ret))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--record", default=None, help="also write the RESULT to this JSON file")
    a = p.parse_args()
    env = MetaWorldTasks("reach-v3", "train", 50, hide_objects=True, sparse=True)
    result = {"env_id": ENV_ID, "goals": len(env.tasks["reach-v3"])}
    for policy in ("aim", "sweep", "search_then_return"):
        runs = []
        for task in env.tasks["reach-v3"]:
            env.env.set_task(task)  # the goal: every reset() keeps it
            runs.append(rollout(env, policy))
        runs = np.array(runs)  # (goals, attempts, 2): success, return
        stats = {}
        for i in range(runs.shape[1]):
            stats[f"attempt {i} success"] = round(float(runs[:, i, 0].mean()), 3)
            stats[f"attempt {i} return"] = round(float(runs[:, i, 1].mean()), 2)
        stats["return"] = round(float(runs[:, :, 1].sum(1).mean()), 2)
        result[policy] = stats
        print(policy, stats, flush=True)
    print_result(result, a.record)


if __name__ == "__main__":
    main()
