"""benchmarks/watch.py: the attention it extracts is the layers' own, its probe cannot read a cue a memory-free agent
has no way to hold, and each command runs on a tiny run."""

import json

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


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Tiny runs of amago_agent.py, a few updates each: T-Maze without memory (ff), Meta-Frozen-Lake with a
    transformer (its eval logs each attempt's success)."""
    root = tmp_path_factory.mktemp("watch")
    tmaze = dict(env_id="envs:TMazePassive-v0", max_seq_len=51, traj_save_len=51, timesteps_per_epoch=51)
    run_script(root, **tmaze, traj_encoder="ff", total_timesteps=102, batches_per_epoch=1, run_name="tmaze_ff")
    lake = dict(env_id="envs:MetaFrozenLake-HideK-v0", max_seq_len=80, traj_save_len=80, timesteps_per_epoch=80)
    run_script(root, **lake, n_layers=2, traj_encoder="transformer", total_timesteps=320, batches_per_epoch=1,
               eval_interval=1, run_name="lake")  # fmt: skip
    return root


def test_probe_on_a_memory_free_agent_is_at_chance_after_the_cue(runs, monkeypatch):
    """ff's state at step t is a function of step t's token: the cue, shown at step 0 only, is read there (the probe
    works) and at chance at every later step, T-Maze's junction included."""
    monkeypatch.chdir(runs)
    out = runs / "probe.png"
    watch.main(["probe", "--run-name", "tmaze_ff", "--episodes", "40", "--out", str(out)])
    acc = json.loads(out.with_suffix(".json").read_text())["runs"]["tmaze_ff"]["accuracy"]
    assert len(acc) == 51 and acc[0] > 0.9  # the cue is in step 0's token
    assert max(acc[1:]) <= 0.6 and acc[50] == pytest.approx(0.5, abs=0.1)  # 50: the junction


def test_the_commands_run_on_tiny_runs(runs, monkeypatch, capsys):
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
    for argv, said in [
        (["attention", "--run-name", "tmaze_ff"], "its memory is --traj-encoder ff"),
        (["attempts", "--run-name", "tmaze_ff"], "logged no eval/<env>/attempt <i> success"),
        (["probe", "--run-name", "lake", "--episodes", "2"], "has no attribute 'goal'"),
        (["probe", "--run-name", "nope"], "no runs/nope/flags.json"),
    ]:
        with pytest.raises(SystemExit) as e:
            watch.main(argv)
        err = capsys.readouterr().err.strip()
        assert e.value.code == 2 and err.startswith("error: ") and said in err and "\n" not in err, err
