"""How a policy behaves in a grid world, episode by episode: the evidence for why a greedy (argmax) policy can score
below the uniform-random one in XLand-MiniGrid and BabyAI.

    OMP_NUM_THREADS=1 python benchmarks/probes/greedy_probe.py --run-name x1 --trials 64
    OMP_NUM_THREADS=1 python benchmarks/probes/greedy_probe.py --script amago_multitask.py --run-name b1 --trials 96

Loads runs/<run>/checkpoint.pt with the run's saved flags (runs/<run>/flags.json), builds its eval envs, and plays
the same eval episodes (the same seed) with four policies: the checkpoint's argmax action ("greedy"), an action
sampled from its distribution ("sampled"), the untrained agent's argmax ("untrained_greedy", the same flags and seed
at initialization) and the uniform-random policy ("random"). Per episode (an XLand attempt, a BabyAI episode) it
records, from the env's own state: the distinct cells the agent stood on, the distinct (cell, heading) poses, the
longest run of one repeated action, the fraction of steps after which the observation was unchanged (a move into a
wall, a turn that reveals nothing new, a pick-up of nothing), the fraction of steps the agent carried an object, the
return, success, and the episode's length; XLand also reports the return per attempt of a trial and per trial.
Ends with one line `RESULT {json}` (means per policy), also written to --record.
"""

import argparse
import importlib
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
import tyro

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from common.args import resolve_env_ids, restore_flags  # noqa: E402
from common.evaluate import obs_to_torch  # noqa: E402
from common.logs import print_result  # noqa: E402
from common.scale import load_weights  # noqa: E402


def longest_run(actions):
    best = run = 1
    for a, b in zip(actions, actions[1:]):
        run = run + 1 if a == b else 1
        best = max(best, run)
    return best if actions else 0


class GridState:
    """The agent's cell, heading and whether it carries something, for every actor of an eval vec env."""

    def __init__(self, envs):
        inner = envs.env.unwrapped if hasattr(envs, "env") else None  # already_vectorized: the env of all actors
        self.xland = inner is not None and hasattr(inner, "k")  # envs.xland.XLandVecEnv (k attempts per trial)
        self.inner = inner if self.xland else [e.unwrapped for e in envs.envs]

    def read(self):  # -> [(cell, heading, carrying, attempt or None)] per actor
        if self.xland:
            agent = self.inner.ts.state.agent
            pos, heading, pocket = (np.array(x) for x in (agent.position, agent.direction, agent.pocket))
            attempt = np.array(self.inner.attempt)
            return [(tuple(p), int(d), bool(k[0] != 0), int(a)) for p, d, k, a in zip(pos, heading, pocket, attempt)]
        out = []
        for e in self.inner:
            g = e.env  # envs.babyai.BabyAI's current minigrid level
            out.append((tuple(int(x) for x in g.agent_pos), int(g.agent_dir), g.carrying is not None, None))
        return out


def flat_obs(obs, i):
    return np.concatenate([np.asarray(v[i], np.float64).ravel() for v in obs["obs"].values()])


@torch.no_grad()
def play(policy, envs, trials, seed, greedy, rng):
    """Plays every actor until `trials` env episodes (XLand: trials of k attempts) have ended; returns the list of
    attempt records and the list of trial returns."""
    N = envs.num_envs
    state = GridState(envs)
    obs, _ = envs.reset(seed=seed)
    hidden = None if policy is None else policy.traj.init_hidden(N, "cpu")
    new = lambda: {"cells": set(), "poses": set(), "actions": [], "same": 0, "carry": 0, "ret": 0.0}
    cur = [new() for _ in range(N)]
    attempts, trial_returns, trial_ret, done_trials = [], [], np.zeros(N), np.zeros(N, int)
    per_actor = -(-trials // N)
    while (done_trials < per_actor).any():
        s = state.read()
        if policy is None:
            a = torch.as_tensor(rng.integers(envs.single_action_space.n, size=N))
        else:
            a, hidden = policy.get_actions(*obs_to_torch(obs, "cpu"), hidden, greedy=greedy)
        a = a.cpu().numpy()
        nxt, rew, term, trunc, info = envs.step(a)
        done = term | trunc
        after = [info["final_obs"][i] if done[i] else None for i in range(N)]
        for i in range(N):
            c = cur[i]
            cell, heading, carrying, attempt = s[i]
            c["cells"].add(cell)
            c["poses"].add((cell, heading))
            c["actions"].append(int(a[i]))
            c["carry"] += carrying
            c["ret"] += float(rew[i])
            c["attempt"] = attempt
            o_next = flat_obs({"obs": after[i]["obs"]}, slice(None)) if done[i] else flat_obs(nxt, i)
            c["same"] += bool(np.array_equal(flat_obs(obs, i), o_next))
        # an XLand attempt ends inside the env (its soft-reset flag on the next observation); a trial ends with done
        soft = np.zeros(N, bool)
        if state.xland:
            soft = np.asarray(nxt["obs"]["extra"])[:, 4] > 0
        for i in range(N):
            if (soft[i] or done[i]) and done_trials[i] < per_actor:
                c = cur[i]
                attempts.append(
                    {
                        "attempt": c["attempt"],
                        "return": c["ret"],
                        "success": float(c["ret"] > 0),
                        "length": len(c["actions"]),
                        "cells": len(c["cells"]),
                        "poses": len(c["poses"]),
                        "longest_repeat": longest_run(c["actions"]),
                        "unchanged_frac": c["same"] / len(c["actions"]),
                        "carry_frac": c["carry"] / len(c["actions"]),
                        "action_hist": np.bincount(c["actions"], minlength=envs.single_action_space.n).tolist(),
                    }
                )
            if soft[i] or done[i]:
                trial_ret[i] += cur[i]["ret"]
                cur[i] = new()
            if done[i]:
                if done_trials[i] < per_actor:
                    trial_returns.append(trial_ret[i])
                done_trials[i] += 1
                trial_ret[i] = 0.0
        obs = nxt
        if policy is not None:
            hidden = policy.traj.reset_hidden(hidden, torch.as_tensor(done))
    return attempts, trial_returns


def summary(attempts, trial_returns):
    keys = ("return", "success", "length", "cells", "poses", "longest_repeat", "unchanged_frac", "carry_frac")
    out = {k: round(float(np.mean([a[k] for a in attempts])), 3) for k in keys}
    out["episodes"] = len(attempts)
    out["trial_return"] = round(float(np.mean(trial_returns)), 3)
    hist = np.sum([a["action_hist"] for a in attempts], 0)
    out["action_frac"] = [round(float(x), 3) for x in hist / hist.sum()]
    # episodes that spent more than half their steps on one action in a row: a loop
    out["looping_frac"] = round(float(np.mean([a["longest_repeat"] > a["length"] / 2 for a in attempts])), 3)
    if attempts[0]["attempt"] is not None:
        by = defaultdict(list)
        for a in attempts:
            by[a["attempt"]].append(a["return"])
        out["return_per_attempt"] = [round(float(np.mean(by[k])), 3) for k in sorted(by)]
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--script", default="amago_agent.py", help="the script that trained the run")
    p.add_argument("--run-name", required=True)
    p.add_argument("--load-from", default=None, help="weights (default runs/<run>/checkpoint.pt)")
    p.add_argument("--trials", type=int, default=64, help="env episodes per policy (XLand: trials of k attempts)")
    p.add_argument("--policies", default="greedy,sampled,untrained_greedy,random")
    p.add_argument("--record", default=None, help="also write the RESULT to this JSON file")
    a = p.parse_args()
    mod = importlib.import_module(Path(a.script).stem)
    run_dir = ROOT / "runs" / a.run_name
    args = restore_flags(tyro.cli(mod.Args, args=[]), run_dir, [])
    args.env_id, args.eval_env_id = resolve_env_ids(args)
    torch.manual_seed(args.seed)
    seed = args.seed + 10_000  # the eval seed of --eval-only
    envs = mod.make_vec_env(args.eval_env_id, args.num_envs, args.env_mode, seed)
    space = envs.single_observation_space["obs"]
    trained = mod.Agent(args, space, envs.single_action_space)
    load_weights(a.load_from or run_dir / "checkpoint.pt", trained)
    torch.manual_seed(args.seed)
    untrained = mod.Agent(args, space, envs.single_action_space)
    trained.eval(), untrained.eval()
    pick = {"greedy": (trained, True), "sampled": (trained, False), "untrained_greedy": (untrained, True)}
    pick["random"] = (None, False)
    result = {"run": a.run_name, "env_id": args.eval_env_id, "trials": a.trials}
    start = time.time()
    for name in a.policies.split(","):
        policy, greedy = pick[name]
        torch.manual_seed(args.seed)
        result[name] = summary(*play(policy, envs, a.trials, seed, greedy, np.random.default_rng(args.seed)))
        print(name, json.dumps(result[name]), flush=True)
    envs.close()
    result["wall_s"] = round(time.time() - start, 1)
    print_result(result, a.record)


if __name__ == "__main__":
    main()
