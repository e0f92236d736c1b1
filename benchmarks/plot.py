"""Draw the benchmark plots from the recorded results (benchmarks/results/<recipe>/*.csv, written by run.py).

    python benchmarks/plot.py                  # README's figure (results.png) and every recipe's <recipe>.png
    python benchmarks/plot.py results          # README's figure only: one panel per row of its results table
    python benchmarks/plot.py cartpole keydoor
    python benchmarks/plot.py --table memory_revisit    # its runs as benchmarks/README.md's seed table (Markdown)

Every plot follows the same rules. One panel per task (env id; per reward scale for multitask, per env for a
multi-env run), x in minutes on the 2 cores, y one of three quantities, each with one label: eval return, eval
success, eval velocity error (lower is better). Each seed is a thin line; a configuration of several seeds adds their
mean, thick, where every seed has data, so a seed that stops early never pulls the mean down. A seed whose last eval
is its first at the bar (run.py --stop-at-target) ends in a star. The bar is README's criterion for the row, drawn as
a red dotted line: the run's --target, else BARS (POPGym's 0.9, the memory-free sweep's or run's best, the
velocity-blind error, twice the uniform-random policy's return). One colour per memory in every figure (COLORS:
transformer, gru, mamba, ff); configurations of one memory in a panel differ by line style. Baselines are dashed
horizontal lines: the uniform-random policy (`*_random.json`, random_baseline.py) in black, memory-free policies
(`*_memoryless.json`, probes/popgym_memoryless.py and tmaze_memoryless.py; the sweep of `*_baselines.json`) in the
memory-free colour, other scripted policies in gray; memory-free runs (--traj-encoder ff) from any recipe at the
panel's env id are drawn as runs, in the memory-free colour. A run continued as <run>_resumed (run.py
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
    "watch": "benchmarks/watch_figures.sh trains its runs and draws them with benchmarks/watch.py",
    "gpu": "its one curve is 2 minutes of the loop, a speed figure: the section's table says it",
    "compare_box": "benchmarks/probes/compare_box_plot.py draws both sides' actor health and returns",
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
    "halfcheetah_vel_example_transformer": "transformer, the reference's example",
    "halfcheetah_vel_example_ff": "memory-free (ff), the reference's example",
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
    "point_robot_critic64_transformer": "critic width 64",
    "point_robot_one_gamma_transformer": "one discount",
}
# *_baselines.json's scripted policies: their legend name and kind (what colour they are drawn in)
SCRIPTED = {
    "random": ("random", "random"),
    "sweep": ("memory-free sweep", "memory-free"),
    "velocity_blind": ("velocity-blind best", "memory-free"),
    "search_then_return": ("search, then return", "scripted"),
    "aim": ("driven at the known goal", "scripted"),
    "drift": ("noise around a fixed action", "scripted"),
}
# one colour per memory, in every figure; the baselines' colours by kind; the bar's
COLORS = {"transformer": "tab:blue", "gru": "tab:orange", "mamba": "tab:green", "ff": "tab:purple"}
LINE_COLORS = {"random": "black", "memory-free": COLORS["ff"], "still": "0.5"}
LINE_STYLES = {"random": "--", "memory-free": "--", "still": ":"}
SCRIPTED_LOOKS = [("0.45", "-."), ("0.6", (0, (1, 1.5))), ("0.3", (0, (6, 2, 1, 2, 1, 2)))]  # other scripted policies
BAR_COLOR = "tab:red"
STYLES = ["-", "--", "-.", ":"]  # configurations of one memory in a panel, in order
YLABELS = {"return": "eval return", "success": "eval success", "error": "eval velocity error (lower is better)"}
VEL_ERROR = "HalfCheetahVel-Even8-v0/target velocity error (final 50 steps)"  # HalfCheetah-Vel's metric (--per-env)


# ------------------------------------------------------- data -------------------------------------------------------
@dataclass
class Bar:
    value: float
    label: str  # its legend entry
    lower: bool = False  # met at or below the value (an error)
    column: str = "eval_return"  # the CSV column it applies to (a per-env run's metric)
    strict: bool = False  # met only above it (a memory-free policy's best, which that policy itself reaches)

    def met(self, y):
        if self.lower:
            return y < self.value if self.strict else y <= self.value
        return y > self.value if self.strict else y >= self.value


@dataclass
class Curve:
    label: str
    seeds: list  # [(name, [(x, y), ...])], one per seed
    memory: str = "transformer"  # its colour: COLORS
    style: str | None = None  # None: the next of STYLES among the panel's curves of its memory


@dataclass
class Panel:
    title: str
    quantity: str = "return"  # a key of YLABELS
    curves: list = field(default_factory=list)
    lines: list = field(default_factory=list)  # [(value, label, kind)]: recorded baselines, dashed
    bar: Bar | None = None


def quantity_of(metric):
    return "error" if "error" in metric else "success" if "success" in metric else "return"


def read_curve(path, column="eval_return"):
    """[(minutes, value)] of a CSV column; a tuple of columns gives their least (every scale's success at once)."""
    columns = column if isinstance(column, tuple) else (column,)
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if all(r.get(c) for c in columns)]
    return [(float(r["minutes"]), min(float(r[c]) for c in columns)) for r in rows]


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


INFO = {}  # a plotted run's (recipe, RESULT), by its name: where a panel looks up its env id and its bar


def seed_entry(path, column="eval_return"):
    INFO[path.stem] = (path.parent.name, result(path))
    return path.stem, read_curve(path, column)


# ------------------------------------------------------ the bars ------------------------------------------------------
def json_of(rel):
    return json.loads((RESULTS / rel).read_text())


def num(value):
    """A number as the legends write it: as recorded to two decimals, else 3 significant digits; a true minus sign."""
    text = f"{value:g}" if abs(value * 100 - round(value * 100)) < 1e-6 else f"{value:.3g}"
    return text.replace("-", "−")


def _fixed(value, label, column="eval_return"):
    return lambda recipe, name: Bar(value, f"bar: ≥ {num(value)}, {label}", column=column)


def _memory_free_best(recipe, name):
    """The best eval of the memory-free (ff) run of the same configuration (frozenlake_defaults_ff for
    frozenlake_defaults_transformer_s2)."""
    ff = RESULTS / recipe / (re.sub(r"_(transformer|gru|mamba)$", "_ff", config_of(name)) + ".csv")
    if not ff.exists():
        return None
    best = max(y for _, y in read_curve(ff))
    return Bar(best, f"bar: > {num(best)}, memory-free's best", strict=True)


def _sweep(recipe, name):
    value = json_of("point_robot/point_robot_baselines.json")["sweep"]["return"]
    return Bar(value, f"bar: > {num(value)}, the memory-free sweep's", strict=True)


def _velocity_blind(recipe, name):
    value = json_of("halfcheetah_vel/halfcheetah_vel_baselines.json")["velocity_blind"][VEL_ERROR.split("/")[1]]
    return Bar(value, f"bar: < {num(value)}, velocity-blind best", lower=True, column=VEL_ERROR, strict=True)


def _twice_random(recipe, name):
    f = RESULTS / recipe / f"{recipe}_random.json"
    random = json.loads(f.read_text())["eval/return"] if f.exists() else 0
    return Bar(2 * random, f"bar: ≥ {num(2 * random)}, twice random's") if random > 0 else None


# README's bar of runs whose --target is not it, or that were given none: by recipe, then a part of the run's name
BARS = {
    "memory_revisit": {"popgym": _fixed(0.9, "POPGym's")},
    "memory_defaults": {"popgym": _fixed(0.9, "POPGym's")},
    "frozenlake": {"": _memory_free_best},
    "keydoor": {"": _memory_free_best},
    "point_robot": {"": _sweep},
    "halfcheetah": {"": _fixed(2000, "running")},
    "halfcheetah_vel": {"": _velocity_blind},
    "multitask": {"": _fixed(0.9, "every scale", column="each success_x* of the per-scale CSV")},
    "multienv": {"": _fixed(0.9, "every env", column="each success of the per-env CSV")},
}


def bar_of(recipe, name, res=None):
    """The Bar a run is measured against (README's criterion), or None."""
    for part, rule in BARS.get(recipe, {}).items():
        if part in name:
            return rule(recipe, name)
    target, _ = target_of(res if res is not None else result(RESULTS / recipe / f"{name}.csv"))
    if target is not None:
        return Bar(target, f"bar: ≥ {num(target)}")
    if recipe.startswith("suites_"):
        return _twice_random(recipe, name)
    return None


# ---------------------------------------------------- baselines ----------------------------------------------------
def recorded_baselines(env_id, key="eval/return"):
    """Dashed lines for an env id: every `*_random.json`, `*_zero.json` (holding still), `*_memoryless.json` and
    `*_baselines.json` recorded at it (archive left out), as (value, label, kind); key: the metric drawn (a per-env
    panel's, e.g. eval/MultiScaleBandit-x1/success)."""
    lines = {}
    for f in sorted(RESULTS.glob("*/*.json")):
        if not f.stem.endswith(("_random", "_zero", "_memoryless")) or f.parent.name == "archive":
            continue
        r = json.loads(f.read_text())
        value = r.get(key, r.get("return") if key == "eval/return" else None)
        if r.get("env_id") != env_id or value is None:
            continue
        label, kind = {"best_memoryless": ("best memory-free", "memory-free"), "zero": ("holding still", "still")}.get(
            r.get("policy"), ("random", "random")
        )
        lines.setdefault((label, round(value, 3)), (value, label, kind))
    for f in sorted(RESULTS.glob("*/*_baselines.json")):  # scripted policies: {"env_id", policy: {metric: value}}
        r = json.loads(f.read_text())
        for policy, metrics in r.items() if r.get("env_id") == env_id else ():
            value = metrics.get(key.split("/")[-1]) if isinstance(metrics, dict) else None
            if value is not None:
                label, kind = SCRIPTED.get(policy, (policy.replace("_", " "), "scripted"))
                lines.setdefault((label, round(value, 3)), (value, label, kind))
    return list(lines.values())


def memory_free_runs(env_id, exclude=()):
    """Curves of the --traj-encoder ff runs recorded at an env id by any recipe (not the archive)."""
    groups = {}
    for recipe in recipes():
        for name, path in runs(recipe).items():
            res = result(path)
            if res.get("env_id") == env_id and res.get("traj_encoder") == "ff" and name not in exclude:
                groups.setdefault(config_of(name), []).append(seed_entry(path))
    return [Curve(f"memory-free ({config})", seeds, memory="ff") for config, seeds in groups.items()]


# ------------------------------------------------- a recipe's panels -------------------------------------------------
def recipe_panels(recipe):
    """One panel per task: env id, or the columns of the per-scale / per-env CSVs."""
    found = runs(recipe)
    per = {n: p for n, p in found.items() if p.with_name(f"{n}_per_scale.csv").exists()}
    per_env = {n: p for n, p in found.items() if p.with_name(f"{n}_per_env.csv").exists()}
    if per or per_env:  # one panel per column of the per-task CSVs
        kind = "_per_scale" if per else "_per_env"
        panels = {}
        for name, path in (per or per_env).items():
            extra = path.with_name(f"{name}{kind}.csv")
            columns = next(csv.reader(extra.open()))[3:]
            for col in columns:
                env, _, metric = col.partition("/") if kind == "_per_env" else (col, "", "success")
                title = env.replace("success_", "reward scale ").removesuffix("-v0")
                panel = panels.get(col)
                if panel is None:
                    panel = panels[col] = Panel(title, quantity_of(metric), bar=bar_of(recipe, name))
                    one = env.replace("success_x", "MultiScaleBandit-x")  # a scale's own env id: its baselines
                    env_id = f"envs:{one}" + ("" if re.search(r"-v\d+$", one) else "-v0")
                    metric_key = f"eval/{col}" if kind == "_per_env" else f"eval/{one}/success"
                    panel.lines = recorded_baselines(env_id, metric_key)
                seeds = [(name, read_curve(extra, col))]
                amago = name.startswith(recipe + "_amago_")
                label = "AMAGO" if amago else ("AMAGO-2" if "_amago2_" in name else config_of(name))
                label = LABELS.get(label, label)
                curve = next((c for c in panel.curves if c.label == label), None)  # the seeds of one configuration
                if curve is None:
                    panel.curves.append(Curve(label, seeds, memory=result(path).get("traj_encoder", "transformer")))
                else:
                    curve.seeds += seeds
        for panel in panels.values():
            panel.curves.sort(key=lambda c: (c.memory == "ff", c.label == "AMAGO"))  # AMAGO-2 first
        return list(panels.values())
    panels = {}
    for name, path in found.items():
        res = result(path)
        env = res.get("env_id", recipe)
        panel = panels.setdefault(env, Panel(env.removeprefix("envs:").removesuffix("-v0")))
        if panel.bar is None:
            panel.bar = bar_of(recipe, name, res)
        sampled = "eval_sampled_return" in open(path).readline()  # --eval-sampled-too: the sampled policy beside
        for col, policy in [("eval_return", "greedy" if sampled else None)] + [
            ("eval_sampled_return", "sampled")
        ] * sampled:
            config = config_of(name) + (f" {policy}" if policy else "")
            curve = next((c for c in panel.curves if c.label == config), None)
            if curve is None:
                curve = Curve(config, [], memory=res.get("traj_encoder", "transformer"))
                panel.curves.append(curve)
            curve.seeds.append(seed_entry(path, col))
    for env, panel in panels.items():
        names = {s[0] for c in panel.curves for s in c.seeds}
        panel.curves += memory_free_runs(env, exclude=names)
        # the runs first (the base configuration, the shortest name, first: a solid line), the memory-free ones after
        panel.curves.sort(key=lambda c: (c.memory == "ff", len(c.label), c.label))
        panel.lines = recorded_baselines(env)
        for data in (RESULTS / recipe).glob("*_data.json"):  # an offline dataset: its policy's greedy return
            panel.lines.append((json.loads(data.read_text())["greedy"]["eval/return"], "the data's policy", "scripted"))
        shared = common_tokens([c.label for c in panel.curves if c.memory != "ff"])
        alone = len([c for c in panel.curves if c.memory != "ff"]) == 1
        for curve in panel.curves:  # a name for each curve: what sets it apart from the others in its panel
            config, _, policy = curve.label.partition(" ")
            if curve.memory == "ff":
                if config.startswith(recipe + "_"):  # this recipe's own memory-free run
                    curve.label = LABELS.get(config) or f"memory-free ({config.removeprefix(recipe + '_')})"
                continue
            own = [t for t in config.removeprefix(recipe + "_").split("_") if t not in shared and not alone]
            label = LABELS.get(config) or " ".join(own) or ("" if policy else curve.memory)
            curve.label = f"{label} {policy}".strip()
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


OTHER_CSV = ("_scalars", "_attempts", "_episodes")  # CSVs beside a run's that are not its eval curve


def seeds(pattern, column="eval_return"):
    """The seeds of one configuration: recorded runs matching a glob under results/ (continued runs: the last part)."""
    paths = [p for p in sorted(RESULTS.glob(pattern + ".csv")) if not continued(p) and not p.stem.endswith(OTHER_CSV)]
    if not paths:
        raise FileNotFoundError(f"no recorded run matches benchmarks/results/{pattern}.csv")
    return [seed_entry(p, column) for p in paths]


def row_panel(title, *curves, quantity="return", lines=None):
    """A panel of README's figure: its bar is its first run's (bar_of), its baselines those recorded at that run's env
    id (random and memory-free policies), unless given."""
    name = curves[0].seeds[0][0]
    recipe, res = INFO[name]
    bar = bar_of(recipe, re.sub(r"_per_(scale|env)$", "", name), res)
    if lines is None:
        lines = [ln for ln in recorded_baselines(res["env_id"]) if ln[2] != "scripted"]
    return Panel(title, quantity, list(curves), lines, bar)


def front_panels():
    """README's results table, row by row (the same order and names; CartPole's panel draws its GRU runs beside).
    Greedy evals only: the table's."""
    mr = "memory_revisit/memory_revisit_"
    scales = ("success_x1", "success_x10", "success_x100")
    bandit_random = json_of("multienv/multienv_x1_random.json")["eval/MultiScaleBandit-x1/success"]

    def suite(title, recipe):
        return row_panel(title, Curve("transformer", seeds(f"{recipe}/{recipe}*")))

    return [
        row_panel("LunarLander", Curve("transformer", seeds("lunarlander_alone/lunarlander_alone_transformer_s?"))),
        row_panel(
            "CartPole",
            Curve("transformer", seeds("cartpole/cartpole_transformer_s?")),
            Curve("gru", seeds("cartpole/cartpole_gru_s?"), memory="gru"),
        ),
        row_panel("HalfCheetah", Curve("transformer", seeds("halfcheetah/halfcheetah_transformer_s?"))),
        row_panel("T-Maze H = 100", Curve("transformer", seeds(mr + "tmaze_h100_s?"))),
        row_panel(
            "T-Maze H = 500",
            Curve("tuned recipe", seeds("tmaze_h500/tmaze_h500_transformer")),
            Curve("the defaults", seeds(mr + "tmaze_h500_s?*")),
        ),
        row_panel(
            "Pixel T-Maze",
            Curve("transformer", seeds("pixel_tmaze/pixel_tmaze_transformer*")),
            Curve("memory-free (ff)", seeds("pixel_tmaze/pixel_tmaze_ff*"), memory="ff"),
        ),
        row_panel("POPGym CountRecall", Curve("transformer", seeds(mr + "popgym_countrecall_s?*"))),
        row_panel(
            "Meta-Frozen-Lake",
            Curve("transformer", seeds("frozenlake/frozenlake_defaults_transformer*")),
            Curve("memory-free (ff)", seeds("frozenlake/frozenlake_defaults_ff"), memory="ff"),
        ),
        row_panel(
            "Dark Key-Door",
            Curve("transformer", seeds("keydoor/keydoor_transformer")),
            Curve("memory-free (ff)", seeds("keydoor/keydoor_ff"), memory="ff"),
        ),
        row_panel("Sparse point robot", Curve("transformer", seeds("point_robot/point_robot_transformer_s*"))),
        row_panel(
            "HalfCheetah-Vel",
            Curve("transformer", seeds("halfcheetah_vel/halfcheetah_vel_transformer_s?*_per_env", VEL_ERROR)),
            quantity="error",
            lines=recorded_baselines("envs:HalfCheetahVel-Even8-v0", f"eval/{VEL_ERROR}"),
        ),
        row_panel(
            "MultiScaleBandit, least of 3 scales",
            Curve("AMAGO-2", seeds("multitask/multitask_amago2_s?_per_scale", scales)),
            Curve("AMAGO", seeds("multitask/multitask_amago_s?_per_scale", scales)),
            quantity="success",
            lines=[(bandit_random, "random", "random")],
        ),
        suite("XLand-MiniGrid 9×9", "suites_xland_cpu"),
        suite("BabyAI, two levels", "suites_babyai_easy"),
        suite("Meta-World reach", "suites_metaworld_reach50_nopuck_cpu"),
    ]


# ------------------------------------------------------ drawing ------------------------------------------------------
def value_at(pts, x):
    """A seed's value at minute x, linear between its evals (x within them)."""
    i = next(i for i, (px, _) in enumerate(pts) if px >= x)
    if pts[i][0] == x or i == 0:
        return pts[i][1]
    (x0, y0), (x1, y1) = pts[i - 1], pts[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def mean_where_all(curves):
    """-> (xs, mean): the mean of the seeds on the union of their eval minutes, only where every seed has data (from
    the last seed's first eval to the first seed's last), each interpolated between its evals."""
    curves = [pts for pts in curves if pts]
    if not curves:
        return [], []
    start, stop = max(pts[0][0] for pts in curves), min(pts[-1][0] for pts in curves)
    xs = sorted({x for pts in curves for x, _ in pts if start <= x <= stop})
    return xs, [sum(value_at(pts, x) for pts in curves) / len(curves) for x in xs]


def stopped_at_bar(pts, bar, res=None):
    """Whether a seed stopped at the bar (run.py --stop-at-target): its last eval is its first at the bar, and its run
    (its RESULT, where known) was given a --target and reached it; a run that ended at its budget or by hand has none
    or ran past it."""
    if bar is None or not pts or (res is not None and not target_of(res)[1]):
        return False
    first = next((i for i, (_, y) in enumerate(pts) if bar.met(y)), None)
    return first == len(pts) - 1


def draw_panel(ax, panel):
    fs = 8
    used = {}  # memory -> configurations drawn: its next line style
    stars = False
    for curve in panel.curves:
        color = COLORS.get(curve.memory, "0.3")
        style = curve.style or STYLES[used.get(curve.memory, 0) % len(STYLES)]
        used[curve.memory] = used.get(curve.memory, 0) + 1
        pts_list = [pts for _, pts in curve.seeds if pts]
        n = len(pts_list)
        label = curve.label + (f" ({n} seeds)" if n > 1 else "")
        if n == 1:
            xs, ys = zip(*pts_list[0])
            ax.plot(xs, ys, style, color=color, lw=1.5, label=label, marker="o" if len(xs) == 1 else None, ms=3)
        else:
            for pts in pts_list:  # each seed, thin
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, lw=0.7, alpha=0.45)
            xs, mean = mean_where_all(pts_list)
            ax.plot(xs, mean, style, color=color, lw=2.0, label=label, marker="o" if len(xs) == 1 else None, ms=3)
        for name, pts in curve.seeds:
            if stopped_at_bar(pts, panel.bar, INFO.get(name, (None, None))[1]):
                ax.plot(*pts[-1], "*", color=color, ms=8, mec="black", mew=0.5)
                stars = True
    if stars:
        ax.plot([], [], "*", color="0.6", ms=8, mec="black", mew=0.5, label="stopped at the bar")
    if panel.bar is not None:
        ax.axhline(panel.bar.value, color=BAR_COLOR, ls=":", lw=1.5, label=panel.bar.label)
    labelled, scripted = set(), iter(SCRIPTED_LOOKS * 3)
    for value, label, kind in panel.lines:
        if panel.bar is not None and round(value, 6) == round(panel.bar.value, 6):
            continue  # the bar is this baseline, and says so
        color, ls = next(scripted) if kind == "scripted" else (LINE_COLORS[kind], LINE_STYLES[kind])
        ax.axhline(value, color=color, ls=ls, lw=1, label=None if label in labelled else label)
        labelled.add(label)
    ax.set_title(panel.title, fontsize=fs + 1.5)
    ax.set_xlabel("minutes on 2 CPU cores", fontsize=fs)
    ax.set_ylabel(YLABELS[panel.quantity], fontsize=fs)
    ax.tick_params(labelsize=fs - 0.5)
    ax.grid(alpha=0.3)
    entries = len(ax.get_legend_handles_labels()[1])
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi + (hi - lo) * 0.16 * entries)  # the legend's own room above the curves, not on top of them
    ax.legend(fontsize=fs - 1, loc="upper left", framealpha=0.85, handlelength=2.2)


def draw(panels, path, title, cols):
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(cols, len(panels))
    rows = -(-len(panels) // cols)
    w, h = (3.9, 3.0) if len(panels) > 1 else (6.0, 4.0)
    lines = [ln for part in title.split("\n") for ln in textwrap.wrap(part, int(w * cols * 13))]
    top = 0.22 * len(lines) + 0.1  # inches for the title
    fig, axes = plt.subplots(rows, cols, figsize=(w * cols, h * rows + top), squeeze=False, layout="constrained")
    for ax, panel in zip(axes.flat, panels):
        draw_panel(ax, panel)
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    fig.suptitle("\n".join(lines), fontsize=10)
    fig.savefig(path, dpi=100)
    plt.close(fig)


KEY = (
    "thin: each seed; thick: their mean where every seed has data; ★: a seed stopped at the bar. "
    "Red dotted: the bar; dashed: random (black), memory-free (purple); one colour per memory."
)


def plot(recipe):
    if recipe == "results":
        panels = front_panels()
        title = f"amago-clean on 2 CPU cores, greedy evals: README's results table, row by row\n{KEY}"
        draw(panels, RESULTS / "results.png", title, 3)
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
    draw(panels, RESULTS / f"{recipe}.png", f"{recipe}\n{KEY}", 3)
    curves = max(len(p.curves) for p in panels)
    print(f"wrote benchmarks/results/{recipe}.png ({len(panels)} panels, at most {curves} curves in one)")


def seed_table(recipe):
    """A recipe's runs as a Markdown table: when each first reached its bar (bar_of: README's criterion, on the eval
    return), its final eval, the mean of its last three (greedy; sampled, where evaluated too) and its length. A
    continued run is one row, under the name of its last part."""
    table = []
    for name, path in runs(recipe).items():
        res = result(path)
        if not res:
            continue
        rows = list(csv.DictReader(path.open()))
        bar = bar_of(recipe, name, res)
        bar = bar if bar is not None and bar.column == "eval_return" else None
        hit = next((r for r in rows if bar is not None and bar.met(float(r["eval_return"]))), None)
        target, reached = target_of(res)
        minute = res["first_minute_at_or_above"][str(target)] if bar and bar.value == target and reached else None
        sign = bar.label.split()[1] if bar else ""  # ≥ or >, as the bar is written
        at = (
            f"{sign} {num(bar.value)}: **{minute or float(hit['minutes']) + 1e-9:.1f}**, {int(hit['env_steps']):,}"
            if hit
            else "never"
        )
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
