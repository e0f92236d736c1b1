"""Check README.md's results table against the result files it links to.

    python benchmarks/check_readme.py [README.md] [--root DIR]

The table is the first one under the "## Results" heading. Each row links to its result files (a folder or files
under `benchmarks/results/`; plots, `.png`, are skipped), and every number in the row's `result` column must be a
value that those files hold, as the README rounds it: a number written with d decimals matches a file value within
half a unit of its last decimal (`51.5` matches 51.47, `184` matches 184.28, `24,000` matches 24000). File values are
every number in a JSON file (keys that are numbers, such as a `first_minute_at_or_above` target, included), `wall_s`
also in minutes, and every cell of a CSV file. Numbers that are part of a name (`x1`, `×10`, `s2`) are not checked,
nor the `task` and `command` columns, which name the configuration. Prints each number that no file holds and exits
1 if there is one.
"""

import argparse
import csv
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = re.compile(r"`[^`]*`")
# a number not glued to a name: no letter, digit, "_", "." or "×" right before it (or before its minus sign)
NUMBER = re.compile(r"(?<![\w.×])([−-]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?!\w|\.\d)")


def results_table(readme: str) -> tuple[list[str], list[list[str]]]:
    """-> (header cells, rows of cells) of the first table in the "## Results" section."""
    section = readme.split("\n## Results", 1)
    if len(section) < 2:
        raise ValueError('no "## Results" section')
    body = re.split(r"\n## ", section[1], maxsplit=1)[0]
    lines = [line.strip() for line in body.splitlines()]
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), None)
    if start is None:
        raise ValueError('no table in the "## Results" section')
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append([cell.strip() for cell in line.strip("|").split("|")])
    header, rows = table[0], table[2:]  # table[1] is the |---| line
    return header, rows


def numbers_in(text: str) -> list[tuple[str, float, int]]:
    """-> (as written, value, decimals) of every number in a cell, outside code spans and link targets."""
    text = LINK.sub("]", CODE.sub(" ", text))
    out = []
    for m in NUMBER.finditer(text):
        sign, whole, frac = m.group(1), m.group(2).replace(",", ""), m.group(3) or ""
        value = float(f"{whole}.{frac}" if frac else whole) * (-1 if sign else 1)
        out.append((m.group(0), value, len(frac)))
    return out


def file_values(path: Path) -> list[float]:
    """Every number a result file holds (see the module docstring)."""
    values = []
    if path.suffix == ".json":

        def walk(x, key=None):
            if isinstance(x, bool):
                return
            if isinstance(x, int | float):
                values.append(float(x))
                if key == "wall_s":
                    values.append(x / 60)
            elif isinstance(x, dict):
                for k, v in x.items():
                    try:
                        values.append(float(k))
                    except ValueError:
                        pass
                    walk(v, k)
            elif isinstance(x, list):
                for v in x:
                    walk(v)

        walk(json.loads(path.read_text()))
    elif path.suffix == ".csv":
        with path.open(newline="") as f:
            for row in csv.reader(f):
                for cell in row:
                    try:
                        values.append(float(cell))
                    except ValueError:
                        pass
    return values


def linked_files(cells: list[str], root: Path) -> list[Path]:
    """The JSON and CSV result files a row links to (a linked folder: every such file in it)."""
    files = []
    for cell in cells:
        for target in LINK.findall(cell):
            target = target.split("#", 1)[0]
            if not target.startswith("benchmarks/results/") or target.endswith(".png"):
                continue
            path = root / target
            if path.is_dir():
                files += sorted(p for p in path.rglob("*") if p.suffix in (".json", ".csv"))
            elif path.suffix in (".json", ".csv") and path.is_file():
                files.append(path)
            else:
                raise FileNotFoundError(f"{target}: linked from the results table, not a result file or folder")
    return files


def matches(value: float, decimals: int, values: list[float]) -> bool:
    tolerance = 0.5 * 10.0**-decimals + 1e-9
    return any(abs(v - value) <= tolerance for v in values)


def check(readme: str, root: Path) -> list[str]:
    """-> one line per number of the results table that its row's files do not hold, or per row without files."""
    header, rows = results_table(readme)
    names = [h.lower() for h in header]
    if "result" not in names:
        raise ValueError(f"the results table has no `result` column: {header}")
    col = names.index("result")
    problems = []
    for row in rows:
        name = LINK.sub("]", row[0]).replace("[", "").replace("]", "")
        try:
            files = linked_files(row, root)
        except FileNotFoundError as e:
            problems.append(f"{name}: {e}")
            continue
        if not files:
            problems.append(f"{name}: the row links to no result file (benchmarks/results/...)")
            continue
        values = [v for f in files for v in file_values(f)]
        shown = ", ".join(t for cell in row for t in LINK.findall(cell) if not t.endswith(".png"))
        for written, value, decimals in numbers_in(row[col]):
            if not matches(value, decimals, values):
                problems.append(f"{name}: {written} is in no file of {shown}")
    return problems


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("readme", nargs="?", default=str(ROOT / "README.md"))
    p.add_argument("--root", default=str(ROOT), help="the folder the table's links are relative to")
    a = p.parse_args(argv)
    problems = check(Path(a.readme).read_text(), Path(a.root))
    for line in problems:
        print(line)
    n = len(results_table(Path(a.readme).read_text())[1])
    print(f"{a.readme}: {n} rows, {len(problems)} mismatch(es)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
