"""What the digest says about daily chunks (pure): which of their lines hold a superseded fact.

A digest history line (`  - until 2026-03-09: I live in Berlin. [[daily/...#L12]]`) cites a
daily line whose fact a later one replaced. That line is *superseded* from its `until` day on;
the session-log turns it cites are superseded with it. Superseding is per line: the snapshot
keeps, per chunk, the replaced line numbers and the day each was replaced, and search keeps the
chunk, labels those lines and ranks them below the line that replaced them (recall.replaced),
so every other line of the note or transcript window stays findable.
"""

from __future__ import annotations

from datetime import date

import pyarrow as pa
import pyarrow.compute as pc

from memflow.tasks.ground.markdown import line_date, parse_anchor


def superseded_lines(docs: pa.Table, links: pa.Table, daily: str, digest: str,
                     session: str = "session") -> tuple[pa.Array, pa.Array]:
    """Two row-aligned list columns for `docs` (path, start_line, end_line, text): the file lines
    of each chunk that a digest history line (or the daily line it cites, for a transcript)
    marks as replaced, ascending, and the day each was replaced (its history line's `until`).
    `links` is the link graph (source, line, target, anchor, kind); `daily`, `digest` and
    `session` are the layer folders."""
    replaced = _replaced(docs, links, daily, digest, session)
    numbers, days = [], []
    for path, start, end in zip(*(docs.column(c).to_pylist() for c in ("path", "start_line", "end_line"))):
        held = sorted((n, d) for n, d in replaced.get(path, {}).items() if start <= n <= end)
        numbers.append([n for n, _ in held])
        days.append([d for _, d in held])
    return pa.array(numbers, type=pa.list_(pa.int32())), pa.array(days, type=pa.list_(pa.date32()))


def _replaced(docs: pa.Table, links: pa.Table, daily: str, digest: str,
              session: str) -> dict[str, dict[int, date]]:
    """path -> line -> the earliest day a fact on it was replaced. Only the links and digest
    chunks that can say so are read into Python (the snapshot build's peak memory)."""
    replaced: dict[str, dict[int, date]] = {}
    source, target = links.column("source"), links.column("target")
    history = links.filter(pc.and_(pc.equal(links.column("kind"), "superseded"),
                                   pc.and_(pc.starts_with(source, f"{digest}/"),
                                           pc.starts_with(target, f"{daily}/"))))
    if not history.num_rows:
        return replaced
    cited = docs.filter(pc.is_in(docs.column("path"), value_set=pc.unique(history.column("source"))))
    lines_of = _digest_lines(cited, digest)
    for source_path, line, target_path, anchor in _rows(history, ("source", "line", "target", "anchor")):
        day = line_date(lines_of.get((source_path, line), "")) or date.min
        held = replaced.setdefault(target_path, {})
        for first, last in parse_anchor(anchor or ""):
            for n in range(first, last + 1):
                held[n] = min(day, held.get(n, day))
    turns_of = links.filter(pc.and_(pc.starts_with(target, f"{session}/"),
                                    pc.is_in(source, value_set=pa.array(list(replaced), pa.string()))))
    for source_path, line, target_path, anchor in _rows(turns_of, ("source", "line", "target", "anchor")):
        if line in replaced[source_path]:  # the turns a replaced daily line cites
            turns = replaced.setdefault(target_path, {})
            for first, last in parse_anchor(anchor or ""):
                for n in range(first, last + 1):
                    turns[n] = min(replaced[source_path][line], turns.get(n, date.max))
    return replaced


def _rows(table: pa.Table, columns: tuple[str, ...]) -> list[tuple]:
    return list(zip(*(table.column(c).to_pylist() for c in columns)))


def _digest_lines(docs: pa.Table, digest: str) -> dict[tuple[str, int], str]:
    """(path, line) -> text of every digest chunk line (a chunk's text ends with its lines)."""
    out = {}
    for path, end, text in _rows(docs, ("path", "end_line", "text")):
        if path.startswith(f"{digest}/"):
            lines = text.split("\n")
            out.update({(path, end - (len(lines) - 1 - i)): line for i, line in enumerate(lines)})
    return out
