"""README.md's tables say what the result files hold: benchmarks/check_readme.py binds every number of the results and
speed tables to the result field benchmarks/readme_sources.toml names for it, so one changed digit of any kind of
number fails, and so does a number added without a source."""

import subprocess
import sys

import pytest
from conftest import ROOT

CHECK = ROOT / "benchmarks" / "check_readme.py"
README = (ROOT / "README.md").read_text()


def check(readme_path):
    cmd = [sys.executable, str(CHECK), str(readme_path), "--root", str(ROOT)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def in_row(row_start, old, new):
    """README with `old` replaced by `new` in the one table row that starts with `row_start`."""
    lines = README.splitlines(keepends=True)
    [i] = [i for i, line in enumerate(lines) if line.startswith(row_start)]
    assert old in lines[i], f"{old!r} is not in the row {row_start!r}"
    lines[i] = lines[i].replace(old, new, 1)
    return "".join(lines)


def test_the_readme_matches_its_result_files():
    out = check(ROOT / "README.md")
    assert out.returncode == 0, out.stdout + out.stderr
    assert " 0 mismatch(es); 0 broken link(s)" in out.stdout


# one changed digit of each kind of number: (row, as written, changed, the changed number, what it is bound to)
MUTATIONS = [
    ("| [LunarLander]", "16.7 / 23.2", "16.9 / 23.2", "16.9", "a CSV cell: the minute of the first eval at the bar"),
    ("| [LunarLander]", "144,000", "145,000", "145,000", "a CSV cell: env steps at the first eval at the bar"),
    ("| [LunarLander]", "| 35 / 35 |", "| 36 / 35 |", "36", "a RESULT field in other units: wall_s in minutes"),
    ("| [CartPole]", "64,000)", "65,000)", "65,000", "one of six seeds' env steps at the bar"),
    ("| [T-Maze H = 50, 100", "0.47–0.55", "0.48–0.55", "0.48", "the least of a CSV column (the ff run's evals)"),
    ("| [T-Maze H = 500", "220,440", "220,450", "220,450", "a CSV cell of a single-seed run"),
    ("| [POPGym", "114.1", "114.2", "114.2", "a CSV cell found at a bar the run was not given"),
    ("| [Meta-Frozen-Lake", "0.995", "0.985", "0.985", "the last value of a RESULT's last_evals list"),
    ("| [Dark Key-Door]", "best, 16.3;", "best, 16.4;", "16.4", "a bar: the memory-free run's best eval"),
    ("| [Dark Key-Door]", "12.7 (192,000)", "12.8 (192,000)", "12.8", "the first eval at a bar the run was not given"),
    ("| [MultiScaleBandit", "0.29–1.00", "0.28–1.00", "0.28", "a per-scale CSV column from a derived minute on"),
    ("| [XLand", "greedy 1.30", "greedy 1.31", "1.31", "the mean of a RESULT's last three evals"),
    ("| [XLand", "(random 0.834)", "(random 0.835)", "0.835", "the uniform-random baseline's RESULT"),
    ("| [XLand", "(best 1.50)", "(best 1.51)", "1.51", "the best eval of a run that never met its bar"),
    ("| [BabyAI", "8.8 (28,000)", "8.6 (28,000)", "8.6", "one seed at the bar beside one that never was"),
    ("| [Meta-World", "14.2 / 10.3", "14.2 / 10.4", "10.4", "the first eval at twice random's return"),
    ("| [Meta-World", "| 110 / 110 |", "| 110 / 100 |", "100", "the second seed's run length"),
    ("| [Meta-World", "0.60 / 0.71", "0.60 / 0.72", "0.72", "the mean of the last attempt's success"),
    ("| `collect`", "2.25× as fast", "2.24× as fast", "2.24", "the median of the current code's reference pairs"),
    ("| `collect`", "(2.09–2.50", "(2.09–2.51", "2.51", "the range of the current code's pairs"),
    ("| `update_small`", "6 pairs", "12 pairs", "12", "the number of pairs: the older code's left out"),
    ("| `update_paper`", "| 0.80 |", "| 0.81 |", "0.81", "the peak-memory ratio's median"),
]


@pytest.mark.parametrize("row,written,changed,number,kind", MUTATIONS, ids=[m[4] for m in MUTATIONS])
def test_one_changed_digit_fails(tmp_path, row, written, changed, number, kind):
    wrong = tmp_path / "README.md"
    wrong.write_text(in_row(row, written, changed))
    out = check(wrong)
    assert out.returncode == 1, f"{kind}: {changed!r} passed\n" + out.stdout
    assert f": {number} is not " in out.stdout and " 1 mismatch(es)" in out.stdout, out.stdout


def test_a_number_without_a_source_fails(tmp_path):
    """The value may be in some file (2.18 is a minute of LunarLander's curve), but the row declares no source for it."""
    wrong = tmp_path / "README.md"
    wrong.write_text(in_row("| [LunarLander]", "16.7 / 23.2", "16.7 / 23.2 (2.18 min)"))
    out = check(wrong)
    assert out.returncode == 1 and "LunarLander: 11 numbers in its checked cells, 10 declared" in out.stdout, out.stdout


def test_a_row_without_a_declaration_fails_and_so_does_a_declaration_without_its_row(tmp_path):
    wrong = tmp_path / "README.md"
    wrong.write_text(in_row("| [Pendulum]", "[Pendulum]", "[Pendulum-v1]"))
    out = check(wrong)
    assert out.returncode == 1
    assert 'Pendulum-v1: no [rows."Pendulum-v1"] in benchmarks/readme_sources.toml' in out.stdout
    assert "Pendulum: declared in benchmarks/readme_sources.toml, not a row of README.md" in out.stdout


def test_never_refuses_a_run_that_met_its_bar():
    """A "—" is bound to `never`, which fails when an eval did meet the bar (BabyAI's seed 2 met twice random's)."""
    sys.path.insert(0, str(CHECK.parent))
    from check_readme import Run

    results = ROOT / "benchmarks" / "results"
    s1, s2 = (Run(results, f"suites_babyai_easy/suites_babyai_easy_s{i}") for i in (1, 2))
    bar = 2 * Run(results, "suites_babyai_easy/suites_babyai_easy_random")["eval/return"]
    assert s1.never(eval_return=bar) == max(s1.col()) < bar
    with pytest.raises(ValueError, match="written as never"):
        s2.never(eval_return=bar)
