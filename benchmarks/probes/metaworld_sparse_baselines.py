"""Sparse Meta-World reach's baselines, per attempt: the dashed lines of its plot and its results row.

    R=suites_metaworld_reach50_sparse_cpu; python benchmarks/probes/metaworld_sparse_baselines.py \
        --record benchmarks/results/$R/${R}_baselines.json
    R=suites_metaworld_reach50_sparse10cm_cpu; python benchmarks/probes/metaworld_sparse_baselines.py \
        --env-id envs:MetaWorld-ML1-reach-Steps50-NoPuck-Sparse10cm-v0 --record benchmarks/results/$R/${R}_baselines.json

envs:MetaWorld-ML1-reach-Steps50-NoPuck-Sparse-v0 (envs/metaworld_env.py): 3 attempts of 50 steps at one of ML1's 50
train goals, reward 1 per step while the point between the fingers is within the goal's 5-cm success radius
(`…-Sparse10cm-v0`: 1 - d / 10 cm within 10 cm). The goals fill a box 19 cm wide (x), 10 cm deep (y) and 24 cm high
(z), 20-30 cm ahead of the hand, and the hand moves ~0.65 cm per axis per step: it reaches the box after ~35 of its 50
steps, so one attempt searches a small part of it. The three searches below are two-waypoint paths through the box,
chosen greedily (on a grid of waypoints, by a kinematic model of the hand) so that each reaches as many of the goals
the ones before missed as it can. Scripted on all 50 goals:
- `aim`: knows the goal and drives straight at it (the ceiling: what a perfect memory earns in every attempt);
- `sweep`: memory-free, follows the first search path until the reward appears, then stays near the goal (holds, or
  climbs a graded reward: `attempt`), in every attempt alike;
- `search_then_return`: follows search path k in attempt k until the reward appears, then, in every later attempt,
  drives straight to its best point so far: what remembering where it searched and what it found is worth;
- `drift`: what exploration by noise would find if the untrained actor drifted: in each attempt a fixed action,
  tanh(N(0, 0.5^2)) per axis, plus Gaussian noise of a scale drawn from U[0, 1), clipped; `--drifts` rollouts per goal
  (a run's own actions start near a mean of 0, a random walk that goes less far: probes/metaworld_sparse_episodes.py).
Every scripted controller moves the point between the fingers toward its next waypoint at full speed per axis
(Meta-World's actions move the hand by at most ~1 cm per axis per step) and keeps the gripper's action at 0. Ends with
one line `RESULT {json}`: each policy's success and return per attempt, its rollout return and the share of attempts
that got any reward.
"""

import argparse
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks" / "probes")]
from metaworld_probe import fit  # noqa: E402

import envs  # noqa: E402, F401  (registers the env ids)
from common.logs import print_result  # noqa: E402
from envs.metaworld_env import MetaWorldTasks  # noqa: E402

ENV_IDS = ("envs:MetaWorld-ML1-reach-Steps50-NoPuck-Sparse-v0", "envs:MetaWorld-ML1-reach-Steps50-NoPuck-Sparse10cm-v0")
HOLD = 0.55  # a reward that says the goal is near: 1 (within 5 cm) for the flat reward, d <= 4.5 cm for 1 - d / 10 cm
# the search paths (x, y, z of the point between the fingers): the box spans x -9.3..9.7, y 80..90, z 5.4..29.5 cm
SEARCHES = (
    [(0.005, 0.82, 0.23), (-0.04, 0.88, 0.06)],  # through the box's middle, top front to bottom back
    [(0.10, 0.82, 0.175), (0.055, 0.85, 0.06)],  # its +x side
    [(-0.04, 0.85, 0.29), (0.005, 0.85, 0.06)],  # its -x side, top to bottom
)
SEARCHES = tuple([np.array(w) for w in path] for path in SEARCHES)


def attempt(env, waypoints):
    """One attempt: follows `waypoints` (for the point between the fingers; None: straight at the goal, known after
    the reset) until the reward appears, then holds where it pays at least HOLD, and climbs it below that: a step
    along x, a step along z (so the moves span all three axes), then along the least-squares fit of the last 4 steps'
    reward changes to the moves. Returns (success, return, the point of the best reward or None)."""
    env.reset()
    todo = list(waypoints if waypoints is not None else [env.goal])
    tcps, rewards, best, found = [env.env.tcp_center.copy()], [], None, None  # found: the step the reward appeared
    for t in range(env.max_steps):
        tcp = tcps[-1]
        while todo and np.abs(todo[0] - tcp).max() < 0.005:
            todo.pop(0)
        if found is None:
            move = (todo[0] - tcp) * 100 if todo else np.zeros(3)
        elif rewards[-1] >= HOLD:
            move = np.zeros(3)
        elif t - found < 2:
            move = np.eye(3)[[0, 2][t - found]]  # the probing steps: x, then z
        else:
            w = fit(np.array(tcps), np.array(rewards))
            move = w / np.abs(w).max() if np.abs(w).max() > 0 else np.zeros(3)
        _, r, _, _, info = env.step(np.append(np.clip(move, -1, 1), 0.0))
        tcps.append(env.env.tcp_center.copy())
        rewards.append(r)
        if r > 0 and found is None:
            found = t + 1
        if r > 0 and r >= max(rewards):
            best = tcps[-1]
    return float(info["success"]), float(np.sum(rewards)), best


def drift(env, rng):
    """One attempt of noise around a fixed action -> (success, return)."""
    env.reset()
    a0, scale, ret = np.tanh(rng.normal(0, 0.5, 3)), rng.uniform(), 0.0
    for _ in range(env.max_steps):
        _, r, _, _, info = env.step(np.append(np.clip(a0 + scale * rng.normal(0, 1, 3), -1, 1), 0.0))
        ret += r
    return float(info["success"]), ret


def rollout(env, policy, k=3, rng=None):
    """k attempts at env's current goal -> [(success, return)] per attempt."""
    if policy == "drift":
        return [drift(env, rng) for _ in range(k)]
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
    p.add_argument("--env-id", default="envs:MetaWorld-ML1-reach-Steps50-NoPuck-Sparse-v0", choices=ENV_IDS)
    p.add_argument("--drifts", type=int, default=4, help="`drift` rollouts per goal")
    p.add_argument("--record", default=None, help="also write the RESULT to this JSON file")
    a = p.parse_args()
    rng = np.random.default_rng(1)
    kw = dict(gym.registry[a.env_id.removeprefix("envs:")].kwargs)
    kw.pop("k", None)
    env = MetaWorldTasks(**{**kw, "split": "train"})
    result = {"env_id": a.env_id, "goals": len(env.tasks["reach-v3"])}
    for policy in ("aim", "sweep", "search_then_return", "drift"):
        runs = []
        for task in env.tasks["reach-v3"]:
            env.env.set_task(task)  # the goal: every reset() keeps it
            runs += [rollout(env, policy, rng=rng) for _ in range(a.drifts if policy == "drift" else 1)]
        runs = np.array(runs)  # (rollouts, attempts, 2): success, return
        stats = {"rollouts": len(runs)}
        for i in range(runs.shape[1]):
            stats[f"attempt {i} success"] = round(float(runs[:, i, 0].mean()), 3)
            stats[f"attempt {i} return"] = round(float(runs[:, i, 1].mean()), 2)
        stats["return"] = round(float(runs[:, :, 1].sum(1).mean()), 2)
        stats["attempts rewarded"] = round(float((runs[:, :, 1] > 0).mean()), 4)  # the reward found at all
        result[policy] = stats
        print(policy, stats, flush=True)
    print_result(result, a.record)


if __name__ == "__main__":
    main()
