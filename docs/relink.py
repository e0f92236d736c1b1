"""Keep the guides' line links true: `python docs/relink.py` after editing a script.

Usage: `python docs/relink.py [GUIDE.md ...]` (default: every guide in docs/).

A link from a guide in docs/ to a script has the form [`token` and more text](../amago_agent.py#L<a>-L<b>) (or #L<a>
for one line). Its first backticked token is its anchor: it must occur exactly once in the script, inside lines a..b,
and the range must hold the whole block that starts on the anchor's line: a statement's every line (a def's or a
class's whole body, an `if`'s whole branch), or a comment's lines to the last of its run. A token inside a statement
(one entry of a dict, a docstring's phrase) names its line only. Lines a range holds beside its block must not cut
another block (the next def's first lines), and a link in a table row of logged metrics must hold the line that
writes each metric its row names.

This moves every link to its anchor and widens a range to its whole block, printing each change. A range keeps the
lines it held beside its block (before it, after it) as the committed script (git HEAD, or $RELINK_BASE: the revision
the guides last matched, e.g. `RELINK_BASE=HEAD~1` after a merge) shows them, so a block that grows or shrinks takes
its range with it; a link the guide no longer has as committed (one an earlier run moved) keeps those lines as they
are now, so running it again before a commit moves nothing. It exits 1 naming every token that occurs nowhere or more
than once in its script (the guide's text then needs a longer token or a new sentence).

Links may be written with a placeholder range, `#L0` (one line) or `#L0-L<n>` (at least n+1 lines): relink places
the range at the token's block. tests/test_docs.py runs `check` and fails on any link out of place, so an edit that
moves or grows a referenced block fails CI until this is run.
"""

import ast
import functools
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# [text](../script.py#La-Lb): the text may hold backticked code with brackets in it
LINK = re.compile(r"\[((?:[^\[\]`]|`[^`]*`)*)\]\(\.\./([\w./-]+\.py)#L(\d+)(?:-L(\d+))?\)")
TOKEN = re.compile(r"`([^`]+)`")


def links(text):
    """-> [(match, token or None, script path relative to the root, a, b)] for every script link of a guide."""
    out = []
    for m in LINK.finditer(text):
        tok = TOKEN.search(m.group(1))
        a = int(m.group(3))
        b = int(m.group(4)) if m.group(4) else a
        out.append((m, tok.group(1) if tok else None, m.group(2), a, b))
    return out


@functools.lru_cache
def block_ends(text):
    """{line: the last line of the block that starts on it}: every statement's first line (a compound statement's
    block ends with its body), and every comment line (its block: the comment lines from it to the run's last)."""
    ends = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.stmt):
            ends[node.lineno] = max(ends.get(node.lineno, 0), node.end_lineno)
    lines = text.splitlines()
    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith("#") and i not in ends:
            j = i
            while j < len(lines) and lines[j].lstrip().startswith("#"):
                j += 1
            ends[i] = j
    return ends


def occurrences(lines, token):
    return [i + 1 for i, line in enumerate(lines) if token in line]


def anchor(text, token):
    """-> (the token's line, the block it names: (first, last)), or (None, None) unless it occurs exactly once."""
    found = occurrences(text.splitlines(), token)
    if len(found) != 1 or text.count(token) != 1:
        return None, None
    line = found[0]
    return line, (line, block_ends(text).get(line, line))


def check(root=ROOT):
    """Every script link of every guide in root/docs: -> a list of failures, one sentence each (empty: all true)."""
    failures = []
    for doc in guides(root):
        for m, token, script, a, b in links(doc.read_text()):
            path = Path(root) / script
            where = f"{doc.name}: link {m.group(0)!r}"
            if token is None:
                failures.append(f"{where} has no backticked token in its text")
                continue
            if not path.exists():
                failures.append(f"{where} points to {script}, which does not exist")
                continue
            text = path.read_text()
            line, block = anchor(text, token)
            n = text.count(token)
            if line is None:
                failures.append(
                    f"{where}: token `{token}` occurs {n} times in {script}; a link anchors on a token that occurs "
                    "once: write a longer one"
                )
            elif not (a <= block[0] and block[1] <= b):
                held = (
                    "is not in"
                    if not a <= line <= b
                    else "is, but its block (lines {}-{}) is not all in".format(*block)
                )
                failures.append(
                    f"{where}: token `{token}` (line {line}) {held} lines {a}-{b} of {script}; run `python docs/relink.py`"
                )
            else:
                failures += cut_blocks(where, text, block, a, b) + unnamed_metrics(
                    where, doc.read_text(), m, text, a, b
                )
    return failures


def cut_blocks(where, text, block, a, b):
    """The lines a range holds beside its token's block must not cut another block: a def, class or branch that
    starts there ends inside the range too (else the range spills into the next function's first lines)."""
    ends = block_ends(text)
    out = []
    for line in range(a, b + 1):
        if not block[0] <= line <= block[1] and ends.get(line, line) > b:
            out.append(
                f"{where}: line {line} starts a block that runs to line {ends[line]}, past the range's end {b} "
                "(after a script edit, run `python docs/relink.py`; else narrow the range)"
            )
    return out


METRIC = re.compile(r"`((?:charts|losses|buffer)/[^`<>]*)`")  # eval/ names: common/logs.py makes them


def unnamed_metrics(where, guide, m, text, a, b):
    """In a table row of logged metrics, every metric the row's first cell names, where the script writes it as a
    literal ("charts/..."), is written within the link's lines."""
    row_start = guide.rfind("\n", 0, m.start()) + 1
    row = guide[row_start : guide.find("\n", m.end())]
    if not row.startswith("|"):
        return []
    held = "\n".join(text.splitlines()[a - 1 : b])
    names = METRIC.findall(row.split("|")[1])
    names = [n for n in names if f'"{n}"' in text and f'"{n}"' not in held]
    return [
        f"{where}: its row names `{n}`, which the script writes outside lines {a}-{b} "
        "(after a script edit, run `python docs/relink.py`; else widen the range)"
        for n in names
    ]


def guides(root, names=None):
    """The guides in root/docs (names: only these file names)."""
    return [d for d in sorted((Path(root) / "docs").glob("*.md")) if not names or d.name in names]


@functools.lru_cache
def committed_text(root, path):
    """A file as last committed (git HEAD, or the revision in $RELINK_BASE: the one the guides last matched, e.g.
    after a merge that committed script edits), or None (outside a git checkout, or not committed)."""
    base = os.environ.get("RELINK_BASE", "HEAD")
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "show", f"{base}:{path}"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout


def margins(text, token, a, b):
    """The lines the range a..b holds before and after the token's block in `text`, or None if it does not hold the
    token there (the script as committed, or a placeholder range)."""
    if text is None:
        return None
    lines = text.splitlines()
    inside = [i for i in occurrences(lines, token) if a <= i <= b]
    if not inside:
        return None
    first, last = inside[0], block_ends(text).get(inside[0], inside[0])
    return max(first - a, 0), max(b - last, 0)


def relink(root=ROOT, names=None, write=True, log=print):
    """Moves every link to its anchor's whole block; -> the tokens that occur nowhere, or more than once, in their
    script (such a link is left as it is)."""
    missing = []
    for doc in guides(root, names):
        text = doc.read_text()
        guide_then = committed_text(str(root), f"docs/{doc.name}")
        pieces, pos = [], 0
        for m, token, script, a, b in links(text):
            path = Path(root) / script
            if token is None or not path.exists():
                continue
            now = path.read_text()
            line, block = anchor(now, token)
            if line is None:
                n = now.count(token)
                how = "nowhere" if n == 0 else f"{n} times"
                missing.append(f"{doc.name}: `{token}` occurs {how} in {script}: rewrite the link {m.group(0)!r}")
                continue
            first, last = block
            # the committed margins mean something only for a link the committed guide has as it is now: a link
            # this edit already moved (relink run twice) has its range in the edited script's numbering
            as_committed = guide_then is None or m.group(0) in guide_then
            kept = margins(committed_text(str(root), script), token, a, b) if as_committed else None
            if kept is None:
                kept = margins(now, token, a, b)
            if kept is None:  # a placeholder, or a token that left its range: the block, at least as long as before
                kept = (0, max((b - a) - (last - first), 0))
            new_a, new_b = max(first - kept[0], 1), min(last + kept[1], len(now.splitlines()))
            if (new_a, new_b) == (a, b):
                continue
            rng = f"#L{new_a}" if new_b == new_a else f"#L{new_a}-L{new_b}"
            log(f"{doc.name}: `{token}`: {script} L{a}-L{b} -> L{new_a}-L{new_b}")
            pieces += [text[pos : m.start()], f"[{m.group(1)}](../{script}{rng})"]
            pos = m.end()
        if pieces and write:
            doc.write_text("".join(pieces) + text[pos:])
    return missing


def main():
    missing = relink(names={Path(a).name for a in sys.argv[1:]})
    for line in missing:
        print(line, file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
