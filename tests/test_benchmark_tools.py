"""benchmarks/ helpers: run.py's per-env curve of a multi-env run and its stops, and random_baseline.py's uniform-random
policy."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "benchmarks" / "probes")]  # the tools, and the probes
from run import per_env_curve, target_reached  # noqa: E402

from common.logs import eval_curve  # noqa: E402


def test_per_env_curve_has_one_column_per_env_at_the_evals_all_envs_logged():
    t0 = 1000.0
    scalars = {
        "eval/a/success": [(t0 + 60, 10, 0.5), (t0 + 120, 20, 1.0)],
        "eval/b/success": [(t0 + 60, 10, 0.25), (t0 + 120, 20, 0.75), (t0 + 180, 30, 1.0)],
        "eval/a/return": [(t0 + 60, 10, 9.0)],  # another metric: not a column
        "eval/success": [(t0 + 60, 10, 0.1)],  # not per env
        "charts/updates": [(t0 + 59, 10, 4), (t0 + 119, 20, 8)],
    }
    lines = per_env_curve(scalars, t0, "success").splitlines()
    assert lines == [
        "minutes,env_steps,updates,a/success,b/success",
        "1.00,10,4,0.500,0.250",
        "2.00,20,8,1.000,0.750",  # the third eval: only b logged it
    ]
    assert per_env_curve(scalars, t0, "attempt 1 success") is None  # no such metric: no file


def test_curves_take_the_update_count_by_time_so_an_offline_run_has_it():
    """An offline run logs every eval at env step 0: the update count at each eval is the one logged before it."""
    t0 = 0.0
    scalars = {
        "charts/updates": [(10.0, 0, 200), (20.0, 0, 400), (30.0, 0, 600)],
        "eval/return": [(5.0, 0, 9.0), (11.0, 0, 50.0), (31.0, 0, 500.0)],
    }
    assert [(u, r) for _, _, u, r in eval_curve(scalars, t0)] == [(0, 9.0), (200, 50.0), (600, 500.0)]


@pytest.mark.parametrize("env_id,low,high", [("CartPole-v1", 12, 40), ("MountainCarContinuous-v0", -80, 0)])
def test_random_baseline_plays_uniform_random_actions(env_id, low, high):
    """CartPole's uniform-random return is ~22 (Discrete); MountainCarContinuous pays -0.1 a^2 per step with uniform
    actions in [-1, 1] over 999 steps: ~-33 (Box, rescaled to the env's bounds)."""
    cmd = [sys.executable, "benchmarks/random_baseline.py", "--env-id", env_id, "--episodes", "8", "--num-envs", "4"]
    out = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, check=True, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    result = json.loads(out.stdout.splitlines()[-1].removeprefix("RESULT "))
    assert result["policy"] == "uniform_random" and low < result["eval/return"] < high
    assert result[f"eval/{env_id}/return"] == result["eval/return"]


def test_run_py_never_mixes_a_new_run_with_an_earlier_runs_logs():
    """A name whose scratch output (benchmarks/out/<name>/runs) exists is refused: its old tensorboard logs would be
    read back as the new run's curve. --overwrite clears it first."""
    name = f"test_tools_{os.getpid()}"
    out = ROOT / "benchmarks/out" / name
    (out / "runs" / name).mkdir(parents=True)
    try:
        cmd = [sys.executable, "benchmarks/run.py", "--minutes", "0.01", "--name", name, "--", "--env-id", "x"]
        res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        assert res.returncode == 2 and "holds an earlier run's output; pass --overwrite" in res.stderr
        assert (out / "runs" / name).is_dir()  # refused: nothing removed
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_run_py_records_nothing_when_the_run_fails():
    name = f"test_tools_fail_{os.getpid()}"
    recipe = ROOT / "benchmarks/results" / name
    cmd = [sys.executable, "benchmarks/run.py", "--minutes", "1", "--recipe", name, "--name", name, "--"]
    try:
        res = subprocess.run([*cmd, "--env-id", "NoSuchEnv-v0"], cwd=ROOT, capture_output=True, text=True)
        assert res.returncode != 0 and "the run failed (exit code 2)" in res.stderr and "RESULT" not in res.stdout
        assert not recipe.exists()
    finally:
        shutil.rmtree(ROOT / "benchmarks/out" / name, ignore_errors=True)
        shutil.rmtree(recipe, ignore_errors=True)


def test_run_py_stopped_by_sigterm_records_what_the_run_did():
    """`kill <run.py>` mid-run ends it as its budget would: the script stops after its step with a checkpoint saved,
    and run.py records the curve and the RESULT of what ran."""
    recipe = f"test_sigterm_{os.getpid()}"
    results, out = ROOT / "benchmarks/results" / recipe, ROOT / "benchmarks/out" / recipe
    flags = ["--env-id", "CartPole-v0", "--timesteps-per-epoch", "25", "--eval-interval", "1", "--eval-episodes", "8"]
    cmd = [sys.executable, "benchmarks/run.py", "--minutes", "10", "--recipe", recipe, "--name", recipe, "--", *flags]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"}, stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.time() + 120
        while not target_reached(out / "runs" / recipe, float("-inf")):  # the run's first eval
            assert time.time() < deadline and proc.poll() is None, "no eval within 2 minutes"
            time.sleep(1)
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0 and "stopping: SIGTERM" in stdout
        result = json.loads(stdout.splitlines()[-1].removeprefix("RESULT "))
        assert result["wall_s"] < 120 and result["env_steps"] > 0 and result["exit_code"] in (0, -15, 143)
        recorded = json.loads((results / f"{recipe}.json").read_text())
        assert recorded["name"] == recipe and len((results / f"{recipe}.csv").read_text().splitlines()) > 1
        assert (out / "runs" / recipe / "checkpoint.pt").exists()
        # a run whose run.py was killed (a restart) is recorded from its logs alone: the same evals, nothing started
        curve = (results / f"{recipe}.csv").read_text().splitlines()
        (results / f"{recipe}.json").unlink(), (results / f"{recipe}.csv").unlink()
        again = subprocess.run([*cmd[:2], "--record-only", *cmd[2:]], cwd=ROOT, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert json.loads((results / f"{recipe}.json").read_text())["exit_code"] == "record-only"
        redo = (results / f"{recipe}.csv").read_text().splitlines()
        assert [r.split(",")[1:] for r in redo] == [r.split(",")[1:] for r in curve]  # steps, updates, returns
    finally:
        proc.kill()
        shutil.rmtree(results, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)


def test_run_py_resume_from_continues_a_recorded_run_and_its_curve():
    """--resume-from NAME continues NAME's checkpoint in a copy of its output folder: the new curve starts with NAME's
    recorded rows and goes on from its minutes, env steps and updates; NAME's own folder and files stay as they were. A
    resumed run can be resumed again. Without a recorded result to continue, it is refused."""
    recipe = f"test_resume_{os.getpid()}"
    first, second, third = f"{recipe}_a", f"{recipe}_b", f"{recipe}_c"
    results, out = ROOT / "benchmarks/results" / recipe, ROOT / "benchmarks/out"
    # each run ends at its first eval (any return meets a target of -1e9), however busy the machine
    run = [sys.executable, "benchmarks/run.py", "--minutes", "3", "--target=-1e9", "--stop-at-target"]
    run += ["--recipe", recipe]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    flags = ["--env-id", "CartPole-v0", "--timesteps-per-epoch", "25", "--eval-interval", "1", "--eval-episodes", "8"]
    try:
        missing = subprocess.run(
            [*run, "--name", second, "--resume-from", first], cwd=ROOT, capture_output=True, text=True
        )
        assert missing.returncode == 2 and "--resume-from" in missing.stderr and not (out / second).exists()
        subprocess.run([*run, "--name", first, "--", *flags], cwd=ROOT, env=env, check=True, capture_output=True)
        snapshot = {f: f.stat().st_mtime_ns for f in (out / first).rglob("*")}
        res = subprocess.run(
            [*run, "--name", second, "--resume-from", first],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        result = json.loads(res.stdout.splitlines()[-1].removeprefix("RESULT "))
        before = json.loads((results / f"{first}.json").read_text())
        rows_before = (results / f"{first}.csv").read_text().splitlines()
        rows = (results / f"{second}.csv").read_text().splitlines()
        assert len(rows_before) > 1, "the first run recorded no eval: nothing to continue from"
        assert rows[: len(rows_before)] == rows_before and len(rows) > len(rows_before)
        last = [float(x) for x in rows_before[-1].split(",")]
        new = [[float(x) for x in r.split(",")] for r in rows[len(rows_before) :]]
        assert all(r[0] > last[0] and r[1] > last[1] and r[2] > last[2] for r in new)  # minutes, env steps, updates
        assert result["resumed_from"] == first and result["env_id"] == "CartPole-v0"  # the earlier run's, not a default
        assert result["wall_s"] > before["wall_s"] and result["env_steps"] > before["env_steps"]
        assert {f: f.stat().st_mtime_ns for f in (out / first).rglob("*")} == snapshot  # the earlier run is untouched
        assert "resumed" in (out / second / "stdout.log").read_text()
        subprocess.run(
            [*run, "--name", third, "--resume-from", second], cwd=ROOT, env=env, check=True, capture_output=True
        )
        itself = subprocess.run(
            [*run, "--name", second, "--resume-from", second, "--overwrite"], cwd=ROOT, capture_output=True, text=True
        )
        assert itself.returncode == 2 and "is --name" in itself.stderr  # refused before --overwrite removes anything
        assert (out / second / "runs").is_dir() and (results / f"{second}.csv").exists()
        again = (results / f"{third}.csv").read_text().splitlines()
        assert again[: len(rows)] == rows and float(again[-1].split(",")[1]) > new[-1][1]
    finally:
        shutil.rmtree(results, ignore_errors=True)
        for name in (first, second, third):
            shutil.rmtree(out / name, ignore_errors=True)


def test_plot_draws_a_continued_run_once_as_its_continuation_and_the_seeds_of_a_configuration_as_one_curve(
    tmp_path, monkeypatch
):
    import plot

    (tmp_path / "r").mkdir()
    rows = "minutes,env_steps,updates,eval_return\n1.0,10,5,0.5\n"
    runs = {"r_a_s1": rows, "r_a_s1_resumed": rows + "2.0,20,10,0.9\n", "r_a_s2": rows, "r_ff_s1": rows}
    for name, text in runs.items():
        (tmp_path / "r" / f"{name}.csv").write_text(text)
        enc = "ff" if "_ff_" in name else "transformer"
        (tmp_path / "r" / f"{name}.json").write_text(json.dumps({"env_id": "E-v0", "traj_encoder": enc}))
    monkeypatch.setattr(plot, "RESULTS", tmp_path)
    [panel] = plot.recipe_panels("r")
    curves = {c.label: (sorted(s[0] for s in c.seeds), c.memory) for c in panel.curves}
    assert curves == {
        "transformer": (["r_a_s1_resumed", "r_a_s2"], "transformer"),
        "memory-free (ff)": (["r_ff_s1"], "ff"),
    }


def test_plot_seeds_takes_a_continued_runs_per_env_table_from_its_continuation(tmp_path, monkeypatch):
    """seeds(): <run>_per_env.csv goes on as <run>_resumed_per_env.csv, so a glob over a configuration's per-env
    tables gives each seed once, the continued one from its last part."""
    import plot

    (tmp_path / "r").mkdir()
    rows = "minutes,env_steps,updates,E-v0/m\n1.0,10,5,0.5\n"
    for name in ("r_a_s1_per_env", "r_a_s1_resumed_per_env", "r_a_s2_per_env", "r_a_s3", "r_a_s3_resumed"):
        (tmp_path / "r" / f"{name}.csv").write_text(rows)
    monkeypatch.setattr(plot, "RESULTS", tmp_path)
    assert [s[0] for s in plot.seeds("r/r_a_s?*_per_env", "E-v0/m")] == ["r_a_s1_resumed_per_env", "r_a_s2_per_env"]
    assert [s[0] for s in plot.seeds("r/r_a_s3*", "E-v0/m")] == ["r_a_s3_resumed"]


def test_plot_draws_scripted_baselines_at_their_env_id_and_metric(tmp_path, monkeypatch):
    """A `*_baselines.json` (scripted policies' metrics) gives one dashed line per policy at its env id, for the
    panel's metric (the rollout return, or one attempt's), named as README's row names them and kinded for its colour
    (random, memory-free, other scripted); other env ids get none."""
    import plot

    (tmp_path / "r").mkdir()
    policies = {"random": {"return": 0.4}, "sweep": {"return": 93.7, "attempt 1 return": 31.2}, "aim": {"return": 150}}
    (tmp_path / "r" / "r_baselines.json").write_text(json.dumps({"env_id": "E-v0", "episodes": 10, **policies}))
    monkeypatch.setattr(plot, "RESULTS", tmp_path)
    assert sorted(plot.recorded_baselines("E-v0")) == [
        (0.4, "random", "random"),
        (93.7, "memory-free sweep", "memory-free"),
        (150, "driven at the known goal", "scripted"),
    ]
    assert plot.recorded_baselines("E-v0", "eval/E-v0/attempt 1 return") == [(31.2, "memory-free sweep", "memory-free")]
    assert plot.recorded_baselines("Other-v0") == []


def test_plot_mean_only_where_every_seed_has_data_so_a_stopped_seed_never_pulls_it_down():
    """The mean of a configuration's seeds runs from the last seed's first eval to the first seed's last: a seed that
    stops early (at its bar) ends the mean, and the others go on as their own thin lines; a seed whose last eval is
    its first at the bar stopped there (a star)."""
    from plot import Bar, mean_where_all, stopped_at_bar

    a = [(1.0, 0.0), (3.0, 1.0)]  # met the bar 1.0 at its last eval, 3 min, and stopped
    b = [(2.0, 0.5), (4.0, 0.5), (6.0, 0.7)]
    xs, mean = mean_where_all([a, b])
    assert xs == [2.0, 3.0] and mean == [0.5, 0.75]  # a at 2.0 is 0.5 (between its evals); nothing past 3 min
    bar = Bar(1.0, "bar: ≥ 1")
    assert stopped_at_bar(a, bar) and not stopped_at_bar(b, bar)
    assert stopped_at_bar(a, bar, {"first_minute_at_or_above": {"1.0": 3.0}})  # given the bar as --target, met
    assert not stopped_at_bar(a, bar, {"first_minute_at_or_above": None})  # no --target: it ran to its budget
    assert not stopped_at_bar([(1.0, 1.0), (2.0, 1.0)], bar)  # met the bar, then ran on: not stopped there
    low = Bar(0.75, "bar: < 0.75", lower=True, strict=True)  # an error: met below it
    assert stopped_at_bar([(1.0, 1.2), (2.0, 0.7)], low) and not stopped_at_bar([(1.0, 1.2), (2.0, 0.75)], low)
    assert mean_where_all([a, [(4.0, 1.0)]]) == ([], [])  # no minute where both have data


def test_plot_bars_are_readmes_criteria():
    """bar_of gives each recorded run README's bar: its --target, POPGym's 0.9 over another target, above the
    memory-free run's best or sweep, below the velocity-blind error, twice random's return for a suite."""
    from plot import bar_of

    lunar = bar_of("lunarlander_alone", "lunarlander_alone_transformer_s1")
    assert (lunar.value, lunar.label, lunar.met(200), lunar.met(199.9)) == (200, "bar: ≥ 200", True, False)
    assert bar_of("memory_revisit", "memory_revisit_popgym_countrecall_s2_resumed").value == 0.9  # its --target: 0.95
    sweep = bar_of("point_robot", "point_robot_transformer_s2")
    assert sweep.value == 93.75 and sweep.met(94.8) and not sweep.met(93.75)
    assert bar_of("frozenlake", "frozenlake_defaults_transformer_s2").value == 2.3  # frozenlake_defaults_ff's best
    vel = bar_of("halfcheetah_vel", "halfcheetah_vel_transformer_s2")
    assert vel.lower and vel.value == 0.75 and vel.met(0.7) and not vel.met(0.8)
    assert round(bar_of("suites_xland_cpu", "suites_xland_cpu_s1").value, 3) == 1.668  # twice random's 0.834
    assert bar_of("mazerunner", "mazerunner_relabel_none_s1") is None


def test_plot_draws_each_panels_bar_one_colour_per_memory_and_one_label_per_quantity(tmp_path):
    """Every panel draws its bar as a line named in the legend, a star entry only where a seed stopped at the bar;
    a memory has one colour in every panel; a quantity one y-label, "lower is better" on the error's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from plot import COLORS, YLABELS, Bar, Curve, Panel, draw_panel

    stopped = Curve("gru", [("s1", [(1.0, 100.0), (2.0, 480.0)]), ("s2", [(1.0, 90.0), (5.0, 120.0)])], memory="gru")
    running = Curve("transformer", [("s1", [(1.0, 10.0), (5.0, 20.0)])])
    for curves, stars in (([running, stopped], True), ([stopped, running], True), ([running], False)):
        fig, ax = plt.subplots()
        draw_panel(ax, Panel("CartPole", curves=curves, lines=[(23.0, "random", "random")], bar=Bar(475, "bar: ≥ 475")))
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert "bar: ≥ 475" in legend and "random" in legend
        assert ("stopped at the bar" in legend) == stars, legend
        by_label = {ln.get_label(): ln.get_color() for ln in ax.lines}
        assert by_label["gru (2 seeds)" if stars else "transformer"] == COLORS["gru" if stars else "transformer"]
        if stars:
            assert by_label["transformer"] == COLORS["transformer"]  # whichever curve comes first
        assert ax.get_ylabel() == YLABELS["return"]
        plt.close(fig)
    fig, ax = plt.subplots()
    draw_panel(ax, Panel("HalfCheetah-Vel", "error", [running], bar=Bar(0.75, "bar: < 0.75", lower=True)))
    assert "lower is better" in ax.get_ylabel()
    plt.close(fig)


def test_plot_readmes_figure_has_a_panel_per_row_each_with_its_bar_and_one_colour_per_memory():
    """README's figure from the recorded results: every panel draws a bar; CartPole's gru is the same colour as in
    the cartpole recipe's own figure; a seed that stopped at its bar (CartPole) is a star, not a drop of the mean."""
    import plot

    panels = plot.front_panels()
    assert all(p.bar is not None for p in panels), [p.title for p in panels if p.bar is None]
    [front] = [p for p in panels if p.title == "CartPole"]
    [own] = plot.recipe_panels("cartpole")
    assert {c.label: c.memory for c in front.curves} == {"transformer": "transformer", "gru": "gru"}
    assert {c.memory for c in own.curves} == {"transformer", "gru"}
    assert all(plot.stopped_at_bar(pts, front.bar) for c in front.curves for _, pts in c.seeds)
    [vel] = [p for p in panels if p.title == "HalfCheetah-Vel"]
    assert vel.quantity == "error" and vel.bar.lower


def test_tmaze_episodes_counts_walks_turns_and_rewards_from_the_replay_files(tmp_path, monkeypatch):
    import tmaze_episodes

    H, run = 3, tmp_path / "run"
    (run / "runs" / "r").mkdir(parents=True)
    (run / "runs" / "r" / "flags.json").write_text("{}")
    (run / "buffers" / "r").mkdir(parents=True)
    right, up = [1, 0, 0, 0], [0, 1, 0, 0]
    corridor, junction, goal = [0, 0], [1, 0], [1, 1]
    episodes = [  # (observations H + 2 rows, actions H + 1, final reward)
        ([corridor] * (H + 1) + [corridor], [up] + [right] * H, 0.0),  # one step lost: never at the junction
        ([corridor] * H + [junction, junction], [right] * (H + 1), 0.0),  # on time, no turn
        ([corridor] * H + [junction, goal], [right] * H + [up], 1.0),  # on time, turned, rewarded
    ]
    for i, (obs, actions, reward) in enumerate(episodes):
        rewards = np.zeros(H + 1, np.float32)
        rewards[-1] = reward
        f = run / "buffers" / "r" / f"{i}.npz"
        np.savez(f, obs_observation=np.array(obs, np.float32), actions=np.array(actions, np.float32), rewards=rewards)
        os.utime(f, (time.time() + 60 * (i + 1),) * 2)  # written one minute apart, after the run's start
    rows = tmaze_episodes.episodes(run, H, new_only=False)
    assert [r[1:4] for r in rows] == [(False, False, False), (True, False, False), (True, True, True)]
    assert [round(r[4], 3) for r in rows] == [round(2 / 3, 3), 1.0, 1.0]
    assert [round(r[0]) for r in rows] == [1, 2, 3]  # minutes since the run's flags were written
    assert (
        tmaze_episodes.horizon("envs:TMazePassive-H500-v0") == 500
        and tmaze_episodes.horizon("envs:TMazePassive-v0") == 50
    )


def test_compare_reference_sizes_match_the_reference_parameter_counts():
    """compare_reference.py's sizes, as flags of our script, give exactly the trainable parameter counts of the
    reference sized through gin (274,084 at the CPU size, 3,536,560 at its paper size; GRU 223,116)."""
    import compare_reference as cr
    import gymnasium as gym
    import tyro

    import amago_agent as amago

    _, act, obs = amago.amago_spaces(gym.spaces.Box(-1, 1, (8,)), gym.spaces.Discrete(4))  # LunarLander's spaces
    expected = {"update_small": 274_084, "update_paper": 3_536_560, "update_gru": 223_116, "ctx_L1024": 274_084}
    for bench, n in expected.items():
        args = tyro.cli(amago.Args, args=["--env-id", cr.ENV_ID, *cr.our_flags(*cr.BENCHES[bench])])
        agent = amago.Agent(args, obs["obs"], act)
        assert sum(p.numel() for p in agent.trainable_parameters()) == n, bench


def test_compare_reference_summary_pools_every_recorded_pair_of_a_bench_and_thread_count(tmp_path):
    """--summarize: the pairs of every file (any name, any day) of one bench and thread count are pooled, pair by pair
    (ours / reference), other thread counts kept apart; the table gives median [min-max] and the pair count."""
    import compare_reference as cr

    def record(name, bench, threads, reference, ours, rss_ref, rss_ours):
        r = {"bench": bench, "threads": threads, "reference": reference, "ours": ours}
        r |= {"peak_rss_mb_reference": rss_ref, "peak_rss_mb_ours": rss_ours}
        (tmp_path / name).write_text(json.dumps(r))

    record("collect.json", "collect", 1, [100, 100], [200, 300], [400, 400], [300, 360])  # ratios 2, 3
    record("collect_1t_2026-12-01.json", "collect", 1, [100], [250], [400], [320])
    record("collect_2threads.json", "collect", 2, [100], [150], [400], [400])  # 1.5: another thread count
    (tmp_path / "notes.json").write_text(json.dumps({"machine": "not a pair"}))
    groups = cr.pooled(tmp_path)
    assert list(groups) == [("collect", 1), ("collect", 2)]
    assert sorted(groups["collect", 1]["ratio"]) == [2.0, 2.5, 3.0] and len(groups["collect", 1]["files"]) == 2
    table = cr.summary_table(groups).splitlines()  # one row per bench; memory over all of its pairs
    assert (
        table[0]
        == "| bench | 1 thread: ours / reference | 2 threads: ours / reference | peak memory, ours / reference |"
    )
    assert table[2] == "| `collect` | 2.50 [2.00–3.00], 3 pairs | 1.50 [1.50–1.50], 1 pair | 0.85 [0.75–1.00] |"


def test_compare_reference_summary_filters_by_date_and_commit_and_names_what_it_leaves_out(tmp_path):
    """--since / --commit: only the files recorded on that day or later, or at those commits, are pooled; a file
    without the field (a retired file brought back by a merge) passes neither, and every file left out is named."""
    import compare_reference as cr

    def record(name, ours, **fields):
        r = {"bench": "update_small", "threads": 1, "reference": [10.0], "ours": [ours], **fields}
        (tmp_path / name).write_text(json.dumps(r | {"peak_rss_mb_reference": [400], "peak_rss_mb_ours": [300]}))

    record("old.json", 12.0, date="2026-11-24", commit="38cfab3")
    record("new.json", 15.0, date="2026-11-28", commit="1e14595")
    record("newer.json", 14.0, date="2026-12-01", commit="abc1234-dirty")
    record("undated.json", 11.0)
    skipped = []
    groups = cr.pooled(tmp_path, since="2026-11-28", skipped=skipped)
    assert sorted(groups["update_small", 1]["ratio"]) == [1.4, 1.5]
    assert skipped == ["old.json: date 2026-11-24, before 2026-11-28", "undated.json: date None, before 2026-11-28"]
    assert cr.pooled(tmp_path, commits=["1e1", "abc1234"])["update_small", 1]["files"] == ["new.json", "newer.json"]
    assert len(cr.pooled(tmp_path)["update_small", 1]["ratio"]) == 4  # no filter: every file
    assert cr.pooled(tmp_path, since="2026-12-02") == {}
    assert cr.pooled(tmp_path, before="2026-11-28")["update_small", 1]["files"] == ["old.json"]  # the history


def test_compare_reference_summary_refuses_a_date_it_cannot_read():
    cmd = [sys.executable, str(ROOT / "benchmarks/compare_reference.py"), "--summarize", "--since", "28.11.2026"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 2 and "error: --since '28.11.2026': give a date as YYYY-MM-DD" in proc.stderr


def test_compare_reference_asks_for_the_reference_python():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks/compare_reference.py"), "--ref-python", "/no/such/python"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "--ref-python '/no/such/python'" in proc.stderr


def test_compare_reference_rejects_a_thread_count_below_one():
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks/compare_reference.py"),
            "--threads",
            "0",
            "--ref-python",
            sys.executable,
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "--threads 0" in proc.stderr


@pytest.mark.skipif(find_spec("xminigrid") is None, reason="xminigrid is not installed (requirements-suites.txt)")
def test_greedy_probe_measures_xland_attempts_from_the_env_state():
    """greedy_probe.play() on XLand with uniform-random actions: one record per attempt (k = 4 per trial), the cells
    and poses read from the env's state, a repeat run of at least 1, and summary() returns per attempt."""
    from greedy_probe import longest_run, play, summary

    import amago_agent

    assert longest_run([1, 1, 2, 2, 2, 0]) == 3 and longest_run([]) == 0
    envs = amago_agent.make_vec_env("envs:XLand-Trivial-R1-9x9-v0", 4, "already_vectorized", 0)
    attempts, trials = play(None, envs, 4, 0, False, np.random.default_rng(0))
    assert len(trials) == 4 and len(attempts) == 16
    assert sorted(a["attempt"] for a in attempts) == [0] * 4 + [1] * 4 + [2] * 4 + [3] * 4
    assert all(1 <= a["cells"] <= a["poses"] <= 4 * a["cells"] and a["length"] <= 243 for a in attempts)
    assert np.isclose(sum(trials), sum(a["return"] for a in attempts))  # a trial's return is its attempts'
    s = summary(attempts, trials)
    assert len(s["return_per_attempt"]) == 4 and abs(sum(s["action_frac"]) - 1) < 1e-2
    assert 0 < s["unchanged_frac"] < 1  # random moves bump into walls and pick up nothing, and also see new cells


def test_suites_vs_random_needs_every_seed_above_random_by_more_than_the_spread(tmp_path, monkeypatch, capsys):
    """A seed beats random only when its last three evals' mean clears random's mean by more than their standard
    deviation and twice random's standard error; success is averaged over the env names."""
    import suites_vs_random

    monkeypatch.setattr(suites_vs_random, "RESULTS", tmp_path)
    folder = tmp_path / "r"
    folder.mkdir()
    rand = {"episodes": 100, "return_sem": 0.05, "eval/return": 1.0, "eval/A/success": 0.2, "eval/B/success": 0.4}
    (folder / "r_random.json").write_text(json.dumps(rand))

    def seed(i, greedy, sampled, success_a, success_b):
        evals = {"eval/return": greedy, "eval_sampled/return": sampled}
        evals |= {"eval/A/success": success_a, "eval/B/success": success_b}
        r = {"name": f"r_s{i}", "wall_s": 60, "updates": 1, "env_steps": 1, "last_evals": evals}
        (folder / f"r_s{i}.json").write_text(json.dumps(r))

    seed(1, [1.5, 1.6, 1.7], [1.2, 1.2, 1.2], [0.5, 0.5, 0.5], [0.7, 0.7, 0.7])  # greedy +0.6 > sd 0.1; sampled +0.2
    seed(2, [1.0, 2.0, 3.0], [1.5, 1.5, 1.5], [0.3, 0.3, 0.3], [0.5, 0.5, 0.5])  # greedy +1.0 < sd 1.0
    assert suites_vs_random.verdict([1.5, 1.6, 1.7], 1.0, 0.05)[2]
    assert not suites_vs_random.verdict([1.05, 1.05, 1.05], 1.0, 0.05)[2]  # above random, within 2 standard errors
    assert suites_vs_random.table("r") == {"greedy": False, "sampled": True}
    # success: seed 1 averages 0.6, seed 2 0.4, random 0.3 with standard error sqrt(0.3 * 0.7 / 100) = 0.046
    assert suites_vs_random.table("r", "success") == {"greedy": True}  # no eval_sampled/<env>/success logged
    seed(2, [1.0, 2.0, 3.0], [1.5, 1.5, 1.5], [0.3, 0.3, 0.3], [0.35, 0.35, 0.35])  # 0.325: within 2 errors
    assert suites_vs_random.table("r", "success") == {"greedy": False}
    assert "| r_s1 | greedy | 1 | 1 | 1 | 1.50 1.60 1.70 | 1.60 ± 0.10 | yes |" in capsys.readouterr().out


def test_suites_vs_random_attempt_compares_the_last_attempt_with_random_and_with_the_first(tmp_path, monkeypatch):
    """--attempt -1: the last attempt's success must clear random's as above and also attempt 0's, eval by eval."""
    import suites_vs_random

    monkeypatch.setattr(suites_vs_random, "RESULTS", tmp_path)
    folder = tmp_path / "m"
    folder.mkdir()
    rand = {"episodes": 256, "eval/return": 1.0, "eval/W/attempt 0 success": 0.01, "eval/W/attempt 2 success": 0.02}
    rand["eval/W/attempt 1 success"] = 0.02
    (folder / "m_random.json").write_text(json.dumps(rand))

    def seed(i, first, last):
        evals = {"eval/return": [2.0] * 3, "eval/W/attempt 0 success": first, "eval/W/attempt 2 success": last}
        evals["eval/W/attempt 1 success"] = first
        r = {"name": f"m_s{i}", "wall_s": 60, "updates": 1, "env_steps": 1, "last_evals": evals}
        (folder / f"m_s{i}.json").write_text(json.dumps(r))

    seed(1, [0.2, 0.3, 0.2], [0.5, 0.6, 0.6])  # above random (0.02) and above attempt 0 by 0.33 ± 0.06
    seed(2, [0.2, 0.3, 0.2], [0.5, 0.6, 0.6])
    assert suites_vs_random.attempt_index(rand, -1) == 2 and suites_vs_random.attempt_index(rand, 5) is None
    assert suites_vs_random.table("m", "success", -1) == {"greedy": True}
    seed(2, [0.5, 0.3, 0.6], [0.5, 0.6, 0.6])  # above random, but attempt 2 - attempt 0: 0.1 ± 0.17
    assert suites_vs_random.table("m", "success", -1) == {"greedy": False}
    seed(2, [0.0, 0.0, 0.0], [0.0, 0.1, 0.0])  # above attempt 0 by 0.03 ± 0.06, and within random's spread
    assert suites_vs_random.table("m", "success", -1) == {"greedy": False}


def test_speed_budget_counts_the_runs_updates_as_the_script_does_and_prices_them_at_the_measured_speeds():
    """speed.py --budget N: ceil(N / (timesteps_per_epoch * num_envs)) epochs of batches_per_epoch updates, and hours =
    updates x the timed update, env steps / the timed acting rate."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "speed.py"), "--encoders", "ff", "--updates", "1", "--warmup", "0",
         "--rollout-steps", "3", "--budget", "1000000000", "--set", "num_envs=3", "timesteps_per_epoch=7",
         "batches_per_epoch=5"],  # fmt: skip
        capture_output=True, text=True, env=env, timeout=300, check=True,
    )  # fmt: skip
    r = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("RESULT "))[7:])
    updates = 47_619_048 * 5  # ceil(1e9 / 21) epochs
    assert r["budget_env_steps"] == 10**9 and r["budget_updates"] == updates
    assert r["budget_update_hours"] == pytest.approx(updates * r["update_ms"] / 1000 / 3600, rel=0.05)  # ms rounded
    assert r["budget_acting_hours"] == pytest.approx(10**9 / r["env_steps_per_s"] / 3600, rel=0.01)
    assert f"1,000,000,000 env steps: {updates:,d} updates" in out.stdout


def test_speed_overrides_read_tuples_and_optionals_as_literals_and_the_rest_as_the_fields_type():
    from speed import amago, with_overrides

    args = with_overrides(amago.Args(), ["multigammas=()", "num_critics=2", "learning_rate=5e-4", "online_coeff=0.5"])
    assert args.multigammas == () and args.num_critics == 2 and args.learning_rate == 5e-4 and args.online_coeff == 0.5
    assert with_overrides(amago.Args(), ["multigammas=(0.9,0.99)"]).multigammas == (0.9, 0.99)


@pytest.mark.skipif(find_spec("metaworld") is None, reason="metaworld is not installed (requirements-suites.txt)")
def test_metaworld_probe_swaps_only_the_first_attempts_goal_and_holds_only_the_puck():
    """metaworld_probe.Probe: `swapped` plays attempt 1 at another goal and attempts 2-3 at the rollout's own (the
    goal `same` plays throughout, from the same seed); `fixed_puck` shows the same puck position in every task."""
    from metaworld_probe import PUCK, Probe

    def play(env, seed):  # -> the goal and the first observation of each attempt
        obs, _ = env.reset(seed=seed)
        goals, firsts, term = [env.env.goal], [obs], False
        while not term:
            obs, _, term, _, _ = env.step(np.zeros(4, np.float32))
            if obs[-2] == 1 and not term:
                goals.append(env.env.goal)
                firsts.append(obs)
        return np.array(goals), np.array(firsts)

    same, swapped, fixed = (Probe(p, "train", False, 50) for p in ("same", "swapped", "fixed_puck"))
    pucks = set()
    for seed in range(3):
        (g_same, o_same), (g_swap, o_swap), (g_fix, o_fix) = (play(e, seed) for e in (same, swapped, fixed))
        assert len(g_same) == 3 and (g_same == g_same[0]).all() and np.array_equal(g_fix, g_same)
        assert not np.array_equal(g_swap[0], g_same[0]) and np.array_equal(g_swap[1:], g_same[1:])
        assert not np.array_equal(o_swap[0][PUCK], o_same[0][PUCK])  # the other goal's puck comes with it
        np.testing.assert_array_equal(o_fix[:, PUCK], np.broadcast_to(fixed.env.puck, (3, 4)))
        pucks.add(o_same[0][PUCK].tobytes())
    assert len(pucks) == 3  # without the probe, each task shows its own puck position
    hidden = Probe("swapped", "test", True, 40)
    assert hidden.observation_space.shape == (8 + 2,) and hidden.env.max_steps == 40
    held_out, train = ({t.data for t in e.env.tasks["reach-v3"]} for e in (hidden, same))
    assert len(held_out) == 50 and not held_out & train  # the test probe plays the 50 held-out goals


@pytest.mark.skipif(find_spec("metaworld") is None, reason="metaworld is not installed (requirements-suites.txt)")
def test_metaworld_ceiling_searches_move_by_the_rewards_alone():
    """--ceiling's `search` and `steer` play the same attempt with the goal hidden (NaN): they read only the hand and
    this attempt's rewards. In 30-step attempts over the 50 train goals, the drive that knows the goal reaches the
    most when aimed at the point between the fingers (`aim`), less when aimed at the hand, fingers closed or not, and
    `steer` (+y at full speed) more than `search`."""
    from metaworld_probe import aim, attempt, search, steer, straight

    from envs.metaworld_env import MetaWorldTasks

    env = MetaWorldTasks("reach-v3", "train", 30)
    reached = {"aim": 0, "closed": 0, straight: 0, steer: 0, search: 0}
    for i, task in enumerate(env.tasks["reach-v3"]):
        env.env.set_task(task)
        reached["aim"] += attempt(env, aim(env))[0] is not None
        reached["closed"] += attempt(env, straight, gripper=1.0)[0] is not None
        for policy in (straight, steer, search):
            first, ret = attempt(env, policy)
            reached[policy] += first is not None
            if policy is not straight and i < 5:
                assert attempt(env, policy, hide_goal=True) == (first, ret)
    assert reached["aim"] > reached["closed"] > reached[straight] > reached[steer] > reached[search] > 0, reached


@pytest.mark.skipif(find_spec("metaworld") is None, reason="metaworld is not installed (requirements-suites.txt)")
def test_sparse_reach_baselines_search_then_return_goes_back_to_its_find():
    """metaworld_sparse_baselines: `sweep` plays its one search path in every attempt alike; `search_then_return`
    drives straight back to where a search found the reward, so once found every later attempt succeeds, and returns
    more on the whole (it gets there sooner than a search that finds the goal late); a goal its first search misses it
    looks for along another path."""
    from metaworld_sparse_baselines import SEARCHES, attempt, rollout

    from envs.metaworld_env import MetaWorldTasks

    env = MetaWorldTasks("reach-v3", "train", 50, hide_objects=True, sparse=True)
    found = missed = 0
    first_returns, later_returns = [], []
    for task in env.tasks["reach-v3"][:12]:
        env.env.set_task(task)
        first = attempt(env, SEARCHES[0])
        sweep, back = rollout(env, "sweep"), rollout(env, "search_then_return")
        assert sweep == [first[:2]] * 3 and back[0] == first[:2]
        if first[0]:
            found += 1
            assert [s for s, _ in back[1:]] == [1.0, 1.0], back
            first_returns.append(first[1])
            later_returns.append(back[2][1])
        else:
            missed += 1
            assert back[1] == attempt(env, SEARCHES[1])[:2]
    assert found and missed and np.mean(later_returns) > np.mean(first_returns)


def test_sparse_reach_episodes_reads_each_attempts_reward_and_the_hands_farthest_y(tmp_path):
    """metaworld_sparse_episodes.rollout splits a replay file into attempts at the soft-reset flag (the observation's
    second-to-last number, 1 after an attempt's last step) and reads the hand's y from the observation."""
    from metaworld_sparse_episodes import rollout

    obs = np.zeros((7, 10), np.float32)  # 6 steps: 3 attempts of 2
    obs[:, 1] = [0.6, 0.62, 0.75, 0.6, 0.7, 0.6, 0.61]
    obs[[2, 4, 6], -2] = 1.0
    rewards = np.array([0, 0, 0, 0.3, 0, 0], np.float32)  # only the second attempt rewarded
    np.savez(tmp_path / "r.npz", obs_observation=obs, rewards=rewards)
    assert rollout(tmp_path / "r.npz") == (0.75, [0.0, 1.0, 0.0])
