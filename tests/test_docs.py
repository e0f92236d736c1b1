"""The guides in docs/ stay true to the scripts: every line link holds the code it names (docs/relink.py moves them),
every scalar a script logs is explained in its guide, and every command a guide shows parses; so does every command
README.md shows and every flag a recipe uses; --help shows every flag once, in its section; README's file table names
every file of common/, and common/memory.py's figures are the recorded ones."""

import ast
import json
import re
import shlex
import shutil
import statistics
import subprocess

import pytest
import tyro
from conftest import ROOT

from docs import relink

GUIDES = {"amago_agent.md": "amago_agent.py", "amago_multitask.md": "amago_multitask.py"}
SCRIPT = "amago_agent.py"


def guide_path(name):
    path = ROOT / "docs" / name
    if not path.exists():
        pytest.skip(f"docs/{name} is not written yet")
    return path


def test_every_line_link_holds_its_token():
    """Every link's first token occurs once in its script, inside the link's range, and the range holds the whole
    block that starts on the token's line (a def's body to its last line, a statement to its end)."""
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
    """The script, the modules the guide links into and the guide, committed in a git repository of their own (relink
    keeps what a range holds beside its block as the committed script shows it)."""
    for rel in [
        "amago_agent.py",
        "common/logs.py",
        "common/scale.py",
        "envs/kshot.py",
        "benchmarks/watch.py",
        "docs/amago_agent.md",
    ]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "c"]):
        subprocess.run(git + cmd, check=True, capture_output=True)
    relink.committed_text.cache_clear()
    return tmp_path


def guide_links(root, token):
    """The ranges of the guide's links anchored on `token`."""
    return [(a, b) for _, tok, _, a, b in relink.links((root / "docs/amago_agent.md").read_text()) if tok == token]


def block_of(script, token):
    """(first, last) line of the block that starts on the one line holding `token`."""
    line = [i + 1 for i, text in enumerate(script.read_text().splitlines()) if token in text]
    assert len(line) == 1
    return line[0], relink.block_ends(script.read_text()).get(line[0], line[0])


def test_the_link_check_fails_when_a_referenced_line_moves_and_relink_repairs_it(tmp_path):
    root = copy_project(tmp_path)
    assert relink.check(root) == []
    before = [
        (tok, a, b) for _, tok, f, a, b in relink.links((root / "docs/amago_agent.md").read_text()) if f == SCRIPT
    ]
    script = root / SCRIPT
    script.write_text("# one line more at the top\n" + script.read_text())
    failures = relink.check(root)
    assert len(failures) >= 30  # each link whose block left its range
    assert all("amago_agent.md" in f and "`" in f and "python docs/relink.py" in f for f in failures)
    changes = []
    assert relink.relink(root, log=changes.append) == []
    assert len(changes) >= len(failures) and relink.check(root) == []
    after = [(tok, a, b) for _, tok, f, a, b in relink.links((root / "docs/amago_agent.md").read_text()) if f == SCRIPT]
    assert len(after) == len(before) >= 30
    assert all(y == (x[0], x[1] + 1, x[2] + 1) for x, y in zip(before, after))  # every link down by the one line


def test_a_range_that_misses_part_of_its_block_fails_and_relink_makes_it_whole(tmp_path):
    """Lines inserted inside `def sample` leave its range short of the function's `return`: the check fails, and
    relink widens the range to the whole function (not just the token's new place)."""
    root = copy_project(tmp_path)
    script, token = root / "amago_agent.py", "def sample(self, files, cache, bad):"
    first, last = block_of(script, token)
    before = guide_links(root, token)
    assert before and all(a == first and b >= last for a, b in before)
    lines = script.read_text().splitlines(keepends=True)
    body = first + 2  # a line inside the body (after the def line and the first statement)
    indent = lines[body - 1][: len(lines[body - 1]) - len(lines[body - 1].lstrip())]
    lines[body - 1 : body - 1] = [f"{indent}pass  # inserted\n"] * 3
    script.write_text("".join(lines))
    failures = relink.check(root)
    assert any(token in f and f"its block (lines {first}-{last + 3})" in f for f in failures), failures
    assert relink.relink(root, log=lambda line: None) == [] and relink.check(root) == []
    assert guide_links(root, token) == [(a, b + 3) for a, b in before]  # the lines beside the block kept
    lines = script.read_text().splitlines()
    ret = next(i + 1 for i in range(first, last + 3) if lines[i].strip().startswith("return "))
    assert all(a <= ret <= b for a, b in guide_links(root, token))  # the window it returns, in every link's range


def test_a_shortened_range_fails(tmp_path):
    root = copy_project(tmp_path)
    guide, token = root / "docs/amago_agent.md", "def nstep_td_target"
    (a, b), last = guide_links(root, token)[0], block_of(root / SCRIPT, token)[1]
    guide.write_text(
        guide.read_text().replace(f"[`{token}`](../{SCRIPT}#L{a}-L{b})", f"[`{token}`](../{SCRIPT}#L{a}-L{last - 1})")
    )
    failures = relink.check(root)
    assert len(failures) >= 1 and all(token in f and "is not all in" in f for f in failures)


def test_a_range_that_spills_into_the_next_block_fails(tmp_path):
    """`def attention`'s range run on three lines, to the header of the class after it: it holds the function whole,
    but cuts the next block, which the check names."""
    root = copy_project(tmp_path)
    guide, token = root / "docs/amago_agent.md", "def attention(q, k, v, window_size=None, mask=None):"
    (a, b), nxt = guide_links(root, token)[0], block_of(root / SCRIPT, "class TransformerLayer(nn.Module):")[0]
    assert b < nxt and relink.check(root) == []
    guide.write_text(guide.read_text().replace(f"(../{SCRIPT}#L{a}-L{b})", f"(../{SCRIPT}#L{a}-L{nxt})"))
    failures = relink.check(root)
    assert len(failures) == 1 and f"line {nxt} starts a block" in failures[0], failures


def test_a_metrics_row_whose_link_misses_a_metric_it_names_fails(tmp_path):
    """A row of the logged-metrics table names two scalars; its link holds only the line of the first."""
    root = copy_project(tmp_path)
    guide, token = root / "docs/amago_agent.md", 'writer.add_scalar("charts/episodic_return"'
    (a, b) = guide_links(root, token)[0]
    row = next(line for line in guide.read_text().splitlines() if token in line)
    guide.write_text(
        guide.read_text().replace(
            row, row.replace("| `charts/episodic_return` |", "| `charts/episodic_return`, `charts/learning_rate` |")
        )
    )
    failures = relink.check(root)
    assert len(failures) == 1 and "names `charts/learning_rate`, which the script writes outside" in failures[0]


def test_a_token_that_occurs_more_than_once_is_refused(tmp_path):
    """`def step(self, x, time, hidden):` is the first line of four methods: a link anchored on it proves nothing."""
    root = copy_project(tmp_path)
    token = "def step(self, x, time, hidden):"
    assert (root / "amago_agent.py").read_text().count(token) > 1
    (root / "docs/amago_agent.md").write_text(f"[`{token}` of the Transformer](../amago_agent.py#L0)\n")
    failures = relink.check(root)
    assert len(failures) == 1 and "occurs 4 times" in failures[0]
    missing = relink.relink(root, log=lambda line: None)
    assert len(missing) == 1 and "occurs 4 times" in missing[0]


def test_relink_run_twice_moves_nothing_the_second_time(tmp_path):
    """relink keeps what a range holds beside its block as the committed script had it. A second run before the
    commit must not apply the committed margins again to the links the first run moved up."""
    root = copy_project(tmp_path)
    script = root / "amago_agent.py"
    tokens = {tok for _, tok, f, *_ in relink.links((root / "docs/amago_agent.md").read_text()) if f == SCRIPT}
    lines = script.read_text().splitlines(keepends=True)
    drop = [i for i, line in enumerate(lines) if not line.strip()][:17]  # early blank lines (a block or two shrinks)
    script.write_text("".join(line for i, line in enumerate(lines) if i not in drop))
    assert all(script.read_text().count(t) == 1 for t in tokens)
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


def test_placeholder_links_are_placed_at_the_tokens_whole_block(tmp_path):
    root = copy_project(tmp_path)
    (root / "docs/amago_agent.md").write_text("[`def nstep_td_target`](../amago_agent.py#L0-L3)\n")
    relink.relink(root, log=lambda line: None)
    a, b = block_of(root / "amago_agent.py", "def nstep_td_target")
    assert (
        b - a > 3
        and (root / "docs/amago_agent.md").read_text() == f"[`def nstep_td_target`](../amago_agent.py#L{a}-L{b})\n"
    )


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


def readme_commands():
    """(script, argv) of every command README.md shows: a line of a fenced block or an inline code span that runs a
    script (python, a launcher), its placeholders (`...`, `[flags]`) and --help left out; and a span that is a flag list
    alone (the reference's scale), for amago_agent.py."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```[\w-]*\n(.*?)^```", text, flags=re.S | re.M)
    lines = [line for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    lines += [
        span.replace("\n", " ")
        for span in re.findall(r"`([^`]+)`", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))
    ]
    out = []
    for line in lines:
        run = re.search(r"(?:python|launch)\b.*?\b(amago_agent|amago_multitask)\.py\b(.*)", line)
        if run:
            out.append(
                (run[1], [a for a in shlex.split(run[2], comments=True) if a not in ("...", "[flags]", "--help")])
            )
        elif line.startswith("--") and line.count(" --") >= 2:
            out.append(("amago_agent", shlex.split(line)))
    return out


def test_every_readme_command_parses(monkeypatch):
    """Every command README.md shows parses as the script parses it (common/args.py's parse_flags) and passes its
    checks: a renamed flag or a changed choice fails here."""
    from common.args import parse_flags

    monkeypatch.setattr("sys.excepthook", None)  # parse_flags installs its own: restored after the test
    cmds = readme_commands()
    assert ("amago_agent", ["--env-id", "LunarLander-v2", "--traj-encoder", "transformer"]) in cmds
    assert any("--d-ff" in argv for _, argv in cmds)  # the reference's scale
    for script, argv in cmds:
        module = __import__(script)
        try:
            module.check_args(parse_flags(module.Args, argv))
        except (SystemExit, ValueError) as e:
            pytest.fail(f"README.md: `python {script}.py {shlex.join(argv)}` is refused: {e!r}")


def test_every_flag_a_recipe_uses_exists():
    """Every --flag in benchmarks/*.sh is a flag of a script (amago_agent.py, amago_multitask.py) or of a tool it runs
    (an argparse flag of benchmarks/ or common/launch.py); pip's own flags aside. A renamed flag breaks no recipe."""
    import dataclasses

    import amago_agent
    import amago_multitask

    known = set()
    for module in (amago_agent, amago_multitask):
        for f in dataclasses.fields(module.Args):
            known |= {"--" + f.name.replace("_", "-"), "--no-" + f.name.replace("_", "-")}
    for tool in [*(ROOT / "benchmarks").rglob("*.py"), ROOT / "common/launch.py"]:
        known |= set(re.findall(r'add_argument\(\s*"(--[\w-]+)"', tool.read_text()))
    unknown = {}
    for recipe in sorted((ROOT / "benchmarks").glob("*.sh")):
        lines = [line for line in recipe.read_text().splitlines() if " pip " not in line and "platform" not in line]
        flags = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", "\n".join(lines)))
        if flags - known:
            unknown[recipe.name] = sorted(flags - known)
    assert not unknown, unknown


@pytest.mark.parametrize("script", ["amago_agent", "amago_multitask"])
def test_help_shows_each_flag_once_in_its_section(script, monkeypatch, capsys):
    """--help draws a box per section (common/args.py's SECTIONS, in that order) holding that section's flags, each
    flag once and under its own name, with one default each."""
    from common.args import SECTIONS, parse_flags, sections

    module = __import__(script)
    monkeypatch.setattr("sys.excepthook", None)
    monkeypatch.setenv("COLUMNS", "120")
    with pytest.raises(SystemExit) as e:
        parse_flags(module.Args, ["--help"])
    assert e.value.code == 0
    boxes = []  # (section title, [its entries: a flag, its type, docstring and default])
    for line in capsys.readouterr().out.splitlines():
        line = line.replace("│", " ").rstrip()  # a box's sides (on a stream that cannot show them, tyro draws rules)
        title = re.fullmatch(r"\s*(?:╭─ )?([\w -]+) options(?: ─+╮)?", line)
        if title:
            boxes.append((title[1], []))
        elif boxes and line.strip() and not set(line.strip()) <= set("─-╰╯"):
            if re.match(r"\s{1,2}-", line):  # a flag; a docstring's next lines are indented further
                boxes[-1][1].append(line.strip())
            else:
                boxes[-1][1][-1] += " " + line.strip()
    assert [title for title, _ in boxes] == list(SECTIONS), [title for title, _ in boxes]
    seen = []
    for (title, entries), names in zip(boxes, sections(module.Args).values()):
        flags = [entry.split()[0].rstrip(",") for entry in entries]
        assert flags == ["--" + name.replace("_", "-") for name in names], title
        for entry in entries:
            assert entry.count("(default:") == 1, entry  # one default, the field's
        seen += flags
    assert len(seen) == len(set(seen)) == len(vars(module.Args()))


def test_readme_names_every_file_of_common():
    row = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| `common/` |"))
    missing = [
        p.name for p in sorted((ROOT / "common").glob("*.py")) if p.name != "__init__.py" and f"`{p.name}`" not in row
    ]
    assert not missing, f"README's Files table does not name {missing} in its common/ row"


def test_the_allocators_figures_are_the_recorded_ones():
    """common/memory.py's figures are the medians (and the range) that benchmarks/results/speed/keep_freed_memory_*.json
    recorded: page faults and milliseconds per update, without and with freed memory kept."""
    doc = " ".join((ROOT / "common/memory.py").read_text().split('"""')[1].split())
    runs = {
        p.stem.removeprefix("keep_freed_memory_"): json.loads(p.read_text())
        for p in (ROOT / "benchmarks/results/speed").glob("keep_freed_memory_*.json")
    }

    def median(name, when, key="page_faults_per_update"):
        return statistics.median(runs[name][when][key])

    kept = [n for run in runs.values() for n in run["after"]["page_faults_per_update"]]
    discrete, box, amago2 = (median(n, "after") for n in ("agent_cartpole", "agent_pendulum_box", "multitask_cartpole"))
    for claim in (
        f"AMAGO-2's update faulted ~{round(median('multitask_cartpole', 'before'), -3):,.0f} pages",
        f"took {median('multitask_cartpole', 'before', 'update_ms'):.0f} ms, "
        f"{median('multitask_cartpole', 'after', 'update_ms'):.0f} ms with freed memory kept",
        f"the Box-action update ~{round(median('agent_pendulum_box', 'before'), -3):,.0f} pages, "
        f"{median('agent_pendulum_box', 'before', 'update_ms'):.0f} ms against "
        f"{median('agent_pendulum_box', 'after', 'update_ms'):.0f}",
        f"faulted {min(kept)} to {max(kept)} pages",
        f"medians {discrete:.0f} for AMAGO's Discrete update, {box:.0f} for its Box one, {amago2:.0f} for AMAGO-2's",
    ):
        assert claim in doc, claim


def test_the_guide_names_every_keyword_make_exploration_passes():
    """ "Adapt it" 6 tells how a custom exploration class is constructed: it must name every keyword the script passes
    (a class written to a shorter list raises TypeError; docs/examples/custom_exploration.py is written to it)."""
    tree = ast.parse((ROOT / "amago_agent.py").read_text())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "make_exploration")
    kw = next(n.value for n in ast.walk(fn) if isinstance(n, ast.Assign) and n.targets[0].id == "kw")
    names = [k.arg for k in kw.keywords]
    assert "greedy_frac" in names
    text = guide_path("amago_agent.md").read_text()
    section = text[text.index("### 6. Exploration") : text.index("### 7. The experiment")]
    assert all(f"`{name}`" in section for name in names), (names, section)


REVISITS = re.compile(r"(\d+)% of `envs:([\w-]+)`'s \((\d\.\d\d)\)|(\d+)% of the steps of `envs:([\w-]+)` are revisits")


def revisit_figures(env_id, steps=4000, n=8):
    """Under uniform random actions (8 actors, `steps` env steps): the share of steps at an observation seen before in
    the episode, and the mean factor (1/n**2) that --eps-revisit-power 2 puts on epsilon."""
    import numpy as np

    import amago_agent as amago

    envs = amago.make_vec_env(env_id, n, "sync", 0, False, "r")
    explore = amago.EpsilonGreedy(n, envs.single_action_space, 1.0, 0.05, 1, 0, revisit_power=2.0)
    rng, factors = np.random.default_rng(0), []
    obs, _ = envs.reset(seed=0)
    for _ in range(steps // n):
        factors.append(np.broadcast_to(explore.revisit_factor(obs["obs"]), (n,)))
        obs, _, term, trunc, _ = envs.step(rng.integers(0, envs.single_action_space.n, n))
        explore.end_episodes(term | trunc)
    envs.close()
    f = np.concatenate(factors)
    return round(100 * (f < 1).mean()), round(f.mean(), 2)


def test_the_guides_revisit_figures():
    """The share of revisited steps the guide's Exploration section gives for each env, measured as it says."""
    text = guide_path("amago_agent.md").read_text()
    section = text[text.index("**Random actions where the episode is new") : text.index("**Greedy episodes")]
    stated = {}
    for m in REVISITS.finditer(section.replace("\n", " ")):
        if m.group(2):
            stated[m.group(2)] = (int(m.group(1)), float(m.group(3)))
        else:
            stated[m.group(5)] = (int(m.group(4)), float(re.search(r"the mean factor (\d\.\d\d)", section).group(1)))
    assert len(stated) == 4, stated
    for env_id, figures in stated.items():
        assert revisit_figures(f"envs:{env_id}") == figures, env_id
    assert revisit_figures("LunarLander-v3", steps=400) == (0, 1.0)  # "none of LunarLander's"
