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
    ("| [LunarLander]", "| 2 |", "| 3 |", "3", "the seeds: distinct seeds in the runs' RESULTs"),
    ("| [LunarLander]", "return ≥ 200", "return ≥ 201", "201", "the bar: the run's --target"),
    (
        "| [LunarLander]",
        "16.7 (144,000)",
        "16.9 (144,000)",
        "16.9",
        "a CSV cell: the minute of the first eval at the bar",
    ),
    ("| [LunarLander]", "144,000", "145,000", "145,000", "a CSV cell: env steps at the first eval at the bar"),
    ("| [LunarLander]", "157 / 244", "158 / 244", "158", "a final eval, rounded to the written digits"),
    ("| [LunarLander]", "random −187", "random −188", "−188", "the uniform-random baseline's RESULT"),
    (
        "| [CartPole, transformer]",
        "22.7 (720,000)",
        "22.7 (721,000)",
        "721,000",
        "one of three seeds' env steps at the bar",
    ),
    ("| [T-Maze H = 500", "220,440", "220,450", "220,450", "a CSV cell of a single-seed run"),
    ("| [T-Maze H = 100,", "memory-free 0.50", "memory-free 0.51", "0.51", "the best memory-free policy's RESULT"),
    ("| [POPGym CountRecall", "114.1", "114.2", "114.2", "a CSV cell found at a bar the run was not given"),
    ("| [Meta-Frozen-Lake", "return > 2.30", "return > 2.40", "2.40", "a bar: the memory-free run's best eval"),
    (
        "| [Meta-Frozen-Lake",
        "memory-free (ff) 1.80",
        "memory-free (ff) 1.90",
        "1.90",
        "the memory-free run's final eval",
    ),
    ("| [Dark Key-Door]", "12.7 (192,000)", "12.8 (192,000)", "12.8", "the first eval at a bar the run was not given"),
    ("| [Sparse point robot]", "(best 66.8)", "(best 66.9)", "66.9", "the best eval of a seed that never met its bar"),
    (
        "| [Sparse point robot]",
        "60.8 (70,400)",
        "60.8 (70,500)",
        "70,500",
        "the first eval above the memory-free sweep",
    ),
    ("| [Sparse point robot]", "sweep 93.75", "sweep 93.76", "93.76", "a scripted policy's recorded return"),
    ("| [HalfCheetah]", "(best 1,223)", "(best 1,224)", "1,224", "the best eval of a seed below a fixed bar"),
    ("| [HalfCheetah]", "holding still −0.29", "holding still −0.28", "−0.28", "holding still's recorded return"),
    ("| [HalfCheetah-Vel", "| 1.50 | random", "| 1.51 | random", "1.51", "the last value of a per-env CSV column"),
    ("| [HalfCheetah-Vel", "(best 1.50)", "(best 1.48)", "1.48", "the least of a per-env CSV column"),
    ("| [HalfCheetah-Vel", "holding still 1.50", "holding still 1.51", "1.51", "holding still's recorded error"),
    (
        "| [MultiScaleBandit",
        "AMAGO 15.8 (24,960)",
        "AMAGO 15.8 (24,970)",
        "24,970",
        "the first eval with every scale at 0.9",
    ),
    ("| [MultiScaleBandit", "AMAGO 0.82", "AMAGO 0.83", "0.83", "the least of three columns' last values"),
    ("| [XLand", "(best 1.50)", "(best 1.51)", "1.51", "the best eval of a run that never met its bar"),
    ("| [XLand", "random 0.834", "random 0.835", "0.835", "the uniform-random baseline's RESULT"),
    ("| [XLand", "return ≥ 1.67", "return ≥ 1.68", "1.68", "a bar: twice random's return"),
    ("| [BabyAI", "8.8 (28,000)", "8.6 (28,000)", "8.6", "one seed at the bar beside one that never was"),
    ("| [Meta-World", "10.3 (28,000)", "10.4 (28,000)", "10.4", "the first eval at twice random's return"),
    ("| [Meta-World", "1,025 / 1,040", "1,025 / 1,050", "1,050", "a final eval written with a thousands comma"),
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
    wrong.write_text(in_row("| [LunarLander]", "| 157 / 244 |", "| 157 / 244 (2.18 min) |"))
    out = check(wrong)
    assert out.returncode == 1 and "LunarLander: 10 numbers in its checked cells, 9 declared" in out.stdout, out.stdout


def test_a_row_without_a_declaration_fails_and_so_does_a_declaration_without_its_row(tmp_path):
    wrong = tmp_path / "README.md"
    wrong.write_text(in_row("| [HalfCheetah]", "[HalfCheetah]", "[HalfCheetah-v5]"))
    out = check(wrong)
    assert out.returncode == 1
    assert 'HalfCheetah-v5: no [rows."HalfCheetah-v5"] in benchmarks/readme_sources.toml' in out.stdout
    assert "HalfCheetah: declared in benchmarks/readme_sources.toml, not a row of README.md" in out.stdout


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


def test_seeds_counts_distinct_seeds_and_refuses_two_runs_of_one():
    """The seeds column is bound to seeds(...): the runs' RESULTs must record that many distinct seeds."""
    sys.path.insert(0, str(CHECK.parent))
    from check_readme import Run, seeds

    results = ROOT / "benchmarks" / "results"
    s1, s2 = (Run(results, f"cartpole/cartpole_gru_s{i}") for i in (1, 2))
    assert seeds(s1, s2) == 2
    with pytest.raises(ValueError, match="share a seed"):
        seeds(s1, Run(results, "cartpole/cartpole_transformer_s1"))
