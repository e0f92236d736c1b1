"""Does a recorded suite recipe beat the uniform-random policy? One table per recipe, from its result files.

    python benchmarks/probes/suites_vs_random.py suites_xland_cpu suites_babyai_easy

For every seed's RESULT (benchmarks/results/<recipe>/<recipe>_s<seed>.json, written by run.py) and each eval policy
it logged (greedy: eval/return; sampled: eval_sampled/return), the mean and standard deviation of its last three
evals, against the random policy's mean and standard error (<recipe>_random.json, from random_baseline.py). A seed
beats random when the mean of its last three evals exceeds random's mean by more than both their standard deviation
(the eval's spread) and twice random's standard error. Envs that log per-attempt metrics (`attempt i return` /
`attempt i success`) get a second table: each attempt's last-three mean per seed, beside random's. `--metric success`
compares the success rate instead (averaged over the env names; random's standard error: sqrt(p (1 - p) / episodes)).
`--attempt K` compares one attempt's success (K = -1: the last; Meta-World's k-shot envs log success per attempt only)
and also asks whether that attempt beats the first in-context: the per-eval differences (attempt K - attempt 0) of the
last three evals must have a mean above 0 by more than their standard deviation.
"""

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parents[1] / "results"
POLICIES = {"greedy": "eval", "sampled": "eval_sampled"}


def verdict(last, rand_mean, rand_sem):
    """-> (mean, spread, beats): the last evals' mean and sample std, and whether they clear random as above."""
    mean, spread = float(np.mean(last)), float(np.std(last, ddof=1)) if len(last) > 1 else float("inf")
    return mean, spread, mean - rand_mean > max(spread, 2 * rand_sem)


def attempt_index(tags, attempt):
    """The attempt number K of `--attempt K` among the logged tags (negative K counts from the last attempt)."""
    found = sorted({int(m[1]) for t in tags if (m := re.search(r"/attempt (\d+) success$", t))})
    if not found:
        return None
    return found[attempt] if -len(found) <= attempt < len(found) else None


def last_values(evals, prefix, metric, attempt=None):
    """The last evals of `metric`: eval/return as logged, or success averaged over the env names (as eval/return is);
    with `attempt`, that attempt's success averaged over the env names."""
    if metric == "return":
        return evals.get(f"{prefix}/return")
    k = None if attempt is None else attempt_index(evals, attempt)
    name = "success" if attempt is None else f"attempt {k} success"
    per_env = [v for t, v in evals.items() if re.fullmatch(rf"{prefix}/[^/]+/{name}", t)]
    return list(np.mean(per_env, axis=0)) if per_env else None


def table(recipe, metric="return", attempt=None):
    folder = RESULTS / recipe
    rand = json.loads((folder / f"{recipe}_random.json").read_text())
    runs = sorted(folder.glob(f"{recipe}*_s[0-9]*.json"))
    if not runs:
        sys.exit(f"no seed results ({recipe}*_s<seed>.json) in {folder}")
    if metric == "return":
        rand_mean, rand_sem = rand["eval/return"], rand.get("return_sem", 0.0)
    else:  # a success rate's standard error: sqrt(p (1 - p) / episodes)
        rand_mean = float(np.mean(last_values({k: [v] for k, v in rand.items()}, "eval", metric, attempt)))
        rand_sem = float(np.sqrt(rand_mean * (1 - rand_mean) / rand["episodes"]))
    which = metric if attempt is None else f"attempt {attempt_index(rand, attempt)} success"
    print(
        f"\n{recipe}, {which}: uniform random {rand_mean:.3f} ± {rand_sem:.3f} (standard error, {rand['episodes']} episodes)"
    )
    print("| run | policy | minutes | updates | env steps | last 3 evals | mean ± sd | beats random |")
    print("|---|---|---:|---:|---:|---|---|---|")
    all_beat, attempts, gains = {}, {}, []  # policy -> every seed beats random
    for path in runs:
        r = json.loads(path.read_text())
        for policy, prefix in POLICIES.items():
            last = last_values(r.get("last_evals", {}), prefix, metric, attempt)
            if not last:
                continue
            mean, spread, beats = verdict(last, rand_mean, rand_sem)
            if attempt is not None:  # in-context: this attempt against the first, eval by eval
                first = last_values(r["last_evals"], prefix, metric, 0)
                gain = verdict(np.subtract(last, first), 0.0, 0.0)
                gains.append(
                    f"| {r['name']} | {policy} | {gain[0]:+.2f} ± {gain[1]:.2f} | {'yes' if gain[2] else 'no'} |"
                )
                beats = beats and gain[2]
            all_beat[policy] = all_beat.get(policy, True) and beats
            shown = " ".join(f"{v:.2f}" for v in last)
            print(
                f"| {r['name']} | {policy} | {r['wall_s'] / 60:.0f} | {r['updates']} | {r['env_steps']} | {shown} "
                f"| {mean:.2f} ± {spread:.2f} | {'yes' if beats else 'no'} |"
            )
            for tag, values in r["last_evals"].items():
                m = re.fullmatch(rf"{prefix}/[^/]+/attempt (\d+) (return|success)", tag)
                if m:
                    attempts.setdefault((int(m[1]), m[2]), {})[(r["name"], policy)] = float(np.mean(values))
    if gains:
        print(f"\n{which} minus attempt 0, per eval (mean ± sd of the last three evals; above: mean > sd)")
        print("| run | policy | difference | above attempt 0 |\n|---|---|---|---|\n" + "\n".join(gains))
    if attempts:
        cols = sorted({c for v in attempts.values() for c in v})
        print("\nper attempt (mean of the last three evals; random: the same metric of the random policy)")
        print("| attempt | metric | " + " | ".join(f"{n} {p}" for n, p in cols) + " | random |")
        print("|---|---|" + "---:|" * (len(cols) + 1))
        for (i, metric), v in sorted(attempts.items()):
            rnd = [val for k, val in rand.items() if re.fullmatch(rf"eval/[^/]+/attempt {i} {metric}", k)]
            cells = " | ".join(f"{v[c]:.2f}" if c in v else "" for c in cols)
            print(f"| {i} | {metric} | {cells} | {rnd[0]:.2f} |" if rnd else f"| {i} | {metric} | {cells} | |")
    return all_beat


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("recipes", nargs="+", help="recipe names, e.g. suites_xland_cpu")
    p.add_argument("--metric", default="return", choices=["return", "success"], help="success: averaged over envs")
    p.add_argument("--attempt", type=int, default=None, help="one attempt's success (-1: the last), and its gain on 0")
    a = p.parse_args()
    if a.attempt is not None and a.metric != "success":
        p.error(f"--attempt compares one attempt's success: it needs --metric success, got --metric {a.metric}")
    what = a.metric if a.attempt is None else f"attempt {a.attempt} success (and above attempt 0)"
    for recipe in a.recipes:
        for policy, beats in table(recipe, a.metric, a.attempt).items():
            print(f"{recipe}, {what}, {policy}: {'every seed beats' if beats else 'not every seed beats'} random")


if __name__ == "__main__":
    main()
