"""The daily lines a chunk states, from the link rows of its file: what packing and dedup need
to tell that a digest fact and the daily line it came from are one fact.

A packed search asks this of every candidate (a hundred or so per query); each file's out-links
are read once per snapshot generation, as tuples of the four columns used (not a dict per link
row, in-links included, per candidate and query).
"""

from __future__ import annotations

import numpy as np

from memflow.tasks.ground.markdown import parse_anchor
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores import keyword, rowmaps

OutLink = tuple[int, str, str | None, str]  # line, target, anchor, kind
_COLUMNS = ["line", "target", "anchor", "kind"]


def out_links(index: keyword.KeywordIndex, path: str) -> tuple[OutLink, ...]:
    """The links from `path`, in link-table order (memoised on the index)."""
    found = index.masks.get(("out-links", path))
    if found is None:
        read_out_links(index, [path])
        found = index.masks[("out-links", path)]
    return found


def read_out_links(index: keyword.KeywordIndex, paths: list[str]) -> None:
    """Memoise the out-links of every path of `paths` not read yet, in one read: the link rows
    of all of them found at once, each column taken for those rows in one vectorised read (a
    first search read each candidate's rows one scalar at a time: ~5,000 per query)."""
    todo = [p for p in dict.fromkeys(paths) if ("out-links", p) not in index.masks]
    if not todo:
        return
    grouped: dict[str, list[OutLink]] = {p: [] for p in todo}
    if index.links is not None:
        numbers = np.sort(rowmaps.live_rows(index, "links", "source", todo))  # link-table order
        if len(numbers):
            columns = [rowmaps.take_column(index.links.column(c), numbers) for c in ("source", *_COLUMNS)]
            for source, *link in zip(*columns):
                grouped[source].append(tuple(link))
    for path, links in grouped.items():  # tuples of strings and numbers: the collector stops walking them
        index.masks[("out-links", path)] = tuple(links)


def row_spans(index: keyword.KeywordIndex, numbers: list[int]) -> list[dict]:
    """(path, start_line, end_line, date) of the snapshot rows `numbers`, read from those columns
    only (memoised on the index), not from each row's text."""
    if "span-columns" not in index.masks:
        index.masks["span-columns"] = index.docs.select(["path", "start_line", "end_line", "date"])
    return keyword._take(index.masks["span-columns"], numbers)


def fact_keys(index: keyword.KeywordIndex, lay: Layout, row: dict) -> set[tuple[str, int]]:
    """The daily lines a chunk states: its own fact lines (those citing the session log) for a
    daily chunk, the daily lines its fact lines cite for a digest chunk."""
    path, start, end = row["path"], row["start_line"], row["end_line"]
    daily, digest, session = f"{lay.daily}/", f"{lay.digest}/", f"{lay.session}/"
    keys: set[tuple[str, int]] = set()
    if not (path.startswith(daily) or path.startswith(digest)):
        return keys
    for line, target, anchor, kind in out_links(index, path):
        if not start <= line <= end:
            continue
        if path.startswith(daily) and target.startswith(session):
            keys.add((path, line))
        elif path.startswith(digest) and target.startswith(daily) and kind == "link":
            keys.update((target, n) for a, b in parse_anchor(anchor or "") for n in range(a, b + 1))
    return keys
