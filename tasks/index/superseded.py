"""What the digest says about daily chunks (pure): which hold a superseded fact.

A digest history line (`  - until 2026-03-09: I live in Berlin. [[daily/...#L12]]`) cites a
daily line whose fact a later one replaced. A daily chunk holding such a line is *superseded*:
search leaves it out unless the daily layer (or `superseded`) is asked for, so an old value never
outranks the current one; the digest node shows both, the current value first, with dates.
"""

from __future__ import annotations

import pyarrow as pa

from memflow.tasks.ground.markdown import parse_anchor


def superseded_rows(docs: pa.Table, links: pa.Table, daily: str, digest: str) -> pa.Array:
    """One boolean per row of `docs` (path, start_line, end_line); `links` is the link graph
    (source, target, anchor, kind); `daily` and `digest` are the layer folders."""
    replaced: dict[str, set[int]] = {}
    for source, target, anchor, kind in zip(*(links.column(c).to_pylist()
                                              for c in ("source", "target", "anchor", "kind"))):
        if kind == "superseded" and source.startswith(f"{digest}/") and target.startswith(f"{daily}/"):
            lines = replaced.setdefault(target, set())
            for first, last in parse_anchor(anchor or ""):
                lines.update(range(first, last + 1))
    out = [any(start <= n <= end for n in replaced.get(path, ()))
           for path, start, end in zip(*(docs.column(c).to_pylist()
                                         for c in ("path", "start_line", "end_line")))]
    return pa.array(out, type=pa.bool_())
