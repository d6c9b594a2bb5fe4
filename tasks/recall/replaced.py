"""Replaced lines at recall: a line the digest marks as replaced stays searchable with the
rest of its note or transcript window, labelled with the day it was replaced, and ranked below
the lines that are current.

The snapshot keeps, per chunk, the file lines a digest history line replaced and the day each
was replaced (index.superseded). As of a day, only the lines replaced on or before it are
replaced: a value replaced later was the current one then. A hit whose only query-matching
lines are replaced goes below every hit with a current match, and is still returned when
nothing else matches.
"""

from __future__ import annotations

import re
from datetime import date

import pyarrow.compute as pc

from memflow.tasks.ground.markdown import FACT_DATE_RE, HISTORY_DATE_RE, parse_anchor, searchable_text
from memflow.tasks.ground.tokenize import tokenize
from memflow.tasks.ground.transcript import line_places
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.recall.factkeys import out_links, row_spans
from memflow.tasks.stores.keyword import KeywordIndex

Place = tuple[str, int]  # (file, line)

LABEL_RE = re.compile(r"\(replaced (\d{4}-\d{2}-\d{2})\) ")
_BULLET_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def replaced_in(row: dict, as_of: date | None = None) -> dict[int, date]:
    """File line -> day replaced, for the lines of a snapshot row replaced by `as_of` (all
    when None)."""
    pairs = zip(row.get("superseded_lines") or [], row.get("superseded_until") or [])
    return {n: day for n, day in pairs if as_of is None or day <= as_of}


def replaced_parts(row: dict) -> dict[int, set[int]]:
    """File line -> its replaced pieces (0: the whole line) in a snapshot row; a snapshot
    without the column replaced whole lines."""
    parts = row.get("superseded_parts")
    if parts is None:
        return {n: {0} for n in row.get("superseded_lines") or []}
    out: dict[int, set[int]] = {}
    for n, part in zip(row.get("superseded_lines") or [], parts):
        out.setdefault(n, set()).add(part)
    return out


def _is_replaced_place(place: tuple[int, int], replaced: dict[int, date], parts: dict[int, set[int]] | None) -> bool:
    number, piece = place
    if number not in replaced:
        return False
    held = parts.get(number, {0}) if parts is not None else {0}
    return 0 in held or piece in held


def label(text: str, end_line: int, replaced: dict[int, date], parts: dict[int, set[int]] | None = None) -> str:
    """`text` (a chunk's: its breadcrumb above file lines ..end_line) with each replaced line
    prefixed `(replaced YYYY-MM-DD)` after its bullet; of a long message's pieces, those
    `parts` names (`replaced_parts`; all of them when it names the whole line)."""
    if not replaced:
        return text
    lines = text.split("\n")
    for i, place in enumerate(line_places(text, end_line)):
        if _is_replaced_place(place, replaced, parts) and lines[i].strip() and not LABEL_RE.search(lines[i]):
            day = replaced[place[0]]
            bullet = _BULLET_RE.match(lines[i])
            cut = bullet.end() if bullet else len(lines[i]) - len(lines[i].lstrip())
            lines[i] = f"{lines[i][:cut]}(replaced {day.isoformat()}) {lines[i][cut:]}"
    return "\n".join(lines)


def is_replaced(line: str) -> bool:
    """A line labelled as replaced (see `label`)."""
    if "(replaced " not in line:
        return False
    bullet = _BULLET_RE.match(line)
    rest = line[bullet.end():] if bullet else line.lstrip()
    return LABEL_RE.match(rest) is not None


def unlabelled(line: str) -> str:
    """A line without its `(replaced ...)` label: what it says, as search scores it."""
    return LABEL_RE.sub("", line, count=1) if "(replaced " in line else line


def replaced_rows(index: KeywordIndex, fused: list) -> list[dict | None]:
    """The snapshot row of each candidate that has replaced lines (None for the others)."""
    if "replaced" not in index.masks:
        lengths = pc.list_value_length(index.docs["superseded_lines"])
        index.masks["replaced"] = pc.fill_null(pc.greater(lengths, 0), False).to_numpy(zero_copy_only=False)
    flagged = index.masks["replaced"]
    numbers = [index.row_of(f.id) for f in fused]
    read = iter(index.rows([n for n in numbers if flagged[n]]))
    return [next(read) if flagged[n] else None for n in numbers]


def current_match(row: dict, terms: set[str], tokenizer: str, as_of: date | None = None) -> bool:
    """Whether a query term is on a line of the row that is not replaced (as of `as_of`); a row
    with no replaced line counts as current."""
    replaced = replaced_in(row, as_of)
    if not replaced:
        return True
    parts = replaced_parts(row)
    lines = row["text"].split("\n")
    for i, place in enumerate(line_places(row["text"], row["end_line"])):
        line = lines[i]
        if _is_replaced_place(place, replaced, parts) or place[0] < row["start_line"] or not line.strip() \
                or line.startswith("#"):
            continue
        if terms & set(tokenize(searchable_text(line), tokenizer)):
            return True
    return False


def replacements(index: KeywordIndex, lay: Layout, rows: list[dict]) -> dict[Place, set[Place]]:
    """Replaced place (a daily line, or a session or resource line it cites) -> the places that
    state what replaced it: the digest fact line whose history cites it, the daily lines that fact
    cites and their turns. Read from the digest chunks among `rows` (candidates' rows with text)."""
    out: dict[Place, set[Place]] = {}
    for row in rows:
        if row is None or not row["path"].startswith(f"{lay.digest}/"):
            continue
        lines = row["text"].split("\n")
        first = row["end_line"] - (len(lines) - 1)
        links: dict[int, list[tuple[str, str]]] = {}
        for line, target, anchor, _kind in out_links(index, row["path"]):
            if row["start_line"] <= line <= row["end_line"] and target.startswith(f"{lay.daily}/") and anchor:
                links.setdefault(line, []).append((target, anchor))
        fact = None
        for i, text in enumerate(lines):
            number = first + i
            if FACT_DATE_RE.match(text):
                fact = number
            elif fact is not None and HISTORY_DATE_RE.match(text):
                stated = {(row["path"], fact)} | _with_turns(index, lay, links.get(fact, []))
                for place in _with_turns(index, lay, links.get(number, [])):
                    out.setdefault(place, set()).update(stated)
    return out


def _with_turns(index: KeywordIndex, lay: Layout, cited: list[tuple[str, str]]) -> set[Place]:
    """The daily lines `cited` names (target, anchor) and the session or resource lines they cite."""
    places = {(target, n) for target, anchor in cited for n in _numbers(anchor)}
    given = (f"{lay.session}/", f"{lay.resource}/")
    for path in {p for p, _ in places}:
        for line, target, anchor, _kind in out_links(index, path):
            if (path, line) in places and target.startswith(given) and anchor:
                places |= {(target, n) for n in _numbers(anchor)}
    return places


def _numbers(anchor: str) -> list[int]:
    return [n for a, b in parse_anchor(anchor) for n in range(a, b + 1)]


def current_first(index: KeywordIndex, lay: Layout, fused: list, terms: set[str], tokenizer: str,
                  as_of: date | None = None) -> list:
    """The candidates `fused`, each whose query matches are all on replaced lines moved to just
    below the last candidate with a current match that states what replaced them
    (`replacements`: the digest fact, its daily line, its turn), when that one ranks below it;
    the rest, and a stale candidate whose replacement is not a candidate, in order."""
    rows = replaced_rows(index, fused)
    current = [row is None or current_match(row, terms, tokenizer, as_of) for row in rows]
    if all(current):  # most searches: nothing to move, nothing more read
        return fused
    numbers = [index.row_of(f.id) for f in fused]
    where = [(r["path"], r["start_line"], r["end_line"]) for r in row_spans(index, numbers)]
    digest = [n for n, (path, _, _) in zip(numbers, where) if path.startswith(f"{lay.digest}/")]
    replacing = replacements(index, lay, index.rows(digest))
    after: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        if current[i]:
            continue
        stated = set().union(*(replacing.get((row["path"], n), set()) for n in replaced_in(row, as_of)))
        holders = [j for j in range(i + 1, len(fused)) if current[j] and
                   any(p == where[j][0] and where[j][1] <= n <= where[j][2] for p, n in stated)]
        if holders:
            after.setdefault(holders[-1], []).append(i)
    moved = {i for group in after.values() for i in group}
    out = []
    for j, candidate in enumerate(fused):
        if j not in moved:
            out.append(candidate)
        out.extend(fused[i] for i in after.get(j, ()))
    return out
