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


def test_the_guides_first_edit_runs_a_setting_without_a_docstring(tmp_path):
    """docs/amago_agent.md "Adapt it" 5: add `awr_beta: float = 1.0` to Args (no docstring: a user's quick edit) and
    weigh the actor's BC term by exp(A / beta). The copy parses the new flag, lists it in --help, and trains."""
    shutil.copytree(ROOT / "common", tmp_path / "common", ignore=shutil.ignore_patterns("__pycache__"))
    text = (ROOT / "amago_agent.py").read_text()
    anchor = '    offline_coeff: float = 0.1\n    """weight of the "offline" filtered behavior-cloning term -1[A>0] log pi(a|s)"""\n'
    old = "            keep = (adv > 0).float()\n"
    new = "            keep = torch.exp(adv / args.awr_beta).clamp(max=20.0)  # AWR weights instead of a 0/1 filter\n"
    assert text.count(anchor) == 1 and text.count(old) == 1  # the guide's edit still applies to the script as it is
    text = text.replace(anchor, anchor + "    awr_beta: float = 1.0\n").replace(old, new)
    (tmp_path / "amago_agent.py").write_text(text)
    env = {"PATH": str(Path(sys.executable).parent), "OMP_NUM_THREADS": "1", "HOME": str(tmp_path)}
    helped = subprocess.run(
        [sys.executable, "amago_agent.py", "--help"], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert helped.returncode == 0 and "--awr-beta" in helped.stdout, helped.stderr[-2000:]
    cmd = [
        sys.executable,
        "amago_agent.py",
        "--awr-beta",
        "0.5",
        *flags(**TINY_RUN, total_timesteps=64, timesteps_per_epoch=16, batches_per_epoch=4),
    ]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
