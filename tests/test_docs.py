"""The guides in docs/ stay true to the scripts: every line link holds the code it names (docs/relink.py moves them),
every scalar a script logs is explained in its guide, and every command a guide shows parses."""

import re
import shlex
import shutil
import subprocess

import pytest
import tyro
from conftest import ROOT

from docs import relink

GUIDES = {"amago_agent.md": "amago_agent.py", "amago_multitask.md": "amago_multitask.py"}


def guide_path(name):
    path = ROOT / "docs" / name
    if not path.exists():
        pytest.skip(f"docs/{name} is not written yet")
    return path


def test_every_line_link_holds_its_token():
    failures = relink.check(ROOT)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", list(GUIDES))
def test_every_script_link_has_the_checked_form(name):
    """A link to a script that the checker cannot parse would never be checked: refuse it."""
    text = guide_path(name).read_text()
    found = re.findall(r"\]\(\.\./[\w./-]+\.py#L[^)]*\)", text)
    parsed = relink.links(text)
    assert len(parsed) == len(found), f"docs/{name}: some links to a script are not `[`token` ...](../x.py#La-Lb)`"
    assert len(parsed) >= 30, f"docs/{name} has only {len(parsed)} line links"


def copy_project(tmp_path):
    for rel in ["amago_agent.py", "common/logs.py", "common/scale.py", "docs/amago_agent.md"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    return tmp_path


def test_the_link_check_fails_when_a_referenced_line_moves_and_relink_repairs_it(tmp_path):
    root = copy_project(tmp_path)
    assert relink.check(root) == []
    guide = root / "docs/amago_agent.md"
    before = [(tok, a, b) for _, tok, _, a, b in relink.links(guide.read_text())]
    script = root / "amago_agent.py"
    script.write_text("# one line more at the top\n" + script.read_text())
    failures = relink.check(root)
    assert len(failures) >= 30  # each link whose token left its range
    assert all("amago_agent.md" in f and "`" in f and "python docs/relink.py" in f for f in failures)
    changes = []
    assert relink.relink(root, log=changes.append) == []
    assert len(changes) == len(failures) and relink.check(root) == []
    after = [(tok, a, b) for _, tok, _, a, b in relink.links(guide.read_text())]
    moved = [x for x, y in zip(before, after) if x != y]
    assert len(moved) == len(failures)
    assert all(y in (x, (x[0], x[1] + 1, x[2] + 1)) for x, y in zip(before, after))  # moved down by the one line


def test_relink_run_twice_moves_nothing_the_second_time(tmp_path):
    """In a git checkout relink keeps a token's place inside its range as the committed script had it. A second run
    before the commit must not apply that offset again to the links the first run moved up (a long range moved up by
    fewer lines than it spans still holds the line where the committed script has its token)."""
    root = copy_project(tmp_path)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "c"]):
        subprocess.run(git + cmd, check=True, capture_output=True)
    script = root / "amago_agent.py"
    tokens = {tok for _, tok, *_ in relink.links((root / "docs/amago_agent.md").read_text())}
    lines = script.read_text().splitlines(keepends=True)
    drop = [i for i, line in enumerate(lines) if not any(t in line for t in tokens)][:17]  # early lines, no token
    script.write_text("".join(line for i, line in enumerate(lines) if i not in drop))
    first, second = [], []
    assert relink.relink(root, log=first.append) == [] and first and relink.check(root) == []
    guide = (root / "docs/amago_agent.md").read_text()
    assert relink.relink(root, log=second.append) == [] and second == []
    assert (root / "docs/amago_agent.md").read_text() == guide and relink.check(root) == []


def test_relink_names_a_token_that_no_longer_occurs(tmp_path):
    root = copy_project(tmp_path)
    script = root / "amago_agent.py"
    script.write_text(script.read_text().replace("y_norm = self.popart.normalize_target(y)", "y_n = normalize(y)"))
    assert any("y_norm = self.popart.normalize_target(y)" in f for f in relink.check(root))
    missing = relink.relink(root, log=lambda line: None)
    assert len(missing) == 1 and "y_norm = self.popart.normalize_target(y)" in missing[0]


def test_placeholder_links_are_placed_at_the_token(tmp_path):
    root = copy_project(tmp_path)
    (root / "docs/amago_agent.md").write_text("[`def nstep_td_target`](../amago_agent.py#L0-L3)\n")
    relink.relink(root, log=lambda line: None)
    lines = (root / "amago_agent.py").read_text().splitlines()
    a = next(i + 1 for i, line in enumerate(lines) if "def nstep_td_target" in line)
    assert (root / "docs/amago_agent.md").read_text() == f"[`def nstep_td_target`](../amago_agent.py#L{a}-L{a + 3})\n"


PLACEHOLDERS = {"name": "<env>", "n": "<env>", "key": "<metric>"}


def logged_names(script):
    """Every scalar name a script writes: its "charts/", "losses/", "buffer/" string literals (with those of
    common/scale.py, which logs for it), and the eval names of common/logs.py's eval_metrics; f-string fields become
    <env> and <metric>."""
    literal = r'f?"((?:charts|losses|buffer)/[^"]*)"'
    names = set(re.findall(literal, (ROOT / script).read_text()))
    names |= set(re.findall(literal, (ROOT / "common/scale.py").read_text()))
    logs = (ROOT / "common/logs.py").read_text()
    body = logs[logs.index("def eval_metrics") : logs.index("def read_scalars")]
    names |= set(re.findall(r'f?"(eval/[^"]*)"', body))
    return sorted({re.sub(r"\{(\w+)\}", lambda m: PLACEHOLDERS.get(m.group(1), "<env>"), n) for n in names})


@pytest.mark.parametrize("name", list(GUIDES))
def test_every_logged_scalar_is_explained_in_the_guide(name):
    text = guide_path(name).read_text()
    names = logged_names(GUIDES[name])
    assert {"eval/return", "eval/<env>/return", "eval/<env>/<metric>", "losses/critic_loss"} <= set(names)
    missing = [n for n in names if f"`{n}`" not in text]
    assert not missing, f"docs/{name} does not explain {missing} (logged by {GUIDES[name]})"


def commands(text, script):
    """The `python <script> ...` commands in a guide's fenced code blocks, as argument lists."""
    out = []
    for block in re.findall(r"^```[\w-]*\n(.*?)^```", text, flags=re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line.startswith(f"python {script} ") or line == f"python {script}":
                out.append(shlex.split(line, comments=True)[2:])
    return out


@pytest.mark.parametrize("name", list(GUIDES))
def test_every_command_in_the_guide_parses(name):
    text = guide_path(name).read_text()
    module = __import__(GUIDES[name][: -len(".py")])
    cmds = commands(text, GUIDES[name])
    assert cmds, f"docs/{name} shows no `python {GUIDES[name]} ...` command"
    for argv in cmds:
        try:
            module.check_args(tyro.cli(module.Args, args=argv))  # the flags parse, and the script accepts them
        except (SystemExit, ValueError) as e:
            pytest.fail(f"docs/{name}: `python {GUIDES[name]} {shlex.join(argv)}` is refused: {e!r}")
