"""Draw every benchmark plot from the recorded results: benchmarks/results/<recipe>/*.csv -> <recipe>.png.

    python benchmarks/plot.py                 # every recipe
    python benchmarks/plot.py cartpole keydoor

Each recipe's plot holds one greedy-eval curve per run (benchmarks/run.py writes the CSVs). The multitask recipe
plots its per-scale success instead (multitask.sh writes <run>_per_scale.csv), and a recipe of multi-env runs its
per-env curves (<run>_per_env.csv, from run.py --per-env). Runs with sampled evals beside greedy (--eval-sampled-too)
get both curves; a recipe with a <recipe>_random.json draws the uniform-random policy's return as a dashed line. A run
continued as <run>_resumed (run.py --resume-from) is drawn once, as the continuation, whose curve begins with it.
benchmarks/results/archive/ holds results of earlier recipes and is not plotted.
"""

import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from common.plot import plot_curves  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
# recipe -> (CSV files, columns, y label); every other recipe: each <run>.csv's eval_return
SPECIAL = {"multitask": ("*_per_scale.csv", ["success_x1", "success_x10", "success_x100"], "greedy success")}
# recipes whose plot another script draws (not an eval curve): plot.py leaves them alone
OWN_PLOT = {"guide_metrics": "benchmarks/probes/metrics_panel.py"}


def plot(recipe):
    if recipe in OWN_PLOT:
        print(f"{recipe}: its plot is drawn by {OWN_PLOT[recipe]}")
        return
    pattern, columns, ylabel = SPECIAL.get(recipe, ("*.csv", ["eval_return"], "greedy eval return"))
    if any((RESULTS / recipe).glob("*_per_env.csv")):  # a multi-env run: one curve per env (run.py --per-env)
        pattern, columns, ylabel = "*_per_env.csv", None, "greedy eval, per env"
    curves = {}
    for f in sorted((RESULTS / recipe).glob(pattern)):
        if recipe not in SPECIAL and f.stem.endswith(("_per_scale", "_per_env")) and columns:
            continue
        base = f.stem.removesuffix("_per_scale").removesuffix("_per_env")
        if f.with_name(f"{base}_resumed{f.stem[len(base) :]}.csv").exists():  # continued (run.py --resume-from): its
            continue  # curve is the continuation's first part
        rows = list(csv.DictReader(f.open()))
        if not rows:
            continue
        cols = columns or [c for c in rows[0] if c not in ("minutes", "env_steps", "updates")]
        if cols == ["eval_return"] and "eval_sampled_return" in rows[0]:  # --eval-sampled-too: both policies
            cols, ylabel = ["eval_return", "eval_sampled_return"], "eval return (greedy, sampled)"
        for col in cols:
            name = {"eval_return": "greedy", "eval_sampled_return": "sampled"}.get(col, col)
            label = f.stem.removesuffix("_per_scale").removesuffix("_per_env") + ("" if len(cols) == 1 else " " + name)
            curves[label] = [(float(r["minutes"]), float(r[col])) for r in rows if r[col]]
    if not (RESULTS / recipe).is_dir():
        sys.exit(f"no results in {RESULTS / recipe}: known recipes are {', '.join(recipes())}")
    curves = {label: points for label, points in curves.items() if points}
    if not curves:  # e.g. suites_smoke: throughput runs without evaluation
        print(f"{recipe}: no eval curve to plot")
        return
    random = RESULTS / recipe / f"{recipe}_random.json"  # the uniform-random policy (random_baseline.py), dashed
    hline = json.loads(random.read_text())["eval/return"] if random.exists() else None
    plot_curves(
        curves, RESULTS / f"{recipe}.png", title=recipe, ylabel=ylabel, hline=hline, hline_label="uniform random"
    )
    print(f"wrote {(RESULTS / recipe).relative_to(ROOT)}.png ({len(curves)} curves)")


def recipes():
    return sorted(d.name for d in RESULTS.iterdir() if d.is_dir() and d.name != "archive")


if __name__ == "__main__":
    for r in sys.argv[1:] or recipes():
        plot(r)
