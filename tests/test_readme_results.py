"""README.md's results table says what the result files hold: benchmarks/check_readme.py finds every number of its
result column in the files the row links to, and fails on a number that is in none of them."""

import subprocess
import sys

from conftest import ROOT

CHECK = ROOT / "benchmarks" / "check_readme.py"
README = (ROOT / "README.md").read_text()
KEYDOOR = "return 51.5 vs 13.2 in 65 min"  # a result cell of the table; the files hold 51.47 and 13.19


def check(readme_path):
    cmd = [sys.executable, str(CHECK), str(readme_path), "--root", str(ROOT)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def test_readme_results_match_files():
    out = check(ROOT / "README.md")
    assert out.returncode == 0, out.stdout + out.stderr
    assert " 0 mismatch" in out.stdout


def test_a_wrong_number_fails(tmp_path):
    assert KEYDOOR in README
    wrong = tmp_path / "README.md"
    wrong.write_text(README.replace(KEYDOOR, KEYDOOR.replace("51.5", "51.6")))  # 51.47 rounds to 51.5, not 51.6
    out = check(wrong)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "51.6 is in no file of benchmarks/results/keydoor" in out.stdout
    assert " 1 mismatch" in out.stdout


def test_a_row_without_result_files_fails(tmp_path):
    unlinked = tmp_path / "README.md"
    unlinked.write_text(README.replace("[Pendulum](benchmarks/results/pendulum)", "Pendulum"))
    out = check(unlinked)
    assert out.returncode == 1
    assert "Pendulum: the row links to no result file" in out.stdout
