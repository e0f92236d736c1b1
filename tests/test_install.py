"""The light install: requirements.txt names what the scripts and common/ import, and nothing else; wandb stays
optional (--track without it is a one-line error); CI installs what README.md says and runs its test command."""

import ast
import re
import subprocess
import sys

from conftest import ROOT

# distribution names in requirements.txt -> the top-level modules they provide
PROVIDES = {"torch": "torch", "gymnasium": "gymnasium", "numpy": "numpy", "tyro": "tyro", "accelerate": "accelerate"}
PROVIDES |= {"tensorboard": "tensorboard", "tqdm": "tqdm"}
OPTIONAL = {"wandb": "--track", "moviepy": "--capture-video"}
COMMON = sorted(f"common/{p.name}" for p in ROOT.glob("common/*.py") if p.name != "__init__.py")
SOURCES = ["amago_agent.py", "amago_multitask.py", "common/__init__.py", *COMMON]


def imported_modules(path):
    """The top-level modules a file imports, at any depth (lazy imports inside functions included)."""
    out = set()
    for node in ast.walk(ast.parse((ROOT / path).read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


def requirement_names(name):
    lines = (ROOT / name).read_text().splitlines()
    return [re.split(r"[\[<>=!~;\s]", line.strip(), maxsplit=1)[0] for line in lines if line.strip()[:1].isalnum()]


def test_requirements_txt_names_what_the_scripts_and_common_import_and_nothing_else():
    third_party = set().union(*(imported_modules(p) for p in SOURCES)) - set(sys.stdlib_module_names) - {"common"}
    assert "torch" in third_party and "tyro" in third_party  # the parse found the scripts' imports
    needed = third_party - set(OPTIONAL)
    named = requirement_names("requirements.txt")
    assert sorted(PROVIDES[n] for n in named if n in PROVIDES) == sorted(needed), (named, needed)
    assert set(named) == set(PROVIDES), f"requirements.txt names more than the scripts import: {named}"
    assert "box2d" in (ROOT / "requirements.txt").read_text()  # the README's LunarLander command
    # the optional ones and the environments' packages are in requirements-dev.txt, which includes requirements.txt
    dev = requirement_names("requirements-dev.txt")
    assert "-r requirements.txt" in (ROOT / "requirements-dev.txt").read_text()
    assert {"pytest", "ruff", "matplotlib", "popgym", "gymnax"} <= set(dev)


def test_nothing_imports_wandb_without_track_and_track_without_it_is_a_one_line_error(tmp_path):
    """With wandb unimportable, both scripts, common/ and envs/ import, and `--track` stops before the first env step
    with one line naming the package and the flag, exit status 2, no traceback."""
    block = "import sys; sys.modules['wandb'] = None\n"  # `import wandb` -> ImportError
    modules = ["amago_agent", "amago_multitask", "envs", *(p[: -len(".py")].replace("/", ".") for p in COMMON)]
    code = block + "".join(f"import {m}\n" for m in modules) + "print('imported', 'wandb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0 and "imported True" in out.stdout, out.stderr[-2000:]  # True: the None we put there
    script = str(ROOT / "amago_agent.py")
    run = block + f"import runpy; sys.argv = sys.argv[1:]; sys.path.insert(0, {str(ROOT)!r})\n"
    run += f"runpy.run_path({script!r}, run_name='__main__')"
    argv = ["amago_agent.py", "--env-id", "CartPole-v1", "--track", "--run-name", "t", "--buffer-dir", str(tmp_path)]
    out = subprocess.run([sys.executable, "-c", run, *argv], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("error: --track needs wandb") and "pip install wandb" in last


def readme_section(title):
    text = (ROOT / "README.md").read_text()
    start = text.index(f"\n## {title}\n")
    return text[start : text.index("\n## ", start + 1)]


def pip_installs(text):
    """The requirements files of `pip install ... -r FILE` commands, in order."""
    return re.findall(r"pip install (?:-q )?-r (\S+)", text)


def test_ci_installs_what_the_readme_says_and_runs_its_test_command():
    ci = (ROOT / ".ci/run").read_text()
    commands = [line.split("#")[0] for line in ci.splitlines() if not line.lstrip().startswith("#")]
    ci_files = pip_installs("\n".join(commands))
    readme = pip_installs(readme_section("Install and run")) + pip_installs(readme_section("Tests"))
    readme = list(dict.fromkeys(readme))  # the Tests section repeats the test set-up of Install and run
    assert ci_files == readme == ["requirements.txt", "requirements-dev.txt"], (ci_files, readme)
    assert "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in readme_section("Install and run")
    assert "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in ci
    assert ci.index("torch==2.13.0") < ci.index("-r requirements.txt")  # torch first: nothing pulls a CUDA build
    last = [line.strip() for line in commands if line.strip()][-3:]  # the README's test commands end the script
    assert sorted(last) == ["python -m pytest -q -n auto", "ruff check .", "ruff format --check ."], last
    assert all(command in readme_section("Tests") for command in last)
