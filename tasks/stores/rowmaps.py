"""Rows of a search snapshot found by path without a scan.

A small change (one note written) must not cost a pass over every row of a 24,000-file
snapshot: each main segment groups its docs, links and files rows by path once (cached on the
segment, which every delta generation on it reuses), and so does each delta segment. What a
delta replaces and what the superseded lines of a changed file depend on are looked up here.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

KeywordIndex = Any  # a keyword.KeywordIndex; not imported, keyword imports this module

_EMPTY = np.zeros(0, dtype=np.int64)
_ONE_PASS: contextvars.ContextVar[bool] = contextvars.ContextVar("rowmaps_one_pass", default=False)


@contextmanager
def one_pass() -> Iterator[None]:
    """Lookups inside find rows not grouped yet by one vectorised pass each, and group nothing:
    for a process that looks up a column a few times and ends (`memflow index` after an edit:
    a pass over 100k link rows costs a few ms, grouping them ~45 ms), not for one that searches
    on (the first lookup groups, later ones are free)."""
    token = _ONE_PASS.set(True)
    try:
        yield
    finally:
        _ONE_PASS.reset(token)


class Groups:
    """The rows holding each value of a string column (ascending): one dict of the distinct
    values, the row numbers sorted by value and each value's bounds in them (no array per
    value: a links column of a 24,000-file snapshot has ~100k distinct targets)."""

    def __init__(self, column: pa.Array | pa.ChunkedArray):
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks() if column.num_chunks else pa.array([], pa.string())
        encoded = pc.dictionary_encode(column) if len(column) else None
        if encoded is None:
            self.at: dict[str, int] = {}
            self.order = self.bounds = _EMPTY
            return
        codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
        self.order = np.argsort(codes, kind="stable")
        counts = np.bincount(codes[codes >= 0], minlength=len(encoded.dictionary))
        start = int((codes < 0).sum())  # nulls sort first
        self.bounds = np.concatenate([[start], np.cumsum(counts) + start])
        self.at = dict(zip(encoded.dictionary.to_pylist(), range(len(counts))))

    def __contains__(self, value: object) -> bool:
        return value in self.at

    def __getitem__(self, value: str) -> np.ndarray:
        n = self.at[value]
        return self.order[self.bounds[n]:self.bounds[n + 1]]


def _segment_rows(segment: KeywordIndex, table: str, column: str) -> Groups:
    key = ("rows", table, column)
    if key not in segment.masks:
        segment.masks[key] = Groups(getattr(segment, table).column(column))
    return segment.masks[key]


def rows_of(segment: KeywordIndex, table: str, column: str, values) -> np.ndarray:
    """Rows of `segment`'s `table` (docs, links or files) whose `column` is one of `values`:
    from the rows grouped by `column` (grouped on first use, kept on the segment), or, inside
    `one_pass()` while they are not grouped, by one vectorised pass over the column."""
    key = ("rows", table, column)
    if key not in segment.masks and _ONE_PASS.get():
        wanted = pa.array(sorted({v for v in values if v is not None}), pa.string())
        hits = pc.is_in(getattr(segment, table).column(column), value_set=wanted)
        return np.flatnonzero(pc.fill_null(hits, False).to_numpy(zero_copy_only=False)).astype(np.int64)
    found = _segment_rows(segment, table, column)
    parts = [found[v] for v in values if v in found]
    return np.sort(np.concatenate(parts)) if parts else _EMPTY


def group_rows(index: KeywordIndex, table: str, column: str) -> None:
    """Group `index`'s rows by `column` now (its main segment's and a delta's): what a resident
    process does at start, so that its first write finds them grouped."""
    _segment_rows(index.main if index.main is not None else index, table, column)
    live_rows(index, table, column, [])


def keep_mask(segment: KeywordIndex, table: str, column: str, values) -> np.ndarray:
    """True for each row of `segment`'s `table` whose `column` is none of `values`."""
    keep = np.ones(getattr(segment, table).num_rows, dtype=bool)
    keep[rows_of(segment, table, column, values)] = False
    return keep


def live_rows(index: KeywordIndex, table: str, column: str, values) -> np.ndarray:
    """Rows of `index` (a main segment, or a delta on one) whose `column` is one of `values`,
    numbered as `index`'s own table, in row order; replaced rows left out. Each segment's rows
    are grouped once on that segment (a delta's segments are read and grouped once each)."""
    values = list(values)
    if index.main is None or (table != "docs" and (index.link_new is None or index.file_new is None)):
        return rows_of(index, table, column, values)
    live = index.alive if table == "docs" else (index.link_new if table == "links" else index.file_new) >= 0
    found = [rows_of(index.main, table, column, values)]
    for segment, start in zip(index.segments, index.starts[table]):
        found.append(rows_of(segment, table, column, values) + int(start))
    rows = np.concatenate(found).astype(np.int64)
    return rows[live[rows]]


def take_rows(table: pa.Table, numbers: np.ndarray) -> pa.Table:
    """`table.take(numbers)` for a few rows by scalar reads: Arrow's take on a table of a
    mapped snapshot costs 5-150 ms whatever the count (measured at 43k rows), a few scalar
    reads well under 1 ms."""
    if len(numbers) > 256:
        return table.take(pa.array(numbers))
    return pa.Table.from_pylist(row_dicts(table, numbers), schema=table.schema)


def take_column(column: pa.ChunkedArray, numbers: np.ndarray, plan: Plan | None = None) -> list:
    """Values `numbers` of one column as Python objects, each chunk's in one vectorised read (a
    few thousand rows: well under a millisecond; scalar reads cost ~2 us each; Arrow's take on
    a chunked column joins its chunks first, a copy of the whole column); `plan`: `chunk_plan`
    of the column's table, when the column is chunked as its first column is."""
    if column.num_chunks == 1:
        return column.chunk(0).take(pa.array(numbers, pa.int64())).to_pylist()
    if plan is None or plan.sizes != [len(chunk) for chunk in column.chunks]:
        plan = chunk_plan(column, numbers)
    taken = [column.chunk(k).take(local) for k, local in plan.parts]
    if len(taken) == 1:
        return taken[0].to_pylist()
    return pa.concat_arrays(taken).take(plan.order).to_pylist() if taken else []


@dataclass
class Plan:
    """Where rows `numbers` sit in a chunked column: per chunk holding some, (chunk, the rows
    in it), and the order that puts the chunks' values back in the order asked."""
    sizes: list[int]
    parts: list[tuple[int, pa.Array]]
    order: pa.Array | None


def chunk_plan(column: pa.ChunkedArray, numbers: np.ndarray) -> Plan:
    sizes = [len(chunk) for chunk in column.chunks]
    bounds = np.cumsum([0, *sizes])
    which = np.searchsorted(bounds, numbers, side="right") - 1
    parts, at = [], []
    for k in np.unique(which).tolist():
        inside = np.flatnonzero(which == k)
        parts.append((k, pa.array(numbers[inside] - bounds[k], pa.int64())))
        at.append(inside)
    order = None
    if len(parts) > 1:
        placed = np.empty(len(numbers), dtype=np.int64)
        placed[np.concatenate(at)] = np.arange(len(numbers))
        order = pa.array(placed)
    return Plan(sizes, parts, order)


def row_dicts(table: pa.Table, numbers) -> list[dict]:
    """Rows `numbers` of `table` as dicts: by scalar reads for a few (`take` + `to_pylist` of a
    table cost ~0.4 ms for 5 rows), else each column taken in one read (~3-10x faster than
    scalar reads from a few dozen rows on)."""
    names = table.column_names
    if len(numbers) < 8:
        columns = [(name, table.column(name)) for name in names]
        return [{name: column[int(n)].as_py() for name, column in columns} for n in numbers]
    numbers = np.asarray(numbers, dtype=np.int64)
    first = table.column(names[0]) if names else None
    plan = chunk_plan(first, numbers) if first is not None and first.num_chunks > 1 else None
    values = [take_column(table.column(name), numbers, plan) for name in names]
    return [dict(zip(names, row)) for row in zip(*values)]
