"""Every logged scalar of one recorded run: a long CSV and a grid of small plots, one per tag.

    python benchmarks/probes/metrics_panel.py --recipe guide_metrics --name guide_metrics_lunarlander

Reads the run's tensorboard folder, benchmarks/out/<name>/runs/<name> (where benchmarks/run.py keeps it), and writes
benchmarks/results/<recipe>/<name>_scalars.csv (tag, env_steps, minutes, value; minutes since the run's first logged
scalar) and benchmarks/results/<recipe>.png: one line plot per tag (charts/*, losses/*, buffer/*, eval/*), x = env
steps. Used by benchmarks/guide_metrics.sh; benchmarks/plot.py leaves this recipe's plot alone.
"""

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from common.logs import read_scalars, write_scalars_csv  # noqa: E402

GROUPS = ("charts/", "losses/", "actor/", "buffer/", "eval/")


def tag_order(tag):
    """charts, losses, actor, buffer, eval, then anything else; alphabetical within a group (as the CSV)."""
    group = next((i for i, g in enumerate(GROUPS) if tag.startswith(g)), len(GROUPS))
    return group, tag


def draw(scalars, path, title, cols=5):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tags = sorted(scalars, key=tag_order)
    rows = math.ceil(len(tags) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.3 * rows), squeeze=False)
    for ax, tag in zip(axes.flat, tags):
        steps = [s for _, s, _ in scalars[tag]]
        values = [v for _, _, v in scalars[tag]]
        ax.plot(steps, values, lw=1, marker="." if len(steps) < 30 else None, ms=3)
        ax.set_title(tag, fontsize=8)
        ax.tick_params(labelsize=6)
        ax.xaxis.get_offset_text().set_fontsize(6)
        ax.yaxis.get_offset_text().set_fontsize(6)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(tags) :]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("env steps", fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--recipe", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--title", default=None, help="the figure's title (default: the run name and its script)")
    p.add_argument("--run-dir", default=None, help="the tensorboard folder (default: benchmarks/out/NAME/runs/NAME)")
    p.add_argument("--tags", default="", help="only the tags that start with this (e.g. eval/); with it, no figure")
    a = p.parse_args()
    run_dir = Path(a.run_dir).resolve() if a.run_dir else ROOT / "benchmarks" / "out" / a.name / "runs" / a.name
    if not run_dir.is_dir():
        sys.exit(f"no tensorboard folder at {run_dir}: run the recipe first")
    scalars = {tag: pts for tag, pts in read_scalars(run_dir).items() if pts and tag.startswith(a.tags)}
    if not scalars:
        sys.exit(f"no scalars{' ' + a.tags + '*' if a.tags else ''} logged in {run_dir}")
    results = ROOT / "benchmarks" / "results"
    (results / a.recipe).mkdir(parents=True, exist_ok=True)
    csv_path = results / a.recipe / f"{a.name}_scalars.csv"
    write_scalars_csv(scalars, csv_path)
    if a.tags:  # a part of the run's scalars: the CSV alone (the recipe's figure is plot.py's)
        print(f"wrote {csv_path.relative_to(ROOT)} ({len(scalars)} tags)")
        return
    png_path = results / f"{a.recipe}.png"
    draw(scalars, png_path, a.title or f"{a.name}: every logged scalar vs env steps")
    print(f"wrote {csv_path.relative_to(ROOT)} and {png_path.relative_to(ROOT)} ({len(scalars)} tags)")


if __name__ == "__main__":
    main()
