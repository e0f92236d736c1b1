"""Ours against the reference AMAGO with Box actions (benchmarks/compare_box.sh): the Box actor's health per update and
the greedy return, both sides' seeds in one figure.

    python benchmarks/probes/compare_box_plot.py                 # the first ~2,000 updates (health)
    python benchmarks/probes/compare_box_plot.py --part curve    # the learning curves to 100,000 env steps

Reads benchmarks/results/compare_box/: ours from run.py's records (<name>_scalars.csv: actor/*, losses/*,
charts/updates per epoch; <name>.csv: the eval curve; the curve's are the halfcheetah recipe's, the same settings),
the reference's from reference_box.py's per-epoch CSV. Each seed is a thin line, the mean over the seeds a thick one
(where every seed has a value). The gradient norm is the trainable parameters' on both sides (the reference's own
clip also counts a critic copy that no optimizer zeroes). Writes compare_box_<part>.png and prints, per side, the
mean over seeds of each quantity at a few update counts.
"""

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "compare_box"
# (our tag, the reference's column, the panel's title)
HEALTH = [
    ("actor/greedy_abs_action", "greedy_abs_action", "greedy action: mean |tanh mu|"),
    ("actor/greedy_action_spread", "greedy_action_spread", "greedy action: std over states"),
    ("actor/pre_tanh_std", "pre_tanh_std", "pre-tanh std"),
    ("losses/bc_filter_frac", "bc_filter_frac", "BC filter: share of buffer actions kept"),
    ("losses/grad_norm", "grad_norm_trainable", "gradient norm before the clip (1.0)"),
]
COLORS = {"ours": "tab:blue", "reference": "tab:orange"}


def ours(part):
    """{seed: {quantity: [(updates or env steps, value)]}} from run.py's records."""
    runs = {}
    records = RESULTS.parent / "halfcheetah" if part == "curve" else RESULTS  # the curve: the halfcheetah recipe's
    pattern = "halfcheetah_transformer_s*_scalars.csv" if part == "curve" else f"compare_box_{part}_ours_s*_scalars.csv"
    for path in sorted(records.glob(pattern)):
        seed = int(path.stem.removesuffix("_scalars").rsplit("_s", 1)[-1])
        rows = list(csv.DictReader(open(path)))
        updates = {int(r["env_steps"]): float(r["value"]) for r in rows if r["tag"] == "charts/updates"}
        series = defaultdict(list)
        for r in rows:
            step = int(r["env_steps"])
            if r["tag"] in dict((t, c) for t, c, _ in HEALTH) and step in updates:
                series[r["tag"]].append((updates[step], float(r["value"])))
        curve = list(csv.DictReader(open(path.with_name(path.name.replace("_scalars", "")))))
        series["eval"] = [(int(r["env_steps"]), float(r["eval_return"])) for r in curve]
        runs[seed] = {**{c: series[t] for t, c, _ in HEALTH}, "eval": series["eval"]}
    return runs


def reference(part):
    runs = {}
    for path in sorted(RESULTS.glob(f"compare_box_{part}_reference_s*.csv")):
        seed = int(path.stem.rsplit("_s", 1)[-1])
        rows = [r for r in csv.DictReader(open(path))]
        series = {c: [(int(r["updates"]), float(r[c])) for r in rows if r.get(c)] for _, c, _ in HEALTH}
        series["eval"] = [(int(r["env_steps"]), float(r["eval_return"])) for r in rows if r.get("eval_return")]
        runs[seed] = series
    return runs


def mean_line(series):
    """The mean over seeds at the x values every seed has."""
    xs = sorted(set.intersection(*(set(x for x, _ in s) for s in series))) if series else []
    return xs, [np.mean([dict(s)[x] for s in series]) for x in xs]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--part", default="health", choices=["health", "curve"])
    a = p.parse_args()
    sides = {"ours": ours(a.part), "reference": reference(a.part)}
    if not any(sides.values()):
        sys.exit(f"no compare_box_{a.part}_* records in {RESULTS}: run benchmarks/compare_box.sh first")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(c, title, "updates") for _, c, title in HEALTH] + [("eval", "greedy eval return", "env steps")]
    fig, axes = plt.subplots(2, 3, figsize=(15, 7.6))
    for ax, (key, title, xlabel) in zip(axes.flat, panels):
        for side, runs in sides.items():
            series = [run[key] for run in runs.values() if run.get(key)]
            mark = "o" if key == "eval" else None  # evals are few: each one a point
            for s in series:
                ax.plot(*zip(*s), color=COLORS[side], lw=0.7, alpha=0.45, marker=mark, ms=3)
            xs, ys = mean_line(series)
            if xs:
                label = f"{side} (mean of {len(series)} seeds; thin: each)" if len(series) > 1 else f"{side} (1 seed)"
                ax.plot(xs, ys, color=COLORS[side], lw=2.2, marker=mark, ms=6, label=label)
        ax.set(title=title, xlabel=xlabel)
        ax.grid(alpha=0.3)
        if key == "grad_norm_trainable":
            ax.set_yscale("log")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(
        "HalfCheetah, transformer, equal sizes and settings: ours (amago_agent.py) against the reference AMAGO (2d85600)",
        fontsize=11,
    )
    fig.tight_layout()
    out = RESULTS / f"compare_box_{a.part}.png"
    fig.savefig(out, dpi=100)
    print(f"wrote {out.relative_to(ROOT)}")
    for side, runs in sides.items():
        for key, title, _ in panels:
            xs, ys = mean_line([run[key] for run in runs.values() if run.get(key)])
            picks = [i for i in np.linspace(0, len(xs) - 1, 5).round().astype(int)] if xs else []
            print(f"{side:9s} {title[:40]:40s} " + "  ".join(f"{xs[i]}: {ys[i]:.3g}" for i in picks))


if __name__ == "__main__":
    main()
