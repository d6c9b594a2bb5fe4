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
from collections.abc import Callable
from datetime import date

import pyarrow.compute as pc

from memflow.tasks.ground.markdown import searchable_text
from memflow.tasks.ground.tokenize import tokenize
from memflow.tasks.stores.keyword import KeywordIndex

LABEL_RE = re.compile(r"\(replaced (\d{4}-\d{2}-\d{2})\) ")
_BULLET_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def replaced_in(row: dict, as_of: date | None = None) -> dict[int, date]:
    """File line -> day replaced, for the lines of a snapshot row replaced by `as_of` (all
    when None)."""
    pairs = zip(row.get("superseded_lines") or [], row.get("superseded_until") or [])
    return {n: day for n, day in pairs if as_of is None or day <= as_of}


def label(text: str, end_line: int, replaced: dict[int, date]) -> str:
    """`text` (a chunk's: its breadcrumb above file lines ..end_line) with each replaced line
    prefixed `(replaced YYYY-MM-DD)` after its bullet."""
    if not replaced:
        return text
    lines = text.split("\n")
    last = len(lines) - 1
    for number, day in replaced.items():
        i = last - (end_line - number)
        if 0 <= i <= last and lines[i].strip() and not LABEL_RE.search(lines[i]):
            bullet = _BULLET_RE.match(lines[i])
            cut = bullet.end() if bullet else len(lines[i]) - len(lines[i].lstrip())
            lines[i] = f"{lines[i][:cut]}(replaced {day.isoformat()}) {lines[i][cut:]}"
    return "\n".join(lines)


def is_replaced(line: str) -> bool:
    """A line labelled as replaced (see `label`)."""
    bullet = _BULLET_RE.match(line)
    rest = line[bullet.end():] if bullet else line.lstrip()
    return LABEL_RE.match(rest) is not None


def unlabelled(line: str) -> str:
    """A line without its `(replaced ...)` label: what it says, as search scores it."""
    return LABEL_RE.sub("", line, count=1)


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
    lines = row["text"].split("\n")
    last = len(lines) - 1
    for i, line in enumerate(lines):
        number = row["end_line"] - (last - i)
        if number in replaced or number < row["start_line"] or not line.strip() or line.startswith("#"):
            continue
        if terms & set(tokenize(searchable_text(line), tokenizer)):
            return True
    return False


def current_first(fused: list, rows: Callable[[list], list[dict | None]], terms: set[str],
                  tokenizer: str, as_of: date | None = None) -> list:
    """The candidates `fused`, those whose query matches are all on replaced lines moved below
    the others, each group in its order; `rows(fused)` gives each candidate's snapshot row, or
    None for one without replaced lines."""
    current, stale = [], []
    for candidate, row in zip(fused, rows(fused)):
        keep = row is None or current_match(row, terms, tokenizer, as_of)
        (current if keep else stale).append(candidate)
    return current + stale
