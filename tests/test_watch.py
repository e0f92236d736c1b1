"""benchmarks/watch.py: the attention it extracts is the layers' own; its probe scores only histories it was not fit
on, floors the scale of flat features, and reports an untrained agent of the same flags beside the trained one; every
eval at one env step is kept; each command refuses what it lacks before it plays an episode, and runs on a tiny run."""

import contextlib
import json
import sys

import numpy as np
import pytest
import torch
from conftest import SMALL, run_script

import amago_agent
import amago_multitask
from benchmarks import watch


@pytest.mark.parametrize("script", [amago_agent, amago_multitask], ids=lambda m: m.__name__)
@pytest.mark.parametrize("window", [None, 5])
def test_extracted_attention_is_the_layers_own(script, window):
    """weights @ v reproduces each layer's attention output; each row is a distribution over the keys the query sees
    (causal, within --window-size); capturing changes neither the forward nor the layer objects."""
    torch.manual_seed(0)
    args = script.Args(**{**SMALL, "n_layers": 2}, max_seq_len=12, window_size=window)
    traj = script.TransformerTrajEncoder(8, args).eval()
    x, time = torch.randn(3, 12, 8), torch.arange(12).expand(3, 12)
    with torch.no_grad():
        plain = traj(x, time)
        with watch.captured_attention(traj) as calls:
            seen = traj(x, time)
    assert torch.equal(plain, seen) and len(calls) == 2
    assert all("split_heads" not in vars(layer) for layer in traj.layers)  # the class's methods again
    i = torch.arange(12)
    allowed = (i[None, :] <= i[:, None]) & (window is None or (i[:, None] - i[None, :] < window))
    for c in calls:
        w = watch.attention_weights(c["q"], c["k"], window)
        torch.testing.assert_close(w @ c["v"], c["out"], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))
        assert (w[..., ~allowed] == 0).all() and (w[..., allowed] > 0).all()


def untrained_run(root, name, like, **changes):
    """runs/NAME: runs/LIKE's flags with `changes`, and a checkpoint whose weights are those of the probe's control (an
    untrained agent of those flags): a run that never trained."""
    flags = json.loads((root / "runs" / like / "flags.json").read_text())
    (root / "runs" / name).mkdir()
    (root / "runs" / name / "flags.json").write_text(json.dumps({**flags, **changes}))
    with contextlib.chdir(root):
        mod, args = watch.run_args(name)
    envs = mod.make_vec_env(args.eval_env_id, 1, "sync", 1)
    ckpt = torch.load(root / "runs" / like / "checkpoint.pt", weights_only=False)
    torch.save({**ckpt, "agent": watch.untrained(mod, args, envs).state_dict()}, root / "runs" / name / "checkpoint.pt")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Tiny runs of amago_agent.py, a few updates each: T-Maze without memory (ff), Meta-Frozen-Lake with a
    transformer (its eval logs each attempt's success), HalfCheetah-Vel (ff, no eval); and two T-Maze transformers that
    never trained (one with a 8-step window)."""
    root = tmp_path_factory.mktemp("watch")
    tmaze = dict(env_id="envs:TMazePassive-v0", max_seq_len=51, traj_save_len=51, timesteps_per_epoch=51)
    run_script(root, **tmaze, traj_encoder="ff", total_timesteps=102, batches_per_epoch=1, run_name="tmaze_ff")
    lake = dict(env_id="envs:MetaFrozenLake-HideK-v0", max_seq_len=80, traj_save_len=80, timesteps_per_epoch=80)
    run_script(root, **lake, n_layers=2, traj_encoder="transformer", total_timesteps=320, batches_per_epoch=1,
               eval_interval=1, run_name="lake")  # fmt: skip
    run_script(root, env_id="envs:HalfCheetahVel-v0", traj_encoder="ff", max_seq_len=8, total_timesteps=32,
               timesteps_per_epoch=32, batches_per_epoch=1, eval_interval=0, run_name="cheetah")  # fmt: skip
    untrained_run(root, "tmaze_init", "tmaze_ff", traj_encoder="transformer")
    untrained_run(root, "tmaze_window_init", "tmaze_ff", traj_encoder="transformer", window_size=8)
    return root


def probe(root, *argv):
    out = root / "probe.png"
    watch.main(["probe", *argv, "--out", str(out)])
    return json.loads(out.with_suffix(".json").read_text())


def scored(curve):
    return [x for x in curve if x is not None]


def test_probe_on_a_memory_free_agent_is_at_chance_after_the_cue(runs, monkeypatch):
    """ff's state at step t is a function of step t's token, and the cue is shown at step 0 only: on episodes that
    differ (a share of random actions), scored on histories the fit half never saw, the probe is at chance from the
    first scored step to T-Maze's junction (50), for the run and for its untrained control alike."""
    monkeypatch.chdir(runs)
    r = probe(runs, "--run-name", "tmaze_ff", "--episodes", "80")["runs"]["tmaze_ff"]
    assert len(r["trained"]) == 51 and r["trained"][0] is None  # step 0: 2 histories, both in the fit half
    for curve in (r["trained"], r["untrained"]):
        acc = scored(curve)
        assert len(acc) >= 30 and np.mean(acc) <= 0.56 and np.mean(np.array(acc) <= 0.65) >= 0.9, curve
        assert curve[50] == pytest.approx(0.5, abs=0.12)  # 50: the junction


def test_greedy_t_maze_episodes_leave_nothing_to_score(runs, monkeypatch):
    """Greedy T-Maze episodes repeat one of two token sequences: every held-out history is one the fit half has, so
    no step is scored (the probe would read the cue off states it was fit on)."""
    monkeypatch.chdir(runs)
    r = probe(runs, "--run-name", "tmaze_ff", "--episodes", "40", "--epsilon", "0")["runs"]["tmaze_ff"]
    assert len(r["trained"]) == 51 and scored(r["trained"]) == [] and set(r["scored_episodes"]) == {0}


def test_a_leaking_probe_would_read_a_cue_that_is_not_there(monkeypatch):
    """States that hold no cue yet differ from episode to episode (noise; more dimensions than fit episodes): the
    held-out probe is at chance, while the same probe scored on its fit half reads 1.0. (On ff's T-Maze states a
    fit-half probe is at chance too: they take 2-4 values per step, too few to learn the fit half's labels by heart;
    so the leak is shown here.) A cue held in a direction 1e-6 wide, beside features of unit scale, stays at chance:
    standardizing it by its own spread would blow it up into a perfect probe. A held-out episode whose history up to
    the step a fit episode has is not scored."""
    rng = np.random.default_rng(0)
    n, T, D = 60, 6, 48
    labels = rng.integers(0, 2, n).tolist()
    history = [np.arange(T) + 100 * i for i in range(n)]  # every episode new from its first step
    noise = [rng.standard_normal((T, D)) for _ in range(n)]
    held_out, _ = watch.probe_curve(noise, labels, 2, history)
    assert np.mean(held_out) <= 0.65 and max(held_out) <= 0.8, held_out
    fit = watch.halves
    monkeypatch.setattr(watch, "halves", lambda h, t: (fit(h, t)[0], fit(h, t)[0]))
    leaked, _ = watch.probe_curve(noise, labels, 2, history)
    assert min(leaked) >= 0.95, leaked
    monkeypatch.undo()
    faint = [np.concatenate([1e-6 * (y - 0.5) + np.zeros((T, 1)), x[:, :4]], 1) for x, y in zip(noise, labels)]
    read, _ = watch.probe_curve(faint, labels, 2, history)
    assert np.mean(read) <= 0.65, read
    assert watch.halves([np.array([1, 2]), np.array([1, 2]), np.array([1, 3]), np.array([4, 5])], 1) == ([0, 2], [3])


def test_the_probe_reports_an_untrained_control_of_the_same_flags(runs, monkeypatch, capsys):
    """An untrained transformer's state holds the cue (its near-uniform attention averages the cue's token in), so the
    trained curve alone overstates what training did: a run that never trained scores as its control does, step for
    step (difference 0), while the control curve is far above chance. The control is a fresh init: the same weights
    each time, none of a trained run's."""
    monkeypatch.chdir(runs)
    summary = probe(runs, "--run-name", "tmaze_init", "--episodes", "60")
    r = summary["runs"]["tmaze_init"]
    assert {"trained", "untrained", "trained_minus_untrained"} <= r.keys() and "untrained" in summary["control"]
    assert len(r["trained"]) == len(r["untrained"]) == len(r["trained_minus_untrained"]) == 51
    assert r["trained"] == r["untrained"] and len(scored(r["untrained"])) >= 30
    assert all(d == 0 for d in scored(r["trained_minus_untrained"]))
    assert np.mean(scored(r["untrained"])) >= 0.7  # an untrained memory reads the cue on histories it never saw
    said = capsys.readouterr().out
    assert "trained" in said and "untrained" in said and "difference +0.00" in said, said
    mod, args, envs, agent = watch.load_run("lake")
    control, again = watch.untrained(mod, args, envs), watch.untrained(mod, args, envs)
    trained, fresh = agent.state_dict(), control.state_dict()
    assert all(torch.equal(fresh[k], again.state_dict()[k]) for k in fresh)
    assert any(not torch.equal(fresh[k], trained[k]) for k in fresh if k.startswith("traj."))
    ep = watch.play(agent, envs, 1, 1)[0]
    assert not torch.allclose(watch.states(agent, ep), watch.states(control, ep))


def test_the_summary_holds_the_difference_of_the_two_curves(runs, monkeypatch):
    monkeypatch.chdir(runs)
    r = probe(runs, "--run-name", "tmaze_ff", "--episodes", "40")["runs"]["tmaze_ff"]
    for a, b, d in zip(r["trained"], r["untrained"], r["trained_minus_untrained"]):
        assert (d is None) == (a is None or b is None) and (d is None or d == pytest.approx(a - b, abs=1e-3))
    assert any(
        d not in (None, 0) for d in r["trained_minus_untrained"]
    )  # a trained net's states differ from the init's


def test_epsilon_actions_are_random_in_their_share():
    import gymnasium as gym

    rng = np.random.default_rng(0)
    greedy = np.zeros(10_000, np.int64)
    out = watch.explore(greedy, gym.spaces.Discrete(4), 0.2, rng)
    assert out.dtype == greedy.dtype and np.mean(out != 0) == pytest.approx(0.2 * 3 / 4, abs=0.02)
    box = np.full((10_000, 2), 0.9, np.float32)
    out = watch.explore(box, gym.spaces.Box(-1, 1, (2,)), 0.3, rng)
    assert out.dtype == np.float32 and out.max() == 1.0 and np.std(out[out < 1]) > 0.1
    assert watch.explore(box, gym.spaces.Box(-1, 1, (2,)), 0.0, rng) is box  # attention's default: greedy


def test_attempts_keep_every_eval_at_one_env_step(tmp_path):
    """Two evals logged at one env step (a mid-epoch and an end-of-epoch eval, or a resumed epoch's) are two rows of
    the summary, in the order logged."""
    rows = ["run,env,env_steps,attempt,value"]
    for step, values in [(100, (0.1, 0.2)), (200, (0.3, 0.4)), (200, (0.5, 0.6)), (300, (0.7, 0.8))]:
        rows += [f"r,E,{step},{a},{v}" for a, v in enumerate(values)]
    csv = tmp_path / "x_success.csv"
    csv.write_text("\n".join(rows) + "\n")
    summary = watch.main(["attempts", "--csv", str(csv), "--out", str(tmp_path / "x.png")])
    r = summary["runs"]["r E"]
    assert r["env_steps"] == [100, 200, 200, 300]
    assert r["by_attempt"] == [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [0.7, 0.8]]


def test_track_draws_an_info_value_against_its_target(runs, monkeypatch):
    """HalfCheetah-Vel: per episode its velocity (info["x_velocity"]) against its target (the env's
    target_velocity), and the mean velocity over the final steps against the target."""
    monkeypatch.chdir(runs)
    drawn = []
    draw = watch.draw_track
    monkeypatch.setattr(watch, "draw_track", lambda opts, summary, eps: drawn.append(eps) or draw(opts, summary, eps))
    out = runs / "track.png"
    summary = watch.main(["track", "--run-name", "cheetah", "--episodes", "3", "--steps", "60", "--out", str(out)])
    assert out.stat().st_size > 0 and json.loads(out.with_suffix(".json").read_text()) == summary
    eps = drawn[0]
    assert len(summary["episodes"]) == len(eps) == 3 and len({e["target"] for e in summary["episodes"]}) == 3
    for e, ep in zip(summary["episodes"], eps):
        v = ep["info"]["x_velocity"]
        assert e["steps"] == len(v) == 60 and np.isfinite(v).all() and 0 <= e["target"] <= 3
        assert np.asarray(ep["target_velocity"]) == pytest.approx(e["target"], abs=1e-4)  # one target per episode
        assert e["final_mean"] == pytest.approx(v[-50:].mean(), abs=1e-4)
        assert e["abs_error"] == pytest.approx(abs(v[-50:].mean() - e["target"]), abs=2e-4)
    whole = watch.main(["track", "--run-name", "cheetah", "--episodes", "1", "--out", str(out)])["episodes"][0]
    v = drawn[1][0]["info"]["x_velocity"]  # the last step's value: from the final info of the actor's reset
    assert whole["steps"] == len(v) == 1000 and np.isfinite(v).all()


def test_long_episodes_map_their_last_steps_and_an_undefined_value_says_why(runs, monkeypatch):
    """A 51-step episode drawn with --map-steps 20 maps its last 20 steps and says so; with an 8-step window the
    cue (step 0) is out of the last step's window, and the title says that instead of printing a dash."""
    monkeypatch.chdir(runs)
    titles, save = [], watch.save

    def titled(fig, *args):
        titles.extend([t.get_text() for t in fig.texts] + [ax.get_title() for ax in fig.axes])
        save(fig, *args)

    monkeypatch.setattr(watch, "save", titled)
    out = runs / "window.png"
    argv = ["attention", "--run-name", "tmaze_window_init", "--episodes", "2", "--map-steps", "20", "--out", str(out)]
    summary = watch.main(argv)
    assert summary["map_steps"] == [31, 51] and summary["layers"][0]["last_step_on_marked"] is None
    text = "\n".join(titles)
    assert "no marked step in the last step's window" in text and "last 20 of" in text and "–" not in text, text


def test_each_command_refuses_what_it_lacks_before_any_episode(runs, monkeypatch, capsys):
    """One `error: ...` line and exit status 2, before a single episode is played: a missing matplotlib, a run without
    the env attribute the probe or track reads (the second run of a probe too), an info key the env's step lacks, a
    memory without attention."""
    monkeypatch.chdir(runs)

    def no_play(*a, **k):
        raise AssertionError("an episode was played before the command's checks")

    monkeypatch.setattr(watch, "play", no_play)
    cases = [
        (["attention", "--run-name", "tmaze_ff"], "its memory is --traj-encoder ff"),
        (["attempts", "--run-name", "tmaze_ff"], "logged no eval/<env>/attempt <i> success"),
        (["probe", "--run-name", "lake", "--episodes", "2"], "has no attribute 'goal'"),
        (["probe", "--run-name", "tmaze_ff", "lake"], "env MetaFrozenLake-HideK-v0 has no attribute 'goal'"),
        (["probe", "--run-name", "nope"], "no runs/nope/flags.json"),
        (["track", "--run-name", "tmaze_ff"], "has no attribute 'target_velocity'"),
        (["track", "--run-name", "cheetah", "--info", "speed"], "step info has no 'speed'"),
    ]
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
        for command in ("attention", "probe", "track"):
            cases.append(([command, "--run-name", "lake"], "pip install matplotlib"))
        cases.append((["attempts", "--run-name", "lake"], "pip install matplotlib"))
        for argv, said in cases[-4:]:
            check_refusal(argv, said, capsys)
    for argv, said in cases[:-4]:
        check_refusal(argv, said, capsys)


def check_refusal(argv, said, capsys):
    with pytest.raises(SystemExit) as e:
        watch.main(argv)
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and err.startswith("error: ") and said in err and "\n" not in err, (argv, err)


def test_the_commands_run_on_tiny_runs(runs, monkeypatch):
    monkeypatch.chdir(runs)
    summary = watch.main(["attention", "--run-name", "lake", "--episodes", "4", "--out", str(runs / "a.png")])
    assert (runs / "a.png").stat().st_size > 0 and len(summary["layers"]) == 2
    assert summary["marked"] == "earlier attempts' last steps"
    assert all(0 < layer["all_steps_on_marked"] < 1 for layer in summary["layers"])
    record = runs / "lake_success.csv"
    watch.main(["attempts", "--run-name", "lake", "--record", str(record), "--out", str(runs / "b.png")])
    rows = record.read_text().splitlines()
    assert rows[0] == "run,env,env_steps,attempt,value" and len(rows) == 1 + 2 * 5  # 2 evals x 5 attempts
    redrawn = watch.main(["attempts", "--csv", str(record), "--out", str(runs / "c.png")])
    assert json.loads((runs / "b.json").read_text()) == json.loads(json.dumps(redrawn))  # the CSV redraws the figure
