"""Evidence before its restatement.

A digest chunk the dream wrote from daily lines (and they from the session log) restates
evidence in fewer words, so BM25 often ranks it above the turns it came from. When those
turns (a session log's lines, a resource's) are candidates too, ranked below it, they move up
to just above the digest chunk and take its score: an agent reads what was said first, and the digest line
that says it again is then packed only for what it adds (`packing` skips a line restating a
packed turn). Digest chunks whose evidence is not a candidate keep their place: they are how
that evidence is found. A chunk matching only on replaced lines still goes below current ones
(`replaced.current_first` runs after this).
"""

from __future__ import annotations

from dataclasses import replace

import pyarrow.compute as pc

from memflow.tasks.ground.markdown import HISTORY_DATE_RE, parse_anchor
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.recall.factkeys import out_links, row_spans
from memflow.tasks.stores import keyword

def cited_places(index: keyword.KeywordIndex, lay: Layout, row: dict, number: int) -> frozenset[tuple[str, int]]:
    """The daily lines a digest chunk's current facts cite, and the session and resource lines
    those daily lines cite (empty for a chunk that is not a digest chunk). History lines
    (`  - until DATE: ...`) are left out: a replaced value's turn is not raised by the node
    that replaced it. `number`: the chunk's snapshot row (its text is read once per snapshot)."""
    if not row["path"].startswith(f"{lay.digest}/"):
        return frozenset()
    memo = index.masks.setdefault("cited-places", {})  # a snapshot's links do not change
    key = (row["path"], row["start_line"], row["end_line"])
    if key not in memo:
        memo[key] = frozenset(_cited_places(index, lay, index.rows([number])[0]))
    return memo[key]


def _cited_places(index: keyword.KeywordIndex, lay: Layout, row: dict) -> set[tuple[str, int]]:
    lines = row["text"].split("\n")
    history = {row["end_line"] - (len(lines) - 1 - i) for i, line in enumerate(lines)
               if HISTORY_DATE_RE.match(line)}
    places: set[tuple[str, int]] = set()
    for line, target, anchor, kind in out_links(index, row["path"]):
        if row["start_line"] <= line <= row["end_line"] and line not in history and kind == "link" \
                and target.startswith(f"{lay.daily}/") and anchor:
            places.update((target, n) for a, b in parse_anchor(anchor) for n in range(a, b + 1))
    by_path: dict[str, set[int]] = {}
    for path, line in places:
        by_path.setdefault(path, set()).add(line)
    for path, cited in by_path.items():
        for line, target, anchor, _kind in out_links(index, path):
            if line in cited and target.startswith((f"{lay.session}/", f"{lay.resource}/")) and anchor:
                places.update((target, n) for a, b in parse_anchor(anchor) for n in range(a, b + 1))
    return places


def evidence_first(index: keyword.KeywordIndex, lay: Layout, fused: list) -> list:
    """`fused` (RRF order) with each session or resource candidate holding a line that a digest
    candidate above it cites moved to just above that digest candidate, with its score; the
    rest in order. Daily chunks stay where they are: the digest chunk says what they say
    (`one_hit_per_fact` then leaves out a daily chunk it states)."""
    if "has-digest" not in index.masks:  # once per snapshot: a workspace never dreamed skips this
        index.masks["has-digest"] = bool(pc.any(pc.equal(index.docs.column("layer"), "digest")).as_py())
    if len(fused) < 2 or not index.masks["has-digest"]:
        return fused
    numbers = [index.row_of(f.id) for f in fused]
    rows = row_spans(index, numbers)
    if not any(r["path"].startswith(f"{lay.digest}/") for r in rows):
        return fused
    spans: dict[str, list[tuple[int, int, int]]] = {}
    given = (f"{lay.session}/", f"{lay.resource}/")
    for j, row in enumerate(rows):
        if row["path"].startswith(given):
            spans.setdefault(row["path"], []).append((j, row["start_line"], row["end_line"]))
    if not spans:
        return fused
    out, moved = [], set()
    for i, (candidate, row) in enumerate(zip(fused, rows)):
        if i in moved:
            continue
        places = cited_places(index, lay, row, numbers[i])
        lifted = sorted({j for path, line in places for j, a, b in spans.get(path, ())
                         if j > i and j not in moved and a <= line <= b})
        for j in lifted:
            out.append(replace(fused[j], score=max(fused[j].score, candidate.score),
                               restated_by=f"{row['path']}:{row['start_line']}-{row['end_line']}"))
            moved.add(j)
        out.append(candidate)
    return out
