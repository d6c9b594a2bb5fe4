"""What the digest says about daily chunks (pure): which hold a superseded fact.

A digest history line (`  - until 2026-03-09: I live in Berlin. [[daily/...#L12]]`) cites a
daily line whose fact a later one replaced. A daily chunk holding such a line is *superseded*:
search leaves it out unless the daily layer (or `superseded`) is asked for, so an old value never
outranks the current one; the digest node shows both, the current value first, with dates.
The session-log turns such a daily line cites are superseded with it: a transcript chunk holding
one is left out the same way (`layer="session"` or `superseded` shows it).
"""

from __future__ import annotations

import pyarrow as pa

from memflow.tasks.ground.markdown import parse_anchor


def superseded_rows(docs: pa.Table, links: pa.Table, daily: str, digest: str,
                    session: str = "session") -> pa.Array:
    """One boolean per row of `docs` (path, start_line, end_line); `links` is the link graph
    (source, line, target, anchor, kind); `daily`, `digest` and `session` are the layer folders."""
    replaced: dict[str, set[int]] = {}
    graph = list(zip(*(links.column(c).to_pylist() for c in ("source", "line", "target", "anchor", "kind"))))
    for source, _line, target, anchor, kind in graph:
        if kind == "superseded" and source.startswith(f"{digest}/") and target.startswith(f"{daily}/"):
            lines = replaced.setdefault(target, set())
            for first, last in parse_anchor(anchor or ""):
                lines.update(range(first, last + 1))
    for source, line, target, anchor, _kind in graph:  # the turns a replaced daily line cites
        if line in replaced.get(source, ()) and target.startswith(f"{session}/"):
            turns = replaced.setdefault(target, set())
            for first, last in parse_anchor(anchor or ""):
                turns.update(range(first, last + 1))
    out = [any(start <= n <= end for n in replaced.get(path, ()))
           for path, start, end in zip(*(docs.column(c).to_pylist()
                                         for c in ("path", "start_line", "end_line")))]
    return pa.array(out, type=pa.bool_())
