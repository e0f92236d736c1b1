"""Collect benchmark curves into benchmarks/results/ (CSV copies + one PNG per group) for the README.

    python benchmarks/plot.py lunarlander lunarlander_default            # group name, then run names
    python benchmarks/plot.py cartpole cartpole_transformer_s1 cartpole_gru_s1 ...
"""

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from common.plot import plot_curves  # noqa: E402


def main(group, names):
    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    curves = {}
    for name in names:
        src = ROOT / "benchmarks" / "out" / name / "curve.csv"
        shutil.copy(src, results / f"{name}.csv")
        rows = [line.split(",") for line in src.read_text().splitlines()[1:]]
        curves[name] = [(float(r[0]), float(r[3])) for r in rows]
    plot_curves(curves, results / f"{group}.png", title=group)
    print(f"wrote {results / (group + '.png')}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
