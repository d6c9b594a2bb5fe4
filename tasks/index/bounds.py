"""Stage 2, index: every value bounded before it goes into a table column.

A note may carry a frontmatter name of megabytes (aliases repeat a string cheaply), a heading
line of megabytes that every chunk under it repeats, or a single line longer than any chunk;
LanceDB then builds columns of gigabytes and aborts the whole process. Rows are checked here,
after they are built and before any store sees them: a value past its limit is cut (text at a
character boundary, lists by items) and the file is indexed with a warning naming the fields.
"""

from __future__ import annotations

from datetime import date

TEXT_MAX_CHARS = 64 * 1024  # a chunk's text (chunks are ~1 KB; only one huge line gets here)
FIELD_MAX_CHARS = 2048  # name, description, heading path, link target/anchor/label, a path
TERM_MAX_CHARS = 64  # one keyword token
TERMS_MAX_ITEMS = 16 * 1024  # tokens of one chunk (64 KiB of text makes fewer)
_LIMITS = {"text": TEXT_MAX_CHARS}
_KEYS = frozenset({"id", "path", "source", "sha256"})  # identities: never cut (a path is < 4 KiB)
_LEFT = frozenset({int, float, bool, type(None), date})  # types `_bounded` leaves as they are


def _bounded(key: str, value: object) -> tuple[object, bool]:
    """(value within its limit, whether it was cut)."""
    if isinstance(value, str):
        limit = _LIMITS.get(key, FIELD_MAX_CHARS)
        return (value[:limit], True) if len(value) > limit else (value, False)
    if isinstance(value, list):
        if len(value) <= TERMS_MAX_ITEMS and _longest(value) <= TERM_MAX_CHARS:
            return value, False
        long = len(value) > TERMS_MAX_ITEMS or any(isinstance(i, str) and len(i) > TERM_MAX_CHARS
                                                   for i in value)
        if not long:
            return value, False
        return [i[:TERM_MAX_CHARS] if isinstance(i, str) else i for i in value[:TERMS_MAX_ITEMS]], True
    return value, False


def _longest(items: list) -> int:
    """The longest item's length (at least every string's): one C-level pass, the common case."""
    try:
        return max(map(len, items), default=0)
    except TypeError:  # an item without a length: count the strings only
        return max((len(i) for i in items if isinstance(i, str)), default=0)


def bound_rows(rows: list[dict]) -> set[str]:
    """Cut every oversized value of `rows` in place; returns the names of the fields cut."""
    cut: set[str] = set()
    for row in rows:
        for key, value in row.items():
            # most values are short strings, numbers and short terms: settled here, without a call
            kind = type(value)
            if ((kind is str and len(value) <= FIELD_MAX_CHARS) or kind in _LEFT or key in _KEYS
                    or (kind is list and len(value) <= TERMS_MAX_ITEMS and _longest(value) <= TERM_MAX_CHARS)):
                continue
            new, changed = _bounded(key, value)
            if changed:
                row[key] = new
                cut.add(key)
    return cut


def cut_warning(fields: set[str]) -> str:
    """The one-line warning of a file indexed with fields cut."""
    return (f"{', '.join(sorted(fields))} over the column limit ({FIELD_MAX_CHARS:,} characters, "
            f"text {TEXT_MAX_CHARS:,}, terms {TERM_MAX_CHARS} each): indexed with those values cut")
