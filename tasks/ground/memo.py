"""Remembered answers that cost the garbage collector nothing.

Search remembers per-line work across calls (a resident process meets the same candidate lines
again and again). A `functools.lru_cache` is itself a container the cyclic garbage collector
walks on every full collection, entry by entry, whatever the entries hold: at 65,536 entries
per cache that walk is tens of milliseconds, paid inside whichever search the collection lands
in. A plain dict holding only strings, numbers, booleans and None is not tracked by the
collector at all (CPython untracks such dicts), so `memo` keeps a one-argument function's
answers in one: the function must take a string (and a few settings) and return such a value. When the table
holds `limit` answers it starts again empty (cheap, and the lines in use come back at once).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar

Atom = TypeVar("Atom")  # str, int, float, bool or None


def memo(limit: int) -> Callable[[Callable[..., Atom]], Callable[..., Atom]]:
    """Remember `fn(text, *settings)` for up to `limit` texts per settings (a tokenizer's name,
    a flag: a few values, each its own table) in dicts the collector never walks;
    `.cache_clear()` empties them, `.cache_size()` counts them, `.table` is the table of no
    settings (a one-argument function's)."""
    def wrap(fn: Callable[..., Atom]) -> Callable[..., Atom]:
        tables: dict[tuple, dict[str, Atom]] = {(): {}}

        @wraps(fn)
        def remembered(text: str, *settings) -> Atom:
            table = tables.get(settings)
            if table is None:
                table = tables[settings] = {}
            try:
                return table[text]
            except KeyError:
                pass
            value = fn(text, *settings)
            if len(table) >= limit:
                table.clear()
            table[text] = value
            return value

        def cache_clear() -> None:
            for table in tables.values():
                table.clear()

        remembered.cache_clear = cache_clear  # type: ignore[attr-defined]
        remembered.cache_size = lambda: sum(map(len, tables.values()))  # type: ignore[attr-defined]
        remembered.table = tables[()]  # type: ignore[attr-defined]  # to check it stays untracked
        return remembered
    return wrap
