"""Copying a script into a project of one's own: the script and common/ alone (no envs/, no tests/, nothing on
PYTHONPATH) train, and a foreign package named `common` is refused with a message instead of being used."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, TINY_RUN, flags


def run_copy(folder, script):
    env = {"PATH": str(Path(sys.executable).parent), "OMP_NUM_THREADS": "1", "HOME": str(folder)}
    cmd = [sys.executable, script, *flags(**TINY_RUN, total_timesteps=64, timesteps_per_epoch=16, batches_per_epoch=4)]
    return subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.parametrize("script", ["amago_agent.py", "amago_multitask.py"])
def test_the_script_and_common_train_anywhere(tmp_path, script):
    shutil.copy(ROOT / script, tmp_path / script)
    shutil.copytree(ROOT / "common", tmp_path / "common", ignore=shutil.ignore_patterns("__pycache__"))
    out = run_copy(tmp_path, script)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "CartPole-v1" in out.stdout and (tmp_path / "runs").is_dir() and any((tmp_path / "buffers").iterdir())
    assert not (tmp_path / "envs").exists()


def test_a_foreign_common_package_is_refused(tmp_path):
    shutil.copy(ROOT / "amago_agent.py", tmp_path / "amago_agent.py")
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "__init__.py").write_text("")  # the user's own `common`, first on sys.path
    out = run_copy(tmp_path, "amago_agent.py")
    assert out.returncode != 0
    assert f"cannot import name 'AMAGO_CLEAN' from 'common' ({tmp_path / 'common' / '__init__.py'})" in out.stderr
