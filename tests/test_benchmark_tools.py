"""benchmarks/ helpers: run.py's per-env curve of a multi-env run, and random_baseline.py's uniform-random policy."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from run import per_env_curve  # noqa: E402


def test_per_env_curve_has_one_column_per_env_at_the_evals_all_envs_logged():
    t0 = 1000.0
    scalars = {
        "eval/a/success": [(t0 + 60, 10, 0.5), (t0 + 120, 20, 1.0)],
        "eval/b/success": [(t0 + 60, 10, 0.25), (t0 + 120, 20, 0.75), (t0 + 180, 30, 1.0)],
        "eval/a/return": [(t0 + 60, 10, 9.0)],  # another metric: not a column
        "eval/success": [(t0 + 60, 10, 0.1)],  # not per env
        "charts/updates": [(t0 + 60, 10, 4), (t0 + 120, 20, 8)],
    }
    lines = per_env_curve(scalars, t0, "success").splitlines()
    assert lines == [
        "minutes,env_steps,updates,a/success,b/success",
        "1.00,10,4,0.500,0.250",
        "2.00,20,8,1.000,0.750",  # step 30: only b logged it
    ]
    assert per_env_curve(scalars, t0, "attempt 1 success") is None  # no such metric: no file


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
