"""Short runs of the scripts as a user runs them (CLI, vector envs, buffer, DataLoader worker, updates, eval,
checkpoint), with a small model: they finish, write what they should, and log what the envs report. Whether the agent
learns is tests/test_learning.py's question."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import MULTITASK_SCRIPT, SCRIPT, needs_gymnax, needs_mujoco, needs_popgym, run_script

from common.logs import read_scalars


def saved_episodes(tmp_path):
    """The trajectory files of the one run under tmp_path, which must have saved its checkpoint."""
    (run,) = (tmp_path / "runs").iterdir()
    assert (run / "checkpoint.pt").exists()
    return [np.load(f) for f in (tmp_path / "buffers" / run.name / "fifo").glob("*.npz")]


# ---------------------------------------------------- both scripts ----------------------------------------------------
@pytest.mark.parametrize("script", [SCRIPT, MULTITASK_SCRIPT], ids=lambda p: p.stem)
@pytest.mark.parametrize("encoder", ["ff", "gru", "transformer", "mamba"])
@pytest.mark.parametrize("env_id, steps", [("CartPole-v1", 100), ("tests.dummy_envs:DummyBox-v0", 100)])
def test_smoke_run(tmp_path, encoder, env_id, steps, script):
    run_script(
        tmp_path,
        script,
        env_id=env_id,
        traj_encoder=encoder,
        total_timesteps=steps,
        timesteps_per_epoch=25,
        batches_per_epoch=2,
        save_model=True,
    )
    (run,) = (tmp_path / "runs").iterdir()
    assert (run / f"{script.stem}.cleanrl_model").exists() and (run / "checkpoint.pt").exists()
    assert list((tmp_path / "buffers" / run.name / "fifo").glob("*.npz"))


def test_bad_argument_is_a_clear_error(tmp_path):
    out = run_script(tmp_path, check=False, max_seq_len=0)
    assert out.returncode != 0 and "--max-seq-len must be >= 1, got 0" in out.stderr


def test_accelerate_launch(tmp_path):
    """The update goes through accelerate, so the script runs under `accelerate launch` as well."""
    launch = Path(sys.executable).parent / "accelerate"
    launcher = [launch, "launch", "--cpu", "--num_processes", "1", "--num_machines", "1"]
    launcher += ["--mixed_precision", "no", "--dynamo_backend", "no"]
    run_script(tmp_path, launcher=launcher, total_timesteps=100, timesteps_per_epoch=25, batches_per_epoch=2)
    assert (next((tmp_path / "runs").iterdir()) / "checkpoint.pt").exists()


def test_script_logs_eval_success_per_scale(tmp_path):
    """A short run of amago_multitask.py on its benchmark env: eval metrics come out split per hidden scale."""
    run_script(
        tmp_path,
        MULTITASK_SCRIPT,
        env_id="envs:MultiScaleBandit-v0",
        traj_encoder="gru",
        total_timesteps=96,
        num_envs=4,
        timesteps_per_epoch=12,
        batches_per_epoch=2,
        traj_save_len=8,
        eval_interval=1,
        eval_episodes=24,
        run_name="r",
    )
    scalars = read_scalars(tmp_path / "runs" / "r")
    for scale in ("1", "10", "100"):
        evals = scalars[f"eval/MultiScaleBandit-x{scale}/success"]
        assert len(evals) == 2 and all(0.0 <= v <= 1.0 for _, _, v in evals)
        assert scalars[f"charts/frames/MultiScaleBandit-x{scale}"][-1][2] > 0
    # eval/return weighs the scales equally: it is the mean of the per-scale returns
    per_scale = [scalars[f"eval/MultiScaleBandit-x{s}/return"][-1][2] for s in ("1", "10", "100")]
    assert scalars["eval/return"][-1][2] == pytest.approx(np.mean(per_scale), rel=1e-5)


# ---------------------------------------------------- the envs/ suites ----------------------------------------------------
SMOKE = [
    pytest.param({"env_id": "envs:PopGym-RepeatPreviousEasy-v0"}, marks=needs_popgym, id="popgym"),
    pytest.param({"env_id": "envs:MazeRunner-v0", "relabel": "envs.mazerunner:relabel_some"}, id="mazerunner"),
    pytest.param({"env_id": "envs:HalfCheetahVel-v0", "eval_interval": 0}, marks=needs_mujoco, id="halfcheetah"),
]


@pytest.mark.parametrize("extra", SMOKE)
def test_smoke_run_on_benchmark_envs(tmp_path, extra):
    run_script(tmp_path, total_timesteps=64, timesteps_per_epoch=16, batches_per_epoch=2, **extra)
    assert saved_episodes(tmp_path)


def test_agent_runs_on_tmaze_with_its_recipe_and_logs_success(tmp_path):
    run_script(
        tmp_path,
        env_id="envs:TMazePassive-v0",
        exploration="envs.tmaze:TMazeEpsilonGreedy",
        train_greedy=True,
        reward_multiplier=100,
        gamma=0.9999,
        traj_save_len=64,
        total_timesteps=204,
        timesteps_per_epoch=51,
        batches_per_epoch=2,
        num_workers=0,
        run_name="r",
    )
    tags = read_scalars(tmp_path / "runs" / "r")
    assert {"eval/TMazePassive-v0/success", "eval/TMazePassive-v0/reached junction"} <= set(tags)
    assert all(v in (0.0, 0.5, 1.0) for _, _, v in tags["eval/TMazePassive-v0/success"])


def test_agent_runs_on_meta_frozen_lake_and_logs_each_attempt(tmp_path):
    run_script(
        tmp_path,
        env_id="envs:MetaFrozenLake-v0",
        traj_encoder="gru",
        total_timesteps=64,
        timesteps_per_epoch=8,
        batches_per_epoch=2,
        num_workers=0,
        run_name="r",
    )
    tags = set(read_scalars(tmp_path / "runs" / "r"))
    assert {f"eval/MetaFrozenLake-v0/attempt {i} success" for i in range(5)} <= tags


# ------------------------------------------------ pixels and dict observations ------------------------------------------------
def run_on_pixels(tmp_path, env_id, **extra):
    run_script(
        tmp_path,
        env_id=env_id,
        traj_encoder="transformer",
        total_timesteps=88,
        timesteps_per_epoch=11,
        batches_per_epoch=2,
        max_seq_len=11,
        traj_save_len=11,
        run_name="r",
        **extra,
    )
    weights = torch.load(tmp_path / "runs" / "r" / "checkpoint.pt", weights_only=False)["agent"]
    assert any(k.startswith("tstep.cnns.0.") for k in weights)  # --tstep-encoder auto picked the CNN
    return read_scalars(tmp_path / "runs" / "r"), tmp_path / "buffers" / "r" / "fifo"


def test_agent_runs_on_pixels_smoke(tmp_path):
    """The pixel T-Maze end to end: CNN + random shift in training, uint8 frames in the buffer, success logged."""
    tags, fifo = run_on_pixels(
        tmp_path,
        "envs:PixelTMaze-v0",
        cnn_channels=(8, 16),
        cnn_kernels=(3, 3),
        cnn_strides=(2, 2),
        aug_frac=0.75,
        aug_pad=2,
    )
    assert len(tags["eval/PixelTMaze-v0/success"]) == 2  # epochs 2 and 4
    data = np.load(next(fifo.glob("*.npz")))
    assert data["obs_observation"].dtype == np.uint8 and data["obs_observation"].shape[1:] == (24, 24, 3)


def test_agent_runs_on_dict_observations_smoke(tmp_path):
    """An image (grayscale, channels first) beside a state vector, through the IMPALA backbone."""
    tags, fifo = run_on_pixels(tmp_path, "envs:PixelTMazeDict-v0", cnn="impala", cnn_channels=(4, 8))
    assert "eval/PixelTMazeDict-v0/success" in tags
    data = np.load(next(fifo.glob("*.npz")))
    assert data["obs_image"].shape[1:] == (1, 24, 24) and data["obs_state"].shape[1:] == (2,)


# ---------------------------------------------- other action and env kinds ----------------------------------------------
def test_smoke_multibinary_with_window_and_learned_positions(tmp_path):
    run_script(
        tmp_path,
        env_id="tests.dummy_envs:DummyMultiBinary-v0",
        window_size=4,
        pos_emb="learned",
        max_time_idx=4,
        total_timesteps=64,
        timesteps_per_epoch=8,
        batches_per_epoch=2,
    )
    files = saved_episodes(tmp_path)
    assert files and all(f["actions"].shape[1] == 3 and set(np.unique(f["actions"])) <= {0.0, 1.0} for f in files)


@needs_gymnax
def test_smoke_gymnax_already_vectorized_64_actors(tmp_path):  # (not imported here: jax's threads and fork do not mix)
    run_script(
        tmp_path,
        env_id="envs.gymnax_env:gymnax-MemoryChain-bsuite",
        env_mode="already_vectorized",
        num_envs=64,
        total_timesteps=512,
        timesteps_per_epoch=8,
        batches_per_epoch=2,
        eval_interval=1,
    )
    files = saved_episodes(tmp_path)
    assert len(files) >= 64  # every actor finished its 6-step episode and saved it
    for f in files:
        np.testing.assert_array_equal(f["time"], np.arange(len(f["time"])))  # whole episodes, from the reset obs on
        assert f["obs_observation"].shape == (len(f["time"]), 3) and f["terminated"][-1]
        # obs[0] = 1 - t/5: the stored last obs is gymnax's true final obs (0), not the next episode's reset obs (1)
        assert f["obs_observation"][0, 0] == 1 and abs(f["obs_observation"][-1, 0]) < 1e-6


# ---------------------------------------------------- the progress bar ----------------------------------------------------
FAST = 300  # the clock of a run below: time.time() runs this many times faster than the wall clock
FAST_CLOCK = (  # a launcher (run_script's): the script on that clock, so a test sees minutes of a run in seconds
    sys.executable,
    "-c",
    f"import runpy, sys, time; t0, clock = time.time(), time.time; time.time = lambda: t0 + {FAST} * (clock() - t0); "
    "sys.argv.pop(0); runpy.run_path(sys.argv[0], run_name='__main__')",
)


def seconds(text):  # tqdm's "MM:SS" or "H:MM:SS"
    return sum(int(part) * 60**i for i, part in enumerate(reversed(text.split(":"))))


def bar_lines(stderr):
    """Every line the bar drew into stderr: dicts of env steps, elapsed and ETA (seconds; None: none shown), updates
    and whether an eval return was shown."""
    out = []
    for line in stderr.replace("\r", "\n").splitlines():
        m = re.search(r"([\d,]+)/[\d,]+ env steps \[([\d:]+)(?:<([\d:]+))?", line)
        if m:
            updates = re.search(r"updates=([\d,]+)", line)
            out.append(
                dict(
                    steps=int(m[1].replace(",", "")),
                    elapsed=seconds(m[2]),
                    eta=seconds(m[3]) if m[3] else None,
                    updates=int(updates[1].replace(",", "")) if updates else 0,
                    eval="eval=" in line,
                )
            )
    return out


def test_the_eta_is_never_far_below_the_time_left(tmp_path):
    """An epoch's rollout counts its env steps before the epoch's updates run, so a rate over part of an epoch promises
    minutes for hours. On a clock 300x fast, every ETA the bar shows before the last epoch, in a fresh run and after a
    resume, is at least a third of the time the run then still took."""
    run = dict(env_id="CartPole-v1", timesteps_per_epoch=20, batches_per_epoch=60, eval_interval=0, num_workers=0)
    for total, again in ((120, {}), (240, {"resume": True})):  # 3 epochs of 2 actors x 20 steps, then 3 more
        out = run_script(tmp_path, launcher=FAST_CLOCK, total_timesteps=total, run_name="r", **again, **run)
        lines = bar_lines(out.stderr)
        end = lines[-1]["elapsed"]
        # epochs of minutes each (how many depends on this machine's speed; the check below is relative to it)
        assert lines[-1]["steps"] == total and end > 3 * 60
        etas = [
            (line["elapsed"], line["eta"]) for line in lines if line["eta"] is not None and line["steps"] <= total - 40
        ]
        assert etas and all(eta >= (end - t) / 3 for t, eta in etas), (again, end, etas)


def test_the_first_eval_comes_within_2_minutes_inside_a_long_epoch(tmp_path):
    """The first evaluation within 2 minutes, then every --eval-minutes: the clock is read between updates too, so an
    epoch longer than that still reports early. On a clock 300x fast, in one epoch of many minutes, an eval return is
    on the bar at 2 to 4 minutes, while the epoch's updates still run."""
    run = dict(env_id="CartPole-v1", total_timesteps=40, timesteps_per_epoch=20, batches_per_epoch=300, num_workers=0)
    lines = bar_lines(run_script(tmp_path, launcher=FAST_CLOCK, run_name="r", **run).stderr)
    assert lines[-1]["elapsed"] > 4 * 60 and lines[-1]["updates"] == 300  # one epoch, longer than the eval window
    first = next(line for line in lines if line["eval"])
    assert 110 <= first["elapsed"] <= 240 and first["updates"] < 300, first


def test_the_first_eval_comes_within_2_minutes_inside_a_long_rollout(tmp_path):
    """The clock is read between env steps as well: a first rollout of many minutes (before the buffer holds a file,
    so before any update) still shows an eval return on the bar at 2 to 4 minutes, mid-rollout."""
    run = dict(env_id="CartPole-v1", total_timesteps=6000, timesteps_per_epoch=3000, batches_per_epoch=1, num_workers=0)
    lines = bar_lines(run_script(tmp_path, launcher=FAST_CLOCK, run_name="r", eval_interval=1000, **run).stderr)
    first_epoch = [line for line in lines if line["steps"] < 6000]
    assert first_epoch[-1]["elapsed"] > 4 * 60  # the first rollout outlasts the eval window
    first = next(line for line in lines if line["eval"])
    assert 110 <= first["elapsed"] <= 240 and first["steps"] < 6000 and first["updates"] == 0, first


def test_the_bar_times_whole_epochs_and_draws_its_last_line_once(monkeypatch, capsys):
    """Counts only until this process has run a whole epoch with updates (a first epoch of rollouts alone is not
    timed); then the rate and the ETA of whole epochs: 10 epochs of 100 env steps, the first 10 s without updates, the
    second 100 s; 30 s into the third, 7 epochs of 100 s and 70 s are left. Into a file (not a terminal), close()
    leaves one last line, not two."""
    from types import SimpleNamespace

    from common.logs import Progress

    now = [0.0]
    monkeypatch.setattr("common.logs.time.time", lambda: now[0])
    counters = {"epoch": 0, "global_step": 0, "updates": 0}
    bar = Progress(SimpleNamespace(mode="both"), counters, total_steps=1000, total_updates=None, epochs=10)

    def show(t, **c):
        now[0] = t
        counters.update(c)
        bar.show(counters)
        return capsys.readouterr().err.replace("\r", "\n").splitlines()[-1]

    now[0] = 10.0
    counters.update(epoch=1, global_step=100)
    bar.epoch_done(counters)  # the buffer had no file yet: no update
    line = show(60.0, global_step=200, updates=50)  # the second epoch's rollout, then half its updates
    assert "200/1,000 env steps [" in line and "env steps/s" not in line and "<" not in line, line
    now[0] = 110.0
    counters.update(epoch=2, updates=100)
    bar.epoch_done(counters)
    line = show(140.0, global_step=300)
    assert "300/1,000 env steps [" in line and "<12:50, 1.00 env steps/s" in line and "updates=100" in line, line
    counters["global_step"] = 350
    bar.close(counters)
    last = [line for line in capsys.readouterr().err.replace("\r", "\n").splitlines() if line.strip()]
    assert len(last) == 1 and "350/1,000 env steps" in last[0], last
