"""Remembered answers that cost the garbage collector nothing.

Search remembers per-line work across calls (a resident process meets the same candidate lines
again and again). A `functools.lru_cache` is itself a container the cyclic garbage collector
walks on every full collection, entry by entry, whatever the entries hold: at 65,536 entries
per cache that walk is tens of milliseconds, paid inside whichever search the collection lands
in. A plain dict holding only strings, numbers, booleans and None is not tracked by the
collector at all (CPython untracks such dicts), so `memo` keeps a one-argument function's
answers in one: the function must take one string and return such a value. When the table
holds `limit` answers it starts again empty (cheap, and the lines in use come back at once).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar

Atom = TypeVar("Atom")  # str, int, float, bool or None


def memo(limit: int) -> Callable[[Callable[[str], Atom]], Callable[[str], Atom]]:
    """Remember `fn(text)` for up to `limit` texts in a dict the collector never walks;
    `.cache_clear()` empties it, `.cache_size()` counts it, `.table` is it."""
    def wrap(fn: Callable[[str], Atom]) -> Callable[[str], Atom]:
        table: dict[str, Atom] = {}

        @wraps(fn)
        def remembered(text: str) -> Atom:
            try:
                return table[text]
            except KeyError:
                pass
            value = fn(text)
            if len(table) >= limit:
                table.clear()
            table[text] = value
            return value

        remembered.cache_clear = table.clear  # type: ignore[attr-defined]
        remembered.cache_size = table.__len__  # type: ignore[attr-defined]
        remembered.table = table  # type: ignore[attr-defined]  # to check it stays untracked
        return remembered
    return wrap
