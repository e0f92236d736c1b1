"""Check README.md's results tables number by number against the result fields they come from, and its links.

    python benchmarks/check_readme.py [README.md] [--root DIR]

benchmarks/readme_sources.toml names, for each table it binds (the first table under a heading), the column that
keys a row and the columns whose numbers are checked; then, per row (keyed by that column's text), its runs (result
files under benchmarks/results/, without .json / .csv), optional named values (`define`) and one expression per
number, in reading order:

    [rows."LunarLander"]
    runs = { s1 = "lunarlander_alone/lunarlander_alone_transformer_s1" }
    numbers = ["seeds(s1)", "s1.target", "s1.at()", "s1.final"]   # 1; 200; 16.7 (144,000); 157

A run r in an expression (Python syntax, nothing imported) gives:
    r["key"]["sub"]    a field of its RESULT JSON; r.final, r.best (final / best eval return), r.minutes (wall_s / 60),
                       r.target (its --target), r.at_target (the first minute at or above it)
    r.col(c)           a column of its CSV curve (default eval_return); r.col(c, minutes=20): the rows whose `minutes`
                       is at least 20 (any columns, each at least its value)
    r.first(c)         column c at the first row whose eval_return is at or above r.target (or the given lower bounds,
                       r.first("minutes", success_x1=0.9)); r.after(): the eval returns from that row on;
                       r.never(eval_return=x): the best eval return of a run with no eval at x (else an error)
    r.at(bar)          [minutes, env_steps] of the first eval at or above bar (default r.target): README's
                       "16.7 (144,000)"; r.at(success_x1=0.9, ...) as r.first's bounds
and min, max, mean, median, len, sum; seeds(r1, r2, ...): how many distinct seeds the runs' RESULTs record (an error
if two share one); pairs(bench): the numbers of the bench's row of `compare_reference.py --summarize` (the pairs
recorded on or after the table's `since`). An expression that gives a list binds that many numbers.

A number of a checked cell (outside code spans and link targets; one glued to a name, `H50`, `×1`, `AMAGO-2`, is a name)
must equal its expression's value as written: to the written decimals, within half a unit of the last one (`51.5`
for 51.47, `144,000` for 144000), so a changed digit fails. A row without a declaration, a declaration without a
row, or more or fewer numbers than expressions fail too. Then every relative link of README.md,
benchmarks/README.md, benchmarks/results/archive/*.md and docs/*.md must reach a file, and a `#anchor` into a
Markdown file one of its headings. Prints each problem and exits 1 if there is one.
"""

import argparse
import csv
import json
import re
import statistics
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = re.compile(r"`[^`]*`")
# a number not glued to a name: no letter, digit, "_", "." or "×" right before it (or before its minus sign), nor a
# hyphen after a letter (`AMAGO-2`), nor a letter right after it (`3.5M`)
NUMBER = re.compile(r"(?<![\w.×])(?<!\w[−-])([−-]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?!\w|\.\d)")
LINKED_DOCS = ["README.md", "benchmarks/README.md", "benchmarks/results/archive/*.md", "docs/*.md"]


# ------------------------------------------------------ tables ------------------------------------------------------
def table_after(readme: str, heading: str) -> tuple[list[str], list[list[str]]]:
    """-> (header cells, rows of cells) of the first table under `heading` (before the next heading)."""
    lines = readme.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == heading)
    except StopIteration:
        raise ValueError(f"no heading {heading!r}") from None
    table = []
    for line in lines[start + 1 :]:
        if line.startswith("#") and table == []:
            break
        if line.startswith("|"):
            table.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif table:
            break
    if not table:
        raise ValueError(f"no table under {heading!r}")
    return table[0], table[2:]  # table[1] is the |---| line


def plain(cell: str) -> str:
    """A cell's text without link targets and Markdown marks: the key a row is declared under."""
    return LINK.sub("]", cell).replace("[", "").replace("]", "").replace("**", "").replace("\\", "").strip()


def numbers_in(text: str) -> list[tuple[str, float, int]]:
    """-> (as written, value, decimals) of every number in a cell, outside code spans and link targets."""
    text = LINK.sub("]", CODE.sub(" ", text))
    out = []
    for m in NUMBER.finditer(text):
        sign, whole, frac = m.group(1), m.group(2).replace(",", ""), m.group(3) or ""
        value = float(f"{whole}.{frac}" if frac else whole) * (-1 if sign else 1)
        out.append((m.group(0), value, len(frac)))
    return out


def matches(value: float, written: float, decimals: int) -> bool:
    return abs(value - written) <= 0.5 * 10.0**-decimals + 1e-9


# ---------------------------------------------------- the sources ----------------------------------------------------
class Run:
    """A recorded run: its RESULT JSON and its CSV curve (benchmarks/results/<path>.json, .csv)."""

    def __init__(self, results: Path, path: str):
        self.path = path
        base = re.sub(r"_per_(scale|env)$", "", path)  # a per-task curve: the JSON is its run's
        json_file, self.csv_file = results / f"{base}.json", results / f"{path}.csv"
        if not json_file.exists() and not self.csv_file.exists():
            raise FileNotFoundError(f"no recorded result benchmarks/results/{path}(.json, .csv)")
        self.json = json.loads(json_file.read_text()) if json_file.exists() else {}

    def __getitem__(self, key):
        return self.json[key]

    final = property(lambda self: self.json["final_eval_return"])
    best = property(lambda self: self.json["best_eval_return"])
    minutes = property(lambda self: self.json["wall_s"] / 60)
    target = property(lambda self: float(next(iter(self.json["first_minute_at_or_above"]))))
    at_target = property(lambda self: next(iter(self.json["first_minute_at_or_above"].values())))

    def rows(self):
        with open(self.csv_file, newline="") as f:
            return [{k: float(v) for k, v in r.items() if v not in ("", None)} for r in csv.DictReader(f)]

    def col(self, column="eval_return", **at_least):
        return [r[column] for r in self.rows() if all(r[k] >= v for k, v in at_least.items())]

    def first(self, column, **at_least):
        at_least = at_least or {"eval_return": self.target}
        hits = [r for r in self.rows() if all(r[k] >= v for k, v in at_least.items())]
        if not hits:
            raise ValueError(f"{self.path}: no eval with {at_least}")
        return hits[0][column]

    def never(self, column="eval_return", **at_least):
        """The best of `column` where no eval met the bar: a "—" in README, bound to the run that never got there."""
        if any(all(r[k] >= v for k, v in at_least.items()) for r in self.rows()):
            raise ValueError(f"{self.path}: an eval with {at_least}, written as never")
        return max(self.col(column))

    def at(self, bar=None, **at_least):
        """[minutes, env_steps] of the first eval at the bar: README's "16.7 (144,000)"."""
        at_least = at_least or {"eval_return": self.target if bar is None else bar}
        return [self.first("minutes", **at_least), self.first("env_steps", **at_least)]

    def after(self, column="eval_return"):
        rows = self.rows()
        i = next(i for i, r in enumerate(rows) if r["eval_return"] >= self.target)
        return [r[column] for r in rows[i:]]


def seeds(*runs):
    """How many seeds a row's runs are: their RESULTs' distinct `seed`s; two runs of one seed are an error."""
    found = [r["seed"] for r in runs]
    if len(set(found)) != len(found):
        raise ValueError(f"two runs share a seed: {[r.path for r in runs]} record {found}")
    return len(found)


def speed_pairs(folder: Path, since=None):
    """pairs(bench) -> the numbers of its row of `compare_reference.py --summarize --since <since>`: per thread count,
    the ratio's median, min, max and pair count; then the peak-memory ratio's median, min and max over all of the
    bench's pairs."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from compare_reference import pooled

    groups = pooled(folder, since=since)

    def pairs(bench):
        out, rss = [], []
        for (b, _), g in sorted(groups.items(), key=lambda kv: kv[0][1]):
            if b == bench:
                out += [statistics.median(g["ratio"]), min(g["ratio"]), max(g["ratio"]), len(g["ratio"])]
                rss += g["rss"]
        if not rss:
            raise KeyError(f"no recorded pairs of {bench!r}")
        return out + [statistics.median(rss), min(rss), max(rss)]

    return pairs


def check_tables(readme: str, sources: dict, root: Path) -> list[str]:
    """-> one line per number that is not its source's value, and per row or declaration without its other half."""
    results = root / "benchmarks" / "results"
    funcs = {"min": min, "max": max, "len": len, "sum": sum, "mean": statistics.mean, "median": statistics.median}
    funcs["seeds"] = seeds
    problems, declared = [], dict(sources["rows"])
    for spec in sources["table"]:
        pairs = speed_pairs(results / "compare_reference", spec.get("since"))
        header, rows = table_after(readme, spec["heading"])
        names = [h.lower() for h in header]
        key = names.index(spec["key"])
        cols = [i for i, h in enumerate(names) if any(h.startswith(c) for c in spec["checked"])]
        if len(cols) != len(spec["checked"]):
            raise ValueError(f"{spec['heading']}: the columns {spec['checked']} are not all in {header}")
        for row in rows:
            name = plain(row[key])
            if name not in declared:
                problems.append(f"{name}: no [rows.{json.dumps(name)}] in benchmarks/readme_sources.toml")
                continue
            decl = declared.pop(name)
            written = [(header[i], n) for i in cols for n in numbers_in(row[i])]
            try:
                scope = {"__builtins__": {}, **funcs, "pairs": pairs}  # the declarations are the project's own file
                scope |= {k: Run(results, v) for k, v in decl.get("runs", {}).items()}
                scope |= {k: eval(v, scope) for k, v in decl.get("define", {}).items()}
                values = []
                for expr in decl["numbers"]:
                    v = eval(expr, scope)
                    values += [(expr, x) for x in v] if isinstance(v, list) else [(expr, v)]
            except Exception as e:  # a missing file or field, a wrong key: say which row
                problems.append(f"{name}: {type(e).__name__}: {e}")
                continue
            if len(written) != len(values):
                problems.append(f"{name}: {len(written)} numbers in its checked cells, {len(values)} declared")
                continue
            for (col, (text, number, decimals)), (expr, value) in zip(written, values, strict=True):
                if value is None or not matches(float(value), number, decimals):
                    problems.append(f"{name}, {col}: {text} is not {expr} = {value}")
    problems += [f"{name}: declared in benchmarks/readme_sources.toml, not a row of README.md" for name in declared]
    return problems


# ------------------------------------------------------- links -------------------------------------------------------
def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, marks dropped, spaces to hyphens."""
    text = re.sub(r"\]\([^)]*\)", "", heading.strip().lower())  # a link keeps its text
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    out, seen = set(), {}
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            s = slug(line.lstrip("#"))
            out.add(s if s not in seen else f"{s}-{seen[s]}")
            seen[s] = seen.get(s, 0) + 1
    return out


def check_links(root: Path) -> list[str]:
    problems = []
    for pattern in LINKED_DOCS:
        for doc in sorted(root.glob(pattern)):
            text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
            for target in LINK.findall(text):
                if re.match(r"[a-z]+:", target):  # https:, mailto:
                    continue
                file, _, anchor = target.partition("#")
                path = (doc.parent / file).resolve() if file else doc
                if not path.exists():
                    problems.append(f"{doc.relative_to(root)}: link to {target}: no such file")
                elif anchor and path.suffix == ".md" and not re.fullmatch(r"L\d+(-L\d+)?", anchor):
                    if anchor not in anchors(path):
                        problems.append(f"{doc.relative_to(root)}: link to {target}: no such heading")
    return problems


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("readme", nargs="?", default=str(ROOT / "README.md"))
    p.add_argument("--root", default=str(ROOT), help="the project root (benchmarks/results, readme_sources.toml)")
    a = p.parse_args(argv)
    root = Path(a.root)
    sources = tomllib.loads((root / "benchmarks" / "readme_sources.toml").read_text())
    problems = check_tables(Path(a.readme).read_text(), sources, root)
    numbers = len(problems)
    problems += check_links(root)
    for line in problems:
        print(line)
    print(
        f"{a.readme}: {len(sources['rows'])} rows declared, {numbers} mismatch(es); {len(problems) - numbers} broken link(s)"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
