"""Short runs of the real script (CLI, envs, buffer, DataLoader worker, update, eval, checkpoint): exit 0."""

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "amago_agent.py"
SCRIPTS = [SCRIPT, SCRIPT.parent / "amago_multitask.py"]  # AMAGO-2: the same script but for its critic and loss
TINY = [
    "--num-envs",
    "2",
    "--timesteps-per-epoch",
    "25",
    "--batches-per-epoch",
    "2",
    "--batch-size",
    "4",
    "--max-seq-len",
    "8",
    "--traj-save-len",
    "16",
    "--d-model",
    "16",
    "--n-layers",
    "1",
    "--n-heads",
    "2",
    "--d-ff",
    "32",
    "--tstep-hidden",
    "16",
    "--tstep-dim",
    "16",
    "--actor-hidden",
    "16",
    "--critic-hidden",
    "16",
    "--eval-interval",
    "2",
    "--eval-episodes",
    "2",
]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
@pytest.mark.parametrize("encoder", ["ff", "gru", "transformer", "mamba"])
@pytest.mark.parametrize("env_id, steps", [("CartPole-v1", 100), ("tests.dummy_envs:DummyBox-v0", 100)])
def test_smoke_run(tmp_path, encoder, env_id, steps, script):
    cmd = [
        sys.executable,
        str(script),
        "--env-id",
        env_id,
        "--traj-encoder",
        encoder,
        "--total-timesteps",
        str(steps),
        *TINY,
        "--save-model",
    ]
    out = subprocess.run(
        cmd,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(SCRIPT.parent), "PATH": ""},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    (run,) = (tmp_path / "runs").iterdir()
    assert (run / f"{script.stem}.cleanrl_model").exists() and (run / "checkpoint.pt").exists()
    assert list((tmp_path / "buffers" / run.name / "fifo").glob("*.npz"))


def test_bad_argument_is_a_clear_error(tmp_path):
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--max-seq-len", "0"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert out.returncode != 0 and "--max-seq-len must be >= 1, got 0" in out.stderr


def test_accelerate_launch(tmp_path):
    """The update goes through accelerate, so the script runs under `accelerate launch` as well."""
    launch = Path(sys.executable).parent / "accelerate"
    cmd = [
        str(launch),
        "launch",
        "--cpu",
        "--num_processes",
        "1",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        str(SCRIPT),
        "--total-timesteps",
        "100",
        *TINY,
    ]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (next((tmp_path / "runs").iterdir()) / "checkpoint.pt").exists()
