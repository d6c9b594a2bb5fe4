"""What the digest says about daily chunks (pure): which of their lines hold a superseded fact.

A digest history line (`  - until 2026-03-09: I live in Berlin. [[daily/...#L12]]`) cites a
daily line whose fact a later one replaced. That line is *superseded* from its `until` day on;
the session-log turns it cites are superseded with it. Superseding is per line: the snapshot
keeps, per chunk, the replaced line numbers and the day each was replaced, and search keeps the
chunk, labels those lines and ranks them below the line that replaced them (recall.replaced),
so every other line of the note or transcript window stays findable. A long message is indexed
as pieces (`ground.transcript`); of a replaced message only the pieces that say the replaced
statement are superseded (its other pieces say other things: code, other facts), and none when
no piece says it.
"""

from __future__ import annotations

import logging
import re
from datetime import date

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memflow.tasks.ground.markdown import line_date, line_text, parse_anchor
from memflow.tasks.ground.transcript import line_places

log = logging.getLogger("memflow.index")


def superseded_lines(docs: pa.Table, links: pa.Table, daily: str, digest: str,
                     session: str = "session") -> tuple[pa.Array, pa.Array, pa.Array]:
    """Three row-aligned list columns for `docs` (path, start_line, end_line, text): the file
    lines of each chunk that a digest history line (or the daily line it cites, for a transcript)
    marks as replaced, ascending, the day each was replaced (its history line's `until`), and
    which piece of the line (0: the whole line; a long message's pieces are numbered from 1, and
    a line is listed once per replaced piece). `links` is the link graph (source, line, target,
    anchor, kind); `daily`, `digest` and `session` are the layer folders."""
    replaced, said, still_said = _replaced(docs, links, daily, digest, session)
    counts = np.zeros(docs.num_rows, dtype=np.int32)
    numbers, days, parts = [], [], []
    # only the chunks of files with a replaced line are read into Python (a handful of a
    # 24,000-file index's 45,000 rows: a loop over every row cost ~0.3 CPU seconds there)
    held_rows = pc.is_in(docs.column("path"), value_set=pa.array(list(replaced), pa.string()))
    for row in np.flatnonzero(held_rows.to_numpy(zero_copy_only=False)).tolist():
        path, start, end = (docs.column(c)[row].as_py() for c in ("path", "start_line", "end_line"))
        held = sorted((n, d) for n, d in replaced[path].items() if start <= n <= end)
        pieces = _said_pieces(docs.column("text")[row].as_py(), end, said[path]) if held and path in said else {}
        for n, day in held:
            for part in sorted(pieces.get(n, set() if (path, n) in still_said else {0})):
                numbers.append(n)
                days.append(day)
                parts.append(part)
                counts[row] += 1
    offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
    return (pa.ListArray.from_arrays(offsets, pa.array(numbers, pa.int32())),
            pa.ListArray.from_arrays(offsets, pa.array(days, pa.date32())),
            pa.ListArray.from_arrays(offsets, pa.array(parts, pa.int16())))


def _said_pieces(text: str, end_line: int, said: dict[int, set[str]]) -> dict[int, set[int]]:
    """Line -> the pieces of it in `text` that say one of its replaced statements (`said`), for
    each line of `said` that `text` holds as pieces: the piece with most of a statement's words,
    when it has at least half of them."""
    places = line_places(text, end_line)
    lines = text.split("\n")
    out: dict[int, set[int]] = {}
    for number, statements in said.items():
        pieces = [(part, set(_WORD_RE.findall(lines[i].lower()))) for i, (n, part) in enumerate(places)
                  if n == number and part]
        if not pieces:
            continue
        chosen = out.setdefault(number, set())
        for statement in statements:
            words = set(_WORD_RE.findall(statement.lower()))
            part, shared = max(((part, len(words & have)) for part, have in pieces), key=lambda p: p[1])
            if words and shared * 2 >= len(words):
                chosen.add(part)
    return out


_WORD_RE = re.compile(r"\w+")


def _replaced(docs: pa.Table, links: pa.Table, daily: str, digest: str, session: str
              ) -> tuple[dict[str, dict[int, date]], dict[str, dict[int, set[str]]], set[tuple[str, int]]]:
    """path -> line -> the earliest day a fact on it was replaced; for the session-log lines
    among them, path -> line -> the statements replaced (the history lines' texts); and the
    (path, line) of those that still say a current fact, which only a piece's label may mark. Only
    the links and digest chunks that can say so are read into Python (the snapshot build's peak
    memory)."""
    replaced: dict[str, dict[int, date]] = {}
    said: dict[tuple[str, int], set[str]] = {}
    turns_said: dict[str, dict[int, set[str]]] = {}
    source, target = links.column("source"), links.column("target")
    into_daily = pc.and_(pc.starts_with(source, f"{digest}/"), pc.starts_with(target, f"{daily}/"))
    superseded = pc.equal(links.column("kind"), "superseded")
    history = links.filter(pc.and_(superseded, into_daily))
    if not history.num_rows:
        return replaced, turns_said, set()
    # a line a current fact cites too still says that fact ("I live in Porto and teach at the
    # conservatory", after a move): it is not labelled replaced as a whole, nor the turns it
    # cites (a long message's piece saying the replaced statement still is)
    current = links.filter(pc.and_(pc.invert(superseded), pc.and_(
        into_daily, pc.is_in(target, value_set=pc.unique(history.column("target"))))))
    still_said = {(path, n) for path, anchor in _rows(current, ("target", "anchor"))
                  for first, last in parse_anchor(anchor or "") for n in range(first, last + 1)}
    cited = docs.filter(pc.is_in(docs.column("path"), value_set=pc.unique(history.column("source"))))
    lines_of = _digest_lines(cited, digest)
    for source_path, line, target_path, anchor in _rows(history, ("source", "line", "target", "anchor")):
        text = lines_of.get((source_path, line), "")
        day = line_date(text)
        if day is None:  # no date to say since when: not labelled (a label 0001-01-01 misleads)
            log.warning("%s line %d: a replaced value's history line has no readable date (%r); "
                        "its source is not labelled replaced (`memflow check` shows the node)",
                        source_path, line, text[:80])
            continue
        held = replaced.setdefault(target_path, {})
        for first, last in parse_anchor(anchor or ""):
            for n in range(first, last + 1):
                held[n] = min(day, held.get(n, day))
                said.setdefault((target_path, n), set()).add(line_text(text))
    turns_of = links.filter(pc.and_(pc.starts_with(target, f"{session}/"),
                                    pc.is_in(source, value_set=pa.array(list(replaced), pa.string()))))
    for source_path, line, target_path, anchor in _rows(turns_of, ("source", "line", "target", "anchor")):
        if line in replaced[source_path]:  # the turns a replaced daily line cites
            turns = replaced.setdefault(target_path, {})
            for first, last in parse_anchor(anchor or ""):
                for n in range(first, last + 1):
                    turns[n] = min(replaced[source_path][line], turns.get(n, date.max))
                    turns_said.setdefault(target_path, {}).setdefault(n, set()).update(
                        said.get((source_path, line), ()))
                    if (source_path, line) in still_said:
                        still_said.add((target_path, n))
    return replaced, turns_said, still_said


def _rows(table: pa.Table, columns: tuple[str, ...]) -> list[tuple]:
    return list(zip(*(table.column(c).to_pylist() for c in columns)))


def _digest_lines(docs: pa.Table, digest: str) -> dict[tuple[str, int], str]:
    """(path, line) -> text of every digest chunk line (a chunk's text ends with its lines; what
    comes before its first line is context: the heading, a part's `[Part 2/3]`)."""
    out = {}
    for path, start, end, text in _rows(docs, ("path", "start_line", "end_line", "text")):
        if path.startswith(f"{digest}/"):
            lines = text.split("\n")
            numbered = ((end - (len(lines) - 1 - i), line) for i, line in enumerate(lines))
            out.update({(path, n): line for n, line in numbered if n >= start})
    return out
