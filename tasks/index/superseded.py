"""What the digest says about daily chunks (pure): which hold a superseded fact.

A digest history line (`  - until 2026-03-09: I live in Berlin. [[daily/...#L12]]`) cites a
daily line whose fact a later one replaced. A daily chunk holding such a line is *superseded*:
search leaves it out unless the daily layer (or `superseded`) is asked for, so an old value never
outranks the current one; the digest node shows both, the current value first, with dates.
The session-log turns such a daily line cites are superseded with it: a transcript chunk holding
one is left out the same way (`layer="session"` or `superseded` shows it).
"""

from __future__ import annotations

from datetime import date

import pyarrow as pa

from memflow.tasks.ground.markdown import line_date, parse_anchor


def superseded_rows(docs: pa.Table, links: pa.Table, daily: str, digest: str,
                    session: str = "session") -> pa.Array:
    """One date (or null) per row of `docs` (path, start_line, end_line, text): the day the
    earliest fact it holds was replaced (the history line's `until`), null when none was.
    `links` is the link graph (source, line, target, anchor, kind); `daily`, `digest` and
    `session` are the layer folders."""
    replaced: dict[str, dict[int, date]] = {}
    graph = list(zip(*(links.column(c).to_pylist() for c in ("source", "line", "target", "anchor", "kind"))))
    lines_of = _digest_lines(docs, digest)
    for source, line, target, anchor, kind in graph:
        if kind == "superseded" and source.startswith(f"{digest}/") and target.startswith(f"{daily}/"):
            day = line_date(lines_of.get((source, line), "")) or date.min
            held = replaced.setdefault(target, {})
            for first, last in parse_anchor(anchor or ""):
                for n in range(first, last + 1):
                    held[n] = min(day, held.get(n, day))
    for source, line, target, anchor, _kind in graph:  # the turns a replaced daily line cites
        if line in replaced.get(source, {}) and target.startswith(f"{session}/"):
            turns = replaced.setdefault(target, {})
            for first, last in parse_anchor(anchor or ""):
                for n in range(first, last + 1):
                    turns[n] = min(replaced[source][line], turns.get(n, date.max))
    out = [min((d for n, d in replaced.get(path, {}).items() if start <= n <= end), default=None)
           for path, start, end in zip(*(docs.column(c).to_pylist()
                                         for c in ("path", "start_line", "end_line")))]
    return pa.array(out, type=pa.date32())


def _digest_lines(docs: pa.Table, digest: str) -> dict[tuple[str, int], str]:
    """(path, line) -> text of every digest chunk line (a chunk's text ends with its lines)."""
    out = {}
    for path, end, text in zip(*(docs.column(c).to_pylist() for c in ("path", "end_line", "text"))):
        if path.startswith(f"{digest}/"):
            lines = text.split("\n")
            out.update({(path, end - (len(lines) - 1 - i)): line for i, line in enumerate(lines)})
    return out
