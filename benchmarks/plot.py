"""Collect benchmark curves into benchmarks/results/ (CSV copies + one PNG per group) for the README.

    python benchmarks/plot.py lunarlander lunarlander_default            # group name, then run names
    python benchmarks/plot.py cartpole cartpole_transformer_s1 cartpole_gru_s1 ...
    python benchmarks/plot.py multitask multiscale_amago2_s1 multiscale_amago_s1 \\
        --metrics eval/MultiScaleBandit-x1/success eval/MultiScaleBandit-x100/success   # any eval/ scalar
"""

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from common.logs import read_scalars  # noqa: E402
from common.plot import plot_curves  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("group")
    p.add_argument("names", nargs="+")
    p.add_argument("--metrics", nargs="*", default=None, help="eval scalars to plot instead of the eval return")
    a = p.parse_args()
    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    curves = {}
    for name in a.names:
        src = ROOT / "benchmarks" / "out" / name / "curve.csv"
        shutil.copy(src, results / f"{name}.csv")
        rows = [line.split(",") for line in src.read_text().splitlines()[1:]]
        if not a.metrics:
            curves[name] = [(float(r[0]), float(r[3])) for r in rows]
            continue
        minute_at = {int(r[1]): float(r[0]) for r in rows}  # eval env step -> wall minutes
        scalars = read_scalars(ROOT / "benchmarks" / "out" / name / "runs" / name)
        for m in a.metrics:
            pts = [(minute_at[s], v) for _, s, v in scalars.get(m, []) if s in minute_at]
            curves[f"{name} {m.split('/', 1)[1]}"] = pts  # eval/<env>/<metric> -> "<env>/<metric>"
    ylabel = "greedy eval return"
    if a.metrics:  # one metric: its name; several: a common label (the legend names each)
        ylabel = a.metrics[0].rsplit("/", 1)[-1] if len(a.metrics) == 1 else "greedy eval"
    plot_curves(curves, results / f"{a.group}.png", title=a.group, ylabel=ylabel)
    print(f"wrote {results / (a.group + '.png')}")


if __name__ == "__main__":
    main()
