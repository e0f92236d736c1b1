"""Draw the benchmark plots from the recorded results (benchmarks/results/<recipe>/*.csv, written by run.py).

    python benchmarks/plot.py                  # README's figure (results.png) and every recipe's <recipe>.png
    python benchmarks/plot.py results          # README's figure only: one panel per row of its results table
    python benchmarks/plot.py cartpole keydoor
    python benchmarks/plot.py --table memory_revisit    # its runs as benchmarks/README.md's seed table (Markdown)

Every plot follows the same rules. One panel per task (env id; per reward scale for multitask, per env for a
multi-env run), x in minutes on the 2 cores. In a panel, the seeds of one configuration are one curve: the mean of
the seeds still running, in a band from the lowest of them to the highest. A seed that ended at or above its target
(run.py --target; stopped there, or by hand later) leaves the band there, at a dot (one legend entry for a panel's
dots); where a seed ended below it, the band ends and the seeds that ran on are drawn alone, thin. Baselines are dashed: the uniform-random policy (`*_random.json`, random_baseline.py) and the best
memory-free policy (`*_memoryless.json`, probes/popgym_memoryless.py and tmaze_memoryless.py) recorded at the
panel's env id, and memory-free runs (--traj-encoder ff; AMAGO beside AMAGO-2 in multitask), from any recipe at that
env id. Where none is recorded, the runs' target is drawn dotted. A run continued as <run>_resumed (run.py
--resume-from) is drawn once, as the continuation, whose curve begins with it. benchmarks/results/archive/ is not
plotted.
"""

import csv
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
# recipes whose plot is not an eval curve: drawn by another script, or none
OWN_PLOT = {
    "guide_metrics": "benchmarks/probes/metrics_panel.py draws every logged scalar",
    "watch": "benchmarks/watch.py draws what the memory reads and success per attempt (its commands: benchmarks/README.md)",
    "gpu": "its one curve is 2 minutes of the loop, a speed figure: the section's table says it",
}
NOT_RUNS = (
    "_random",
    "_memoryless",
    "_probe",
    "_ceiling",
    "_episodes",
    "_data",
    "_per_scale",
    "_per_env",
    "_scalars",
    "_attempts",
)
# legend names where a configuration's run name says it poorly (default: what sets it apart in its panel)
LABELS = {
    "lunarlander_alone_transformer": "AMD EPYC",
    "lunarlander_alone_xeon_transformer": "Intel Xeon",
    "memory_revisit_popgym_countrecall": "side by side, continued",
    "memory_revisit_popgym_countrecall_alone": "alone",
    "memory_revisit_popgym_countrecall_ratio48_alone": "alone, --replay-ratio 48",
    "halfcheetah_vel_transformer": "transformer",
    "halfcheetah_vel_ff": "memory-free (ff)",
    "frozenlake_transformer": "transformer, recipe",
    "frozenlake_ff": "memory-free (ff), recipe",
    "frozenlake_defaults_transformer": "transformer, defaults",
    "frozenlake_defaults_ff": "memory-free (ff), defaults",
    "offline_cartpole_offline": "offline, no env step",
    "offline_cartpole_finetune": "offline, then online",
    "offline_cartpole_expert": "online from scratch",
    "mazerunner_relabel_none": "no relabeling",
    "mazerunner_relabel_some": "--relabel envs.mazerunner:relabel_some",
    "point_robot_transformer": "white Box noise (the defaults)",
    "point_robot_pink_transformer": "pink Box noise",
    "point_robot_critic64_transformer": "white Box noise, critic width 64",
    "point_robot_one_gamma_transformer": "white Box noise, one discount",
}
SCRIPTED = {
    "sweep": "memory-free sweep",
    "search_then_return": "search, then return",
    "velocity_blind": "velocity-blind best",
    "aim": "driven at the known goal",
    "drift": "noise around a fixed action",
}  # *_baselines.json labels
COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink"]


# ------------------------------------------------------- data -------------------------------------------------------
@dataclass
class Curve:
    label: str
    seeds: list  # [(name, [(x, y), ...], target or None)], one per seed
    baseline: bool = False  # a memory-free run, drawn dashed
    color: str | None = None


@dataclass
class Panel:
    title: str
    ylabel: str = "greedy eval return"
    curves: list = field(default_factory=list)
    lines: list = field(default_factory=list)  # [(value, label, color)]: recorded baselines, dashed
    target: float | None = None  # drawn dotted where no baseline is recorded
    legend: str = "best"  # where the legend hides the least
    legend_cols: int = 1
    ylim: tuple | None = None  # room above the curves for the legend


def read_curve(path, column="eval_return"):
    with open(path, newline="") as f:
        return [(float(r["minutes"]), float(r[column])) for r in csv.DictReader(f) if r.get(column)]


def result(path):
    """The RESULT JSON beside a run's CSV ({} if none): the run's env id, encoder, seed and target."""
    j = path.with_name(re.sub(r"_per_(scale|env)$", "", path.stem) + ".json")
    return json.loads(j.read_text()) if j.exists() else {}


def target_of(res):
    """(target, reached) from a RESULT's first_minute_at_or_above ({"200.0": 16.7}), else (None, False)."""
    hits = res.get("first_minute_at_or_above") or {}
    for key, minute in hits.items():
        return float(key), minute is not None
    return None, False


def runs(recipe):
    """{name: csv path} of a recipe's runs, a continued run's earlier parts left out (the continuation holds them)."""
    found = {}
    for f in sorted((RESULTS / recipe).glob("*.csv")):
        if f.stem.endswith(NOT_RUNS) or f.with_name(f"{f.stem}_resumed.csv").exists():
            continue
        found[f.stem] = f
    return found


def config_of(name):
    """A run's configuration: its name without `_resumed` parts and the seed (`_s2`; seed 1 may go unnamed)."""
    while name.endswith("_resumed"):
        name = name.removesuffix("_resumed")
    return re.sub(r"_s\d+$", "", name)


ENV_IDS = {}  # a run's env id, by its name: where a README panel looks up its recorded baselines


def seed_entry(path, column="eval_return"):
    res = result(path)
    ENV_IDS[path.stem] = res.get("env_id")
    target, reached = target_of(res)
    points = read_curve(path, column)
    held = target if reached and points and points[-1][1] >= target else None
    return path.stem, points, held


def recorded_baselines(env_id, key="eval/return"):
    """Dashed lines for an env id: every `*_random.json` and `*_memoryless.json` recorded at it (archive left out);
    key: the metric drawn (a per-env panel's, e.g. eval/MultiScaleBandit-x1/success)."""
    lines = {}
    for f in sorted(RESULTS.glob("*/*.json")):
        if not f.stem.endswith(("_random", "_memoryless")) or f.parent.name == "archive":
            continue
        r = json.loads(f.read_text())
        value = r.get(key, r.get("return") if key == "eval/return" else None)
        if r.get("env_id") != env_id or value is None:
            continue
        label = "best memory-free" if r.get("policy") == "best_memoryless" else "random"
        lines.setdefault((label, round(value, 3)), (value, label, "black" if label == "random" else "0.45"))
    for f in sorted(RESULTS.glob("*/*_baselines.json")):  # scripted policies: {"env_id", policy: {metric: value}}
        r = json.loads(f.read_text())
        for policy, metrics in r.items() if r.get("env_id") == env_id else ():
            value = metrics.get(key.split("/")[-1]) if isinstance(metrics, dict) else None
            if value is not None:
                label = SCRIPTED.get(policy, policy.replace("_", " "))
                gray = {"random": "black", "sweep": "0.45"}.get(policy, "0.7")
                lines.setdefault((label, round(value, 3)), (value, label, gray))
    return list(lines.values())


def memory_free_runs(env_id, exclude=()):
    """Curves of the --traj-encoder ff runs recorded at an env id by any recipe (not the archive)."""
    groups = {}
    for recipe in recipes():
        for name, path in runs(recipe).items():
            res = result(path)
            if res.get("env_id") == env_id and res.get("traj_encoder") == "ff" and name not in exclude:
                groups.setdefault(config_of(name), []).append(seed_entry(path))
    return [Curve(f"memory-free ({config})", seeds, baseline=True) for config, seeds in groups.items()]


# ------------------------------------------------- a recipe's panels -------------------------------------------------
def recipe_panels(recipe):
    """One panel per task: env id, or the columns of the per-scale / per-env CSVs."""
    found = runs(recipe)
    per = {n: p for n, p in found.items() if p.with_name(f"{n}_per_scale.csv").exists()}
    per_env = {n: p for n, p in found.items() if p.with_name(f"{n}_per_env.csv").exists()}
    if per or per_env:  # one panel per column of the per-task CSVs; AMAGO beside AMAGO-2 is the baseline
        kind = "_per_scale" if per else "_per_env"
        panels = {}
        for name, path in (per or per_env).items():
            extra = path.with_name(f"{name}{kind}.csv")
            columns = next(csv.reader(extra.open()))[3:]
            for col in columns:
                env, _, metric = col.partition("/") if kind == "_per_env" else (col, "", "success")
                title = env.replace("success_", "reward scale ").removesuffix("-v0")
                panel = panels.setdefault(col, Panel(title, f"greedy {metric}"))
                if kind == "_per_env":  # an env id per column: its recorded baselines at that metric
                    env_id = f"envs:{env}" + ("" if re.search(r"-v\d+$", env) else "-v0")
                    panel.lines = recorded_baselines(env_id, f"eval/{col}")
                seeds = [(name, read_curve(extra, col), None)]
                amago = name.startswith(recipe + "_amago_")
                label = "AMAGO" if amago else ("AMAGO-2" if "_amago2_" in name else config_of(name))
                baseline = amago or result(path).get("traj_encoder") == "ff"  # AMAGO beside AMAGO-2; memory-free
                label = LABELS.get(label, label)
                curve = next((c for c in panel.curves if c.label == label), None)  # the seeds of one configuration
                if curve is None:
                    panel.curves.append(Curve(label, seeds, baseline=baseline))
                else:
                    curve.seeds += seeds
        return list(panels.values())
    panels = {}
    for name, path in found.items():
        res = result(path)
        env = res.get("env_id", recipe)
        panel = panels.setdefault(env, Panel(env.removeprefix("envs:").removesuffix("-v0")))
        if "eval_sampled_return" in open(path).readline():  # --eval-sampled-too: the sampled policy beside greedy
            columns = [("eval_return", "greedy"), ("eval_sampled_return", "sampled")]
            panel.ylabel = "eval return"
        else:
            columns = [("eval_return", None)]
        for col, policy in columns:
            config = config_of(name) + (f" {policy}" if policy else "")
            curve = next((c for c in panel.curves if c.label == config), None)
            if curve is None:
                curve = Curve(config, [], baseline=res.get("traj_encoder") == "ff")
                panel.curves.append(curve)
            curve.seeds.append(seed_entry(path, col))
        target, _ = target_of(res)
        panel.target = panel.target if panel.target is not None else target
    for env, panel in panels.items():
        names = {s[0] for c in panel.curves for s in c.seeds}
        panel.curves += memory_free_runs(env, exclude=names)
        panel.curves.sort(key=lambda c: c.baseline)  # the runs first, their baselines after them
        panel.lines = recorded_baselines(env)
        for data in (RESULTS / recipe).glob("*_data.json"):  # an offline dataset: its policy's greedy return
            panel.lines.append((json.loads(data.read_text())["greedy"]["eval/return"], "the data's policy", "0.45"))
        shared = common_tokens([c.label for c in panel.curves if not c.baseline])
        alone = len([c for c in panel.curves if not c.baseline]) == 1
        for curve in panel.curves:  # a name for each curve: what sets it apart from the others in its panel
            config, _, policy = curve.label.partition(" ")
            if curve.baseline:
                if config.startswith(recipe + "_"):  # this recipe's own memory-free run
                    curve.label = LABELS.get(config) or f"memory-free ({config.removeprefix(recipe + '_')})"
                continue
            own = [t for t in config.removeprefix(recipe + "_").split("_") if t not in shared and not alone]
            encoder = result(RESULTS / recipe / f"{curve.seeds[0][0]}.csv").get("traj_encoder", "")
            curve.label = f"{LABELS.get(config) or ' '.join(own) or ('' if policy else encoder)} {policy}".strip()
    return list(panels.values())


def common_tokens(labels):
    """The run-name tokens every configuration of a panel shares (the task's, mostly)."""
    sets = [set(label.split(" ")[0].split("_")) for label in labels]
    return set.intersection(*sets) if len(sets) > 1 else set()


# --------------------------------------------- README's figure: one panel per row ---------------------------------------------
def continued(path):
    """Whether a recorded run's CSV has a continuation: <run>_resumed.csv, or <run>_resumed_per_env.csv for
    <run>_per_env.csv (a per-scale or per-env table goes on with its run)."""
    run, per = path.stem, ""
    for suffix in ("_per_scale", "_per_env"):
        if run.endswith(suffix):
            run, per = run.removesuffix(suffix), suffix
    return path.with_name(f"{run}_resumed{per}.csv").exists()


def seeds(pattern, column="eval_return"):
    """The seeds of one configuration: recorded runs matching a glob under results/ (continued runs: the last part)."""
    paths = [p for p in sorted(RESULTS.glob(pattern + ".csv")) if not continued(p)]
    if not paths:
        raise FileNotFoundError(f"no recorded run matches benchmarks/results/{pattern}.csv")
    return [seed_entry(p, column) for p in paths]


VEL_ERROR = "HalfCheetahVel-v0/target velocity error (final 50 steps)"  # HalfCheetah-Vel's metric (--per-env)


def front_panels():
    """README's results table, row by row (the same order and names)."""
    mr = "memory_revisit/memory_revisit_"
    hcv = "halfcheetah_vel/halfcheetah_vel_{}_s?*_per_env"
    popgym = Panel("POPGym at the defaults", "greedy eval return")
    for game, pattern in [("Autoencode", "autoencode_s?"), ("RepeatFirst", "repeatfirst_s?"),
                          ("CountRecall", "countrecall_s?*")]:  # fmt: skip
        popgym.curves.append(Curve(game, seeds(mr + "popgym_" + pattern)))
    popgym.lines = [
        (json.loads((RESULTS / f"memory_defaults/memory_defaults_popgym_{g}_memoryless.json").read_text())["return"],
         "best memory-free", "0.45") for g in ["autoencode", "repeatfirst", "countrecall"]
    ]  # fmt: skip
    suite = lambda title, recipe: Panel(  # noqa: E731
        title,
        "eval return",
        [
            Curve("greedy", seeds(f"{recipe}/{recipe}_s?")),
            Curve("sampled", seeds(f"{recipe}/{recipe}_s?", "eval_sampled_return")),
        ],
        recorded_baselines(result(RESULTS / recipe / f"{recipe}_s1.csv")["env_id"]),
    )
    panels = [
        Panel(
            "LunarLander", curves=[Curve("the command", seeds("lunarlander_alone/lunarlander_alone_transformer_s?"))]
        ),
        Panel(
            "CartPole",
            curves=[
                Curve("transformer", seeds("cartpole/cartpole_transformer_s?")),
                Curve("gru", seeds("cartpole/cartpole_gru_s?")),
            ],
        ),
        Panel("Pendulum", curves=[Curve("transformer", seeds("pendulum/pendulum_transformer"))]),
        Panel(
            "T-Maze H = 50, 100 at the defaults",
            "greedy eval return (1: solved)",
            [
                Curve("H = 50", seeds(mr + "tmaze_h50_s?")),
                Curve("H = 100", seeds(mr + "tmaze_h100_s?")),
                Curve("memory-free (ff), H = 50", seeds("tmaze_h50/tmaze_h50_ff"), baseline=True),
            ],
        ),
        Panel(
            "T-Maze H = 500",
            "greedy eval return (1: solved)",
            [
                Curve("tuned recipe", seeds("tmaze_h500/tmaze_h500_transformer")),
                Curve("the defaults", seeds(mr + "tmaze_h500_s?*")),
            ],
        ),
        Panel(
            "Pixel T-Maze",
            "greedy eval return (1: solved)",
            [
                Curve("transformer", seeds("pixel_tmaze/pixel_tmaze_transformer*")),
                Curve("memory-free (ff)", seeds("pixel_tmaze/pixel_tmaze_ff*"), baseline=True),
            ],
        ),
        popgym,
        Panel(
            "Meta-Frozen-Lake",
            "successes in 5 attempts",
            [
                Curve("transformer", seeds("frozenlake/frozenlake_defaults_transformer*")),
                Curve("memory-free (ff)", seeds("frozenlake/frozenlake_defaults_ff"), baseline=True),
            ],
        ),
        Panel(
            "Dark Key-Door",
            curves=[
                Curve("transformer", seeds("keydoor/keydoor_transformer")),
                Curve("memory-free (ff)", seeds("keydoor/keydoor_ff"), baseline=True),
            ],
        ),
        Panel(
            "Sparse point robot",
            "greedy eval return, 3 attempts",
            [Curve("transformer", seeds("point_robot/point_robot_transformer_s*"))],
        ),
        Panel(
            "HalfCheetah-Vel",
            f"greedy {VEL_ERROR.partition('/')[2]}",
            [
                Curve("transformer", seeds(hcv.format("transformer"), VEL_ERROR)),
                Curve("memory-free (ff)", seeds(hcv.format("ff"), VEL_ERROR), baseline=True),
            ],
            recorded_baselines("envs:HalfCheetahVel-v0", f"eval/{VEL_ERROR}"),
        ),
        Panel(
            "MultiScaleBandit, scale ×1",
            "greedy success",
            [
                Curve("AMAGO-2", seeds("multitask/multitask_amago2_s?_per_scale", "success_x1")),
                Curve("AMAGO", seeds("multitask/multitask_amago_s?_per_scale", "success_x1"), baseline=True),
            ],
        ),
        Panel(
            "DMC cheetah-run",
            curves=[Curve("transformer", seeds("suites_dmc_cheetah_cpu/suites_dmc_cheetah_cpu"))],
            lines=recorded_baselines("envs:DMC-cheetah-run-v0"),
        ),
        suite("XLand-MiniGrid 9×9", "suites_xland_cpu"),
        suite("BabyAI, two levels", "suites_babyai_easy"),
        suite("Atari Q*bert", "suites_atari_qbert_cpu"),
        suite("Meta-World reach", "suites_metaworld_reach50_nopuck_cpu"),
    ]
    for panel in panels:  # the baselines recorded at the panel's env id; else the runs' own target
        if not panel.lines:
            panel.lines = recorded_baselines(ENV_IDS[panel.curves[0].seeds[0][0]])
        if not panel.lines and not any(c.baseline for c in panel.curves):
            held = [s[2] for c in panel.curves for s in c.seeds if s[2] is not None]
            panel.target = held[0] if held else panel.target
    return panels


# ------------------------------------------------------ drawing ------------------------------------------------------
def value_at(pts, x):
    """A seed's eval return at minute x, linear between its evals (x within them)."""
    i = next(i for i, (px, _) in enumerate(pts) if px >= x)
    if pts[i][0] == x or i == 0:
        return pts[i][1]
    (x0, y0), (x1, y1) = pts[i - 1], pts[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def aggregate(seed_list):
    """-> (xs, mean, low, high, ends, tails). On the union of the seeds' eval minutes, from the last seed's first eval
    to the first end of a seed that ended below its target (else the last end): the mean, lowest and highest of the
    seeds still running at each minute, each interpolated between its evals. A seed that ended at or above its target
    (stopped there, or by hand later) leaves the band at its last eval, a dot (ends: those points); the seeds that run
    on past the aggregate are drawn alone from there (tails)."""
    seed_list = [s for s in seed_list if s[1]]
    start = max(pts[0][0] for _, pts, _ in seed_list)
    stops = [pts[-1][0] for _, pts, held in seed_list if held is None]
    stop = min(stops) if stops else max(pts[-1][0] for _, pts, _ in seed_list)
    xs, mean, low, high = [], [], [], []
    for x in sorted({x for _, pts, _ in seed_list for x, _ in pts if start <= x <= stop}):
        values = [value_at(pts, x) for _, pts, _ in seed_list if pts[0][0] <= x <= pts[-1][0]]
        if values:
            xs.append(x)
            mean.append(sum(values) / len(values))
            low.append(min(values))
            high.append(max(values))
    ends = [pts[-1] for _, pts, held in seed_list if held is not None]
    tails = [
        [(stop, value_at(pts, stop))] + [p for p in pts if p[0] > stop] for _, pts, _ in seed_list if pts[-1][0] > stop
    ]
    return xs, mean, low, high, ends, tails


def draw_panel(ax, panel):
    fs = 8
    colors, grays = iter(COLORS), iter([("0.4", "--"), ("0.55", "-."), ("0.7", ":")])
    stopped = False
    for curve in panel.curves:
        if curve.baseline:
            color, style = next(grays)
        else:
            color, style = curve.color or next(colors), "-"
        xs, mean, low, high, ends, tails = aggregate(curve.seeds)
        n = len(curve.seeds)
        label = curve.label + (f" ({n} seeds)" if n > 1 else "")
        ax.plot(xs, mean, style, color=color, lw=1.4, label=label, marker="o" if len(xs) == 1 else None, ms=3)
        if n > 1:
            ax.fill_between(xs, low, high, color=color, alpha=0.18, lw=0)
        if ends:
            ax.plot([e[0] for e in ends], [e[1] for e in ends], "o", color=color, ms=3)
            stopped = True
        for tail in tails:  # a seed that ran on past the others, alone
            ax.plot([p[0] for p in tail], [p[1] for p in tail], style, color=color, lw=0.8, alpha=0.6)
    if stopped:  # one legend entry for every panel's dots, in gray: each curve's own dots wear its color
        ax.plot([], [], "o", color="0.35", ms=3, label="a seed ended ≥ its target")
    labelled = set()
    for value, label, color in panel.lines:
        ax.axhline(value, color=color, ls="--", lw=1, label=None if label in labelled else label)
        labelled.add(label)
    if panel.target is not None and not panel.lines and not any(c.baseline for c in panel.curves):
        ax.axhline(panel.target, color="0.3", ls=":", lw=1, label=f"target {panel.target:g}")
    ax.set_title(panel.title, fontsize=fs + 1.5)
    ax.set_xlabel("minutes on 2 CPU cores", fontsize=fs)
    ax.set_ylabel(panel.ylabel, fontsize=fs)
    ax.tick_params(labelsize=fs - 0.5)
    ax.grid(alpha=0.3)
    entries = len(ax.get_legend_handles_labels()[1])
    loc = panel.legend
    if panel.ylim:
        ax.set_ylim(*panel.ylim)
    elif entries >= 4:  # a long legend gets room of its own above the curves, not on top of them
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, hi + (hi - lo) * 0.17 * entries)
        loc = "upper left"
    ax.legend(fontsize=fs - 0.5, loc=loc, ncol=panel.legend_cols, framealpha=0.85, handlelength=1.6)


def draw(panels, path, title, cols):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(cols, len(panels))
    rows = -(-len(panels) // cols)
    w, h = (3.7, 2.7) if len(panels) > 1 else (5.2, 3.6)
    fig, axes = plt.subplots(rows, cols, figsize=(w * cols, h * rows + 0.4), squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        draw_panel(ax, panel)
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot(recipe):
    if recipe == "results":
        panels = front_panels()
        draw(
            panels,
            RESULTS / "results.png",
            "amago-clean on 2 CPU cores: the mean of the seeds still running, in a band from min to max",
            3,
        )
        print(f"wrote benchmarks/results/results.png ({len(panels)} panels)")
        return
    if recipe in OWN_PLOT:
        print(f"{recipe}: not drawn here ({OWN_PLOT[recipe]})")
        return
    if not (RESULTS / recipe).is_dir():
        sys.exit(f"no results in {RESULTS / recipe}: known recipes are results, {', '.join(recipes())}")
    panels = [p for p in recipe_panels(recipe) if any(s[1] for c in p.curves for s in c.seeds)]
    if not panels:  # e.g. suites_smoke: throughput runs without evaluation
        print(f"{recipe}: no eval curve to plot")
        return
    draw(panels, RESULTS / f"{recipe}.png", recipe, 3)
    curves = max(len(p.curves) for p in panels)
    print(f"wrote benchmarks/results/{recipe}.png ({len(panels)} panels, at most {curves} curves in one)")


# the bar of runs that were not given one (run.py --target): POPGym's return 0.9, by recipe and a part of the name
BARS = {"memory_revisit": {"popgym": 0.9}, "memory_defaults": {"popgym": 0.9}}


def seed_table(recipe):
    """A recipe's runs as a Markdown table: when each first reached its bar (--target, else BARS where set), its final
    eval, the mean of its last three (greedy; sampled, where evaluated too) and its length. A continued run is one
    row, under the name of its last part."""
    table = []
    for name, path in runs(recipe).items():
        res = result(path)
        if not res:
            continue
        rows = list(csv.DictReader(path.open()))
        target, reached = target_of(res)
        bar = next((b for part, b in BARS.get(recipe, {}).items() if part in name), target)
        hit = next((r for r in rows if bar is not None and float(r["eval_return"]) >= bar), None)
        minute = res["first_minute_at_or_above"][str(bar)] if bar == target and reached else None  # as run.py rounds
        at = f"≥ {bar:g}: **{minute or float(hit['minutes']):.1f}**, {int(hit['env_steps']):,}" if hit else "never"
        last = res.get("last_evals", {})
        last3 = "; ".join(
            f"{sum(last[k]) / len(last[k]):.2f}" for k in ("eval/return", "eval_sampled/return") if k in last
        )
        table.append((name, at if bar is not None else None, f"{res['final_eval_return']:.2f}", last3,
                      f"{res['wall_s'] / 60:.1f}, {res['env_steps']:,}"))  # fmt: skip
    bars = any(r[1] for r in table)
    sampled = any(";" in r[3] for r in table)
    head = ["run"] + ["first eval at the bar: minutes, env steps"] * bars + ["final eval"]
    head += ["last 3 evals, mean" + (": greedy; sampled" if sampled else "")] * sampled + ["run: minutes, env steps"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, at, final, last3, wall in table:
        cells = [f"`{name}`"] + [at or "–"] * bars + [final] + [last3] * sampled + [wall]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def recipes():
    return sorted(d.name for d in RESULTS.iterdir() if d.is_dir() and d.name != "archive")


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):
        sys.exit(print(__doc__))
    if sys.argv[1:2] == ["--table"]:
        for r in sys.argv[2:]:
            print(seed_table(r))
    else:
        for r in sys.argv[1:] or ["results", *recipes()]:
            plot(r)
