"""Keep the guides' line links true: `python docs/relink.py` after editing a script.

Usage: `python docs/relink.py [GUIDE.md ...]` (default: every guide in docs/).

A link from a guide in docs/ to a script has the form [`token` and more text](../amago_agent.py#L<a>-L<b>) (or #L<a>
for one line). Its first backticked token must occur verbatim in lines a..b of the script. For every link whose token
is not there (lines moved), this moves the range to the occurrence of the token nearest to the old range, keeping its
length, and prints the change: the token keeps its place in the range where the committed script (git HEAD, or
$RELINK_BASE: the revision the guides last matched, e.g. `RELINK_BASE=HEAD~1` after a merge) shows it, else it goes
on the range's first line; a link the guide no longer has as committed (one an earlier run moved) keeps its token
where it now is, so running it again before a commit moves nothing. It exits 1 naming every token that no longer
occurs in its script (the guide's text then needs a new token or a new sentence).

Links may be written with a placeholder range, `#L0` (one line) or `#L0-L<n>` (n+1 lines): the token is not in line 0,
so relink places the range at the token's first occurrence (write a token that occurs once). tests/test_docs.py runs
`check` and fails on any link out of place, so an edit that moves a referenced line fails CI until this is run.
"""

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


def in_range(lines, token, a, b):
    return 1 <= a <= b <= len(lines) and any(token in line for line in lines[a - 1 : b])


def check(root=ROOT):
    """Every script link of every guide in root/docs: -> a list of failures, one sentence each (empty: all true)."""
    failures = []
    for doc in guides(root):
        text = doc.read_text()
        for m, token, script, a, b in links(text):
            path = Path(root) / script
            where = f"{doc.name}: link {m.group(0)!r}"
            if token is None:
                failures.append(f"{where} has no backticked token in its text")
            elif not path.exists():
                failures.append(f"{where} points to {script}, which does not exist")
            else:
                lines = path.read_text().splitlines()
                if not in_range(lines, token, a, b):
                    failures.append(
                        f"{where}: token `{token}` is not in lines {a}-{b} of {script} ({len(lines)} lines); "
                        "run `python docs/relink.py`"
                    )
    return failures


def nearest(occurrences, a, b):
    return min(occurrences, key=lambda line: (max(a - line, line - b, 0), line))


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


def committed_lines(root, script):
    text = committed_text(root, script)
    return None if text is None else tuple(text.splitlines())


def offset(lines, token, a, b):
    """Where the token sat in lines a..b (0: the first line), or None if it was not there."""
    if not lines or not in_range(lines, token, a, b):
        return None
    return next(i for i in range(a, b + 1) if token in lines[i - 1]) - a


def relink(root=ROOT, names=None, write=True, log=print):
    """Moves every link whose token left its range; -> the tokens that occur nowhere in their script.

    Where the range held its token in the committed script (git HEAD), the token keeps its place inside the range,
    and a link whose token is still inside its range but has shifted by the edit is moved with it; otherwise the token
    goes on the range's first line."""
    missing = []
    for doc in guides(root, names):
        text = doc.read_text()
        pieces, pos = [], 0
        for m, token, script, a, b in links(text):
            path = Path(root) / script
            if token is None or not path.exists():
                continue
            lines = path.read_text().splitlines()
            # the committed offset means something only for a link the committed guide has as it is now: a link
            # this edit already moved (relink run twice) has its range in the edited script's numbering
            guide_then = committed_text(str(root), f"docs/{doc.name}")
            as_committed = guide_then is None or m.group(0) in guide_then
            was = offset(committed_lines(str(root), script), token, a, b) if as_committed else None
            now = offset(lines, token, a, b)
            if now is not None and now == (was if was is not None else now):
                continue
            occurrences = [i + 1 for i, line in enumerate(lines) if token in line]
            if not occurrences:
                missing.append(f"{doc.name}: `{token}` ({script}) occurs nowhere: rewrite the link {m.group(0)!r}")
                continue
            line = a + now if now is not None else nearest(occurrences, a, b)
            new_a = max(line - (was or 0), 1)
            new_b = min(new_a + (b - a), len(lines))
            if (new_a, new_b) == (a, b):
                continue
            rng = f"#L{new_a}" if new_b == new_a else f"#L{new_a}-L{new_b}"
            new = f"[{m.group(1)}](../{script}{rng})"
            note = f" (placed at the first of {len(occurrences)})" if a == 0 and len(occurrences) > 1 else ""
            log(f"{doc.name}: `{token}`: {script} L{a}-L{b} -> L{new_a}-L{new_b}{note}")
            pieces += [text[pos : m.start()], new]
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
