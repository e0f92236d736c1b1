"""A user's mistake (a bad flag, env id or run, a script copied without common/) is one line on stderr, `error: ...`,
naming the value and what is accepted, with exit status 2 and no traceback; a program error keeps its traceback."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MULTITASK_SCRIPT, ROOT, SCRIPT, TINY_RUN, flags

from common.guards import DiskFullError, UserError


def run(cwd, script, *argv, path=str(ROOT)):
    env = {"PYTHONPATH": path, "PATH": str(Path(sys.executable).parent), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, str(script), *argv], cwd=cwd, capture_output=True, text=True, env=env)


def one_line_error(out, status=2):
    """The single `error: ...` line of a refused run (asserting that it is the only thing on stderr)."""
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == status and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr[-2000:]
    return lines[0]


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--no-such-flag", "1"], "error: Unrecognized options: --no-such-flag, 1 ("),  # tyro's own check
        (["--mixed-precision", "fp8"], "invalid choice 'fp8' for argument '--mixed-precision'. Expected one of"),
        (["--d-model", "big"], "--d-model: invalid literal for int() with base 10: 'big'"),
        (["--greedy-episodes", "1.5"], "error: --greedy-episodes must lie in [0, 1] (the share of greedy episodes)"),
        (["--traj-encoder", "lstm"], "error: --traj-encoder 'lstm': choose ff, gru, transformer, mamba, or module:f"),
        (["--env-id", "CartPol-v1"], "error: --env-id 'CartPol-v1': Environment `CartPol` doesn't exist. Did you mean"),
        (["--env-id", "no_such_pkg:Foo-v0"], "error: --env-id no_such_pkg:Foo-v0: cannot import 'no_such_pkg'"),
        (["--exploration", "nomod:f"], "error: --exploration 'nomod:f': cannot import 'nomod'"),
        (
            ["--resume", "--run-name", "nothing-here"],
            "error: --resume: no checkpoint at runs/nothing-here/checkpoint.pt",
        ),
        (["--resume"], "error: --resume needs --run-name NAME: the run to continue"),
    ],
    ids=[
        "unknown",
        "choice",
        "type",
        "range",
        "encoder",
        "env-id",
        "env-module",
        "hook",
        "resume-none",
        "resume-unnamed",
    ],
)
def test_a_bad_flag_env_id_or_run_is_one_line(tmp_path, argv, said):
    assert said in one_line_error(run(tmp_path, SCRIPT, *argv))


def test_an_env_id_in_a_module_is_named_as_typed(tmp_path):
    """`envs:NoSuch-v0`: the id as typed, without the hint to write the `module:` form the user already wrote."""
    line = one_line_error(run(tmp_path, SCRIPT, "--env-id", "envs:NoSuch-v0"))
    assert "error: --env-id 'envs:NoSuch-v0': Environment `NoSuch` doesn't exist" in line, line
    assert "package.module" not in line, line


def test_an_optional_package_missing_is_one_line(tmp_path):
    """--capture-video without moviepy (not in requirements.txt) is named before the run starts."""
    code = "import runpy, sys; sys.modules['moviepy'] = None; sys.argv = sys.argv[1:]\n"  # `import moviepy` fails
    code += f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')"
    env = {"PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-c", code, "amago_agent.py", "--capture-video"]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert "error: --capture-video needs moviepy" in one_line_error(out)


def test_amago_2_refuses_alike(tmp_path):
    assert "error: --num-bins must be >= 2, got 1" in one_line_error(run(tmp_path, MULTITASK_SCRIPT, "--num-bins", "1"))


def test_a_refused_resume_is_one_line_and_changes_nothing(tmp_path):
    flags_file = tmp_path / "runs/r/flags.json"
    flags_file.parent.mkdir(parents=True)
    flags_file.write_text(json.dumps({"gamma": 0.999, "d_model": 16}))
    line = one_line_error(run(tmp_path, SCRIPT, "--resume", "--run-name", "r", "--gamma", "0.99"))
    assert "error: --resume: --gamma 0.99 differs from run r's 0.999" in line and "leave --gamma out" in line
    assert json.loads(flags_file.read_text()) == {"gamma": 0.999, "d_model": 16}


@pytest.mark.parametrize("script", ["amago_agent.py", "amago_multitask.py"])
def test_a_script_copied_without_common_says_so_in_one_line(tmp_path, script):
    shutil.copy(ROOT / script, tmp_path / script)
    line = one_line_error(run(tmp_path, tmp_path / script, path=""))
    assert line == f"error: {script} needs amago-clean's folder common/ beside it (No module named 'common')"


def test_help_and_program_errors_are_untouched(tmp_path):
    assert run(tmp_path, SCRIPT, "--help").returncode == 0
    # a program error (here the env's own, mid-run) keeps its traceback and status 1
    out = run(tmp_path, SCRIPT, *flags(**TINY_RUN, env_id="tests.test_faults:FaultsStepRaises-v0", total_timesteps=64))
    assert out.returncode == 1 and "Traceback" in out.stderr and "RuntimeError: the simulator crashed" in out.stderr


def test_the_hook_prints_one_line_for_user_errors_and_a_full_disk(tmp_path):
    for error, status in ((UserError("--x 3: choose 1 or 2"), 2), (DiskFullError(28, "cannot write f: full."), 1)):
        code = (
            "import sys\nfrom common.guards import DiskFullError, UserError, user_error_hook\n"
            f"sys.excepthook = user_error_hook\nraise {type(error).__name__}{error.args!r}\n"
        )
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
        said = "--x 3: choose 1 or 2" if status == 2 else "cannot write f: full."
        assert one_line_error(out, status) == f"error: {said}"


def test_a_flag_this_agent_does_not_read_is_noted(tmp_path):
    """--discrete-clip with Box actions, --n-heads with a GRU: one note each, and the run trains; a flag the agent
    reads gets none."""
    from conftest import run_script

    run = dict(total_timesteps=32, timesteps_per_epoch=16, batches_per_epoch=1, eval_interval=0, num_workers=0)
    box = run_script(tmp_path, env_id="Pendulum-v1", discrete_clip=(0.01, 0.9), run_name="box", **run)
    assert "note: --discrete-clip is read only with Discrete actions; this run (box actions" in box.stdout
    gru = run_script(
        tmp_path, env_id="CartPole-v1", traj_encoder="gru", discrete_clip=(0.01, 0.9), run_name="gru", **run
    )
    assert "note: --n-heads is read only with --traj-encoder transformer" in gru.stdout
    assert "--discrete-clip is read only" not in gru.stdout
