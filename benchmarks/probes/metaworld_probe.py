"""Where a Meta-World reach agent finds its goal: in the observation (the puck), or in the attempts before.

    OMP_NUM_THREADS=1 python benchmarks/probes/metaworld_probe.py --run-dir benchmarks/out/NAME/runs/NAME --episodes 64
    python benchmarks/probes/metaworld_probe.py --ceiling [--steps 40] [--success-bonus 10]   # hand-written controllers

Loads runs/<run>/checkpoint.pt with the run's saved flags (flags.json) and evaluates it, greedy and sampled, on
versions of its own env (ML1 reach, 3 attempts; `MetaWorld-ML1-reach-Steps50-v0`, its `-NoPuck-` version, or
`MetaWorld-ML1-reach-Steps{40,30}-NoPuck-v0`, `MetaWorld-ML1-reach-Steps30-NoPuck-Bonus-v0`):
- same: the env it trained on.
- fixed_puck (full observation only): the puck's x, y held at the 50 train tasks' mean, so the observation no
  longer names the task; the agent has its search and what it saw in earlier attempts.
- swapped: the first attempt at another train goal (with that goal's puck), the next two at the rollout's own goal.
  What the agent carries over from the first attempt now points the wrong way: an agent that remembers loses
  success in attempts 2 and 3 against `same`, an agent that ignores its earlier attempts does not.
- test: the 50 held-out test goals (other puck positions, other goals).
Every probe plays the same number of rollouts from the same eval seed. Prints success and return per attempt for
each probe and policy, and ends with one line `RESULT {json}`, also written to --record.

--ceiling plays one attempt (`--steps`, 50) at each of the 50 train goals with four hand-written controllers:
`straight` knows the goal and drives the hand at it, (goal - hand) * 100 clipped to [-1, 1]; `search` knows only this
attempt's rewards: it moves along x, y and z for a step each, then along the least-squares fit of the last 4 steps'
reward changes to the hand's moves (Meta-World's reward rises as the hand nears the goal), and holds still once the
reward is above 9.5 (of 10); `steer` knows only this attempt's rewards too, and uses the goals' layout: every train
goal lies 20-30 cm from the hand along +y, at most 10 cm along x and about 14 cm along z, and the action moves each
axis by at most a step's reach, so it drives +y at full speed while the fitted reward rises along it and steers x and z
by the fit; `aim` is `straight` aimed at the point between the fingers, from which Meta-World measures the reach (the
observed hand is the hand's body, about 4.5 cm away). Each plays with the gripper action held at 0 (the fingers as they
start) and at 1 (`_closed`). Prints success, steps to success and return for each.
"""

import argparse
import importlib
import itertools
import json
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
import tyro

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from common.args import resolve_env_id, restore_flags  # noqa: E402
from common.evaluate import evaluate  # noqa: E402
from common.logs import eval_metrics, print_result  # noqa: E402
from common.scale import load_weights  # noqa: E402
from envs.kshot import KShot  # noqa: E402
from envs.metaworld_env import MetaWorldTasks  # noqa: E402

PUCK = [4, 5, 22, 23]  # the puck's x, y now and a step earlier in the full observation (its z never changes)


class ProbeTasks(MetaWorldTasks):
    """ML1 reach in attempts of `steps`; `swap`: the first attempt at another goal; `fix_puck`: the puck's x, y held."""

    def __init__(self, split, hide_objects, steps, swap=False, fix_puck=False, success_bonus=0.0):
        if fix_puck and hide_objects:
            raise ValueError("fix_puck needs the full observation: with hide_objects there is no puck to hold")
        self.swap, self.fix_puck, self.resets = swap, fix_puck, 0
        super().__init__("reach-v3", split, steps, hide_objects, success_bonus)
        if fix_puck:
            firsts = []
            for task in self.tasks["reach-v3"]:
                self.env.set_task(task)
                firsts.append(self.env.reset()[0][PUCK])
            self.puck = np.mean(firsts, 0).astype(np.float32)  # (4,)

    def reset_task(self, rng):
        super().reset_task(rng)
        tasks = self.tasks["reach-v3"]
        i = int(rng.integers(len(tasks)))  # the rollout's own goal
        self.own = tasks[i]
        other = tasks[(i + 1 + int(rng.integers(len(tasks) - 1))) % len(tasks)]  # any other goal of the split
        self.env.set_task(other if self.swap else self.own)
        self.resets = 0

    def reset(self, *, seed=None, options=None):
        self.resets += 1
        if self.swap and self.resets == 2:  # attempts 2 and 3 at the rollout's own goal
            self.env.set_task(self.own)
        obs, info = super().reset(seed=seed, options=options)
        return self.fixed(obs), info

    def step(self, action):
        obs, *rest = super().step(action)
        return (self.fixed(obs), *rest)

    def fixed(self, obs):
        if self.fix_puck:
            obs = obs.copy()
            obs[PUCK] = self.puck
        return obs


class Probe(KShot):
    def __init__(self, probe, split, hide_objects, steps, success_bonus=0.0):
        swap, fix_puck = probe == "swapped", probe == "fixed_puck"
        tasks = ProbeTasks(split, hide_objects, steps, swap, fix_puck, success_bonus)
        super().__init__(tasks, 3)
        self.probe = probe

    @property
    def env_name(self):
        return self.probe


# --ceiling's hand-written controllers: (hand positions so far (t+1, 3), rewards so far (t,), goal (3,)) -> the
# hand's move (3,); only `straight` reads the goal
def straight(hands, rewards, goal):
    return np.clip((goal - hands[-1]) * 100, -1, 1)


def fit(hands, rewards):  # the reward's gradient: least squares of the last 4 steps' reward changes to the moves
    moves, gains = np.diff(hands[1:], axis=0)[-4:], np.diff(rewards)[-4:]  # (4, 3), (4,)
    return np.linalg.lstsq(moves, gains, rcond=None)[0]  # (3,)


def search(hands, rewards, goal):
    t = len(rewards)
    if t < 3:
        return np.eye(3)[t]
    w = fit(hands, rewards)
    if rewards[-1] > 9.5 or not np.abs(w).max() > 0:
        return np.zeros(3)
    return w / np.abs(w).max()


def steer(hands, rewards, goal):
    t = len(rewards)
    if t < 3:  # probes that all move along +y, where every train goal lies farthest from the hand
        return np.array([(1.0, 1.0, 1.0), (-1.0, 1.0, -1.0), (1.0, 1.0, -1.0)][t])
    w = fit(hands, rewards)  # a fit of exactly 0 (no reward change in 4 steps) stops the hand
    a = np.clip(w / np.abs(w).max() * 4, -1, 1) if np.abs(w).max() > 0 else np.zeros(3)
    if w[1] > 0:  # the action is clipped per axis: y at full speed costs x and z nothing
        a[1] = 1.0
    return a


CONTROLLERS = {"straight": straight, "search": search, "steer": steer}


def attempt(env, policy, gripper=0.0, hide_goal=False):
    """One attempt of env (a MetaWorldTasks at its task) -> (the step of first success or None, return). gripper: the
    fingers' action, held (0: as they start, 1: closed); hide_goal: the policy gets NaN for the goal."""
    obs, _ = env.reset()
    goal = np.full(3, np.nan) if hide_goal else env.goal
    hands, rewards, first = [obs[:3]], [], None
    for t in range(env.max_steps):
        obs, r, _, _, info = env.step(np.append(policy(np.array(hands), np.array(rewards), goal), gripper))
        hands.append(obs[:3])
        rewards.append(r)
        first = t + 1 if first is None and info["success"] else first
    return first, float(np.sum(rewards))


def aim(env):
    """`straight` at the point between the fingers (`tcp_center`), from which Meta-World measures the reach: the
    observed hand is the hand's body, about 4.5 cm from that point."""
    return lambda hands, rewards, goal: straight(hands, rewards, goal - (env.env.tcp_center - hands[-1]))


def ceiling(steps, record, success_bonus=0.0):
    env = MetaWorldTasks("reach-v3", "train", steps, success_bonus=success_bonus)
    result = {}
    for (name, policy), gripper in itertools.product({**CONTROLLERS, "aim": aim(env)}.items(), (0.0, 1.0)):
        name = name if gripper == 0 else f"{name}_closed"
        reached, rets = [], []
        for task in env.tasks["reach-v3"]:
            env.env.set_task(task)
            first, ret = attempt(env, policy, gripper)
            reached.append(first)
            rets.append(ret)
        hit = [s for s in reached if s is not None]  # steps to success of the goals reached
        result[name] = {
            "success": round(len(hit) / len(reached), 3),
            "steps_to_success": [min(hit), max(hit)] if hit else None,
            "return": round(float(np.mean(rets)), 1),
        }
        print(f"{name:>15}: {json.dumps(result[name])}", flush=True)
    print_result({"steps": steps, "success_bonus": success_bonus, **result}, record)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ceiling", action="store_true", help="only the hand-written controllers, no run")
    p.add_argument("--run-dir", default=None, help="a run's folder: runs/<run> with checkpoint.pt and flags.json")
    p.add_argument("--load-from", default=None, help="weights (default <run-dir>/checkpoint.pt)")
    p.add_argument("--episodes", type=int, default=64, help="rollouts (of 3 attempts) per probe and policy")
    p.add_argument("--record", default=None, help="also write the RESULT to this JSON file")
    p.add_argument("--steps", type=int, default=None, help="--ceiling's attempt length (default 50)")
    p.add_argument("--success-bonus", type=float, default=None, help="--ceiling's reward per step of success (0)")
    a = p.parse_args()
    if a.ceiling:
        return ceiling(a.steps or 50, a.record, a.success_bonus or 0.0)
    if a.run_dir is None:
        p.error("--run-dir is required (or --ceiling)")
    if a.steps is not None or a.success_bonus is not None:
        p.error("--steps and --success-bonus are --ceiling's; a run's probe plays its env's own")
    run_dir = Path(a.run_dir)
    saved = json.loads((run_dir / "flags.json").read_text())
    mod = importlib.import_module(Path(saved.get("exp_name", "amago_agent")).stem)
    args = restore_flags(tyro.cli(mod.Args, args=[]), run_dir, [])
    env_id = resolve_env_id(args.env_id)
    spec = gym.registry[env_id]  # registered by resolve_env_id's import of the id's module
    kw = spec.kwargs if spec.entry_point == "envs.metaworld_env:MetaWorld" else {}
    if kw.get("name") != "reach-v3" or kw.get("split", "train") != "train" or kw.get("max_steps", 500) > 50:
        sys.exit(f"{run_dir} trained on {env_id}: this probe reads ML1 reach runs on its train goals in short attempts")
    hide, steps, bonus = kw.get("hide_objects", False), kw["max_steps"], kw.get("success_bonus", 0.0)
    probes = ["same", "swapped", "test"] if hide else ["same", "fixed_puck", "swapped", "test"]
    for probe in probes:
        split = "test" if probe == "test" else "train"
        gym.register(
            f"Probe-{probe}-v0", entry_point=lambda probe=probe, split=split: Probe(probe, split, hide, steps, bonus)
        )
    torch.manual_seed(args.seed)
    seed = args.seed + 10_000  # the eval seed of a run's evaluations
    result = {"run": run_dir.name, "env_id": env_id, "episodes": a.episodes}
    start, agent = time.time(), None
    for probe in probes:
        envs = mod.make_vec_env(f"Probe-{probe}-v0", args.num_envs, "sync", seed)
        if agent is None:
            agent = mod.Agent(args, envs.single_observation_space["obs"], envs.single_action_space)
            load_weights(a.load_from or run_dir / "checkpoint.pt", agent)
        for policy, greedy in (("greedy", True), ("sampled", False)):
            metrics = eval_metrics(*evaluate(agent, envs, a.episodes, greedy, "cpu", seed))
            row = {
                m: [round(float(metrics[f"eval/{probe}/attempt {i} {m}"]), 3) for i in range(3)]
                for m in ("success", "return")
            }
            result[f"{probe}/{policy}"] = row
            print(f"{probe:>10} {policy:>7}: success {row['success']}  return {row['return']}", flush=True)
        envs.close()
    result["wall_s"] = round(time.time() - start, 1)
    print_result(result, a.record)


if __name__ == "__main__":
    main()
