"""Evidence before its restatement.

A digest chunk the dream wrote from daily lines (and they from the session log) restates
evidence in fewer words, so BM25 often ranks it above the turns it came from. When those
turns (a session log's lines, a resource's) are candidates too, ranked below it, they move up
to just above the digest chunk and take its score: an agent reads what was said first, and the digest line
that says it again is then packed only for what it adds (`packing` skips a line restating a
packed turn). Digest chunks whose evidence is not a candidate keep their place: they are how
that evidence is found. A chunk matching only on replaced lines still goes below current ones
(`replaced.current_first` runs after this). Only the turns of the facts that match the question
best go up (`cited_places`): a chunk found by its node's name raises none, and a fact holding
fewer of the question's words than another fact of the chunk did not earn the chunk its rank
(a user's node ranked for "Nadia and I lived together" raised the older turn of its next fact,
"Nadia sent me a video ... Brisbane is treating her well", above the newer "Nadia took the Perth
job": the dream displaced what was true now with what it restated).
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date

import pyarrow.compute as pc

from memflow.tasks.ground.markdown import FACT_DATE_RE, HISTORY_DATE_RE, line_date, parse_anchor, searchable_text
from memflow.tasks.ground.tokenize import tokenize
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.recall.factkeys import out_links, row_spans
from memflow.tasks.recall.timeline import within
from memflow.tasks.stores import keyword

Cited = tuple[tuple[frozenset[str], date | None, frozenset[tuple[str, int]]], ...]


def cited_places(index: keyword.KeywordIndex, lay: Layout, row: dict, number: int, terms: dict[str, float],
                 tokenizer: str, window: tuple[date, date] | None = None) -> set[tuple[str, int]]:
    """The daily lines that a digest chunk's current facts matching the query best cite, and the
    session and resource lines those daily lines cite (empty for a chunk that is not a digest
    chunk). A fact matches by the summed weight (`terms`: query term -> idf) of the query terms
    its own words (not its date, not its links) hold, and only the facts matching best count:
    a chunk found by its node's name or its facts' dates restates nothing the question asked,
    and a fact matching less than another of the chunk did not earn it its rank.
    When the chunk is dated inside the window the question names (`window`), a fact dated
    outside it raises nothing: the chunk's rank owes to the window, the turn's would not.
    History lines (`  - until DATE: ...`) are left out: a replaced value's turn is not raised by
    the node that replaced it. `number`: the chunk's snapshot row (its text is read once per
    snapshot)."""
    if not row["path"].startswith(f"{lay.digest}/"):
        return set()
    memo = index.masks.setdefault("cited-facts", {})  # a snapshot's links do not change
    key = (row["path"], row["start_line"], row["end_line"], tokenizer)
    if key not in memo:
        memo[key] = _cited_facts(index, lay, index.rows([number])[0], tokenizer)
    chunk_dated = within(row.get("date"), window) if window else False
    matched = [(math.fsum(terms[t] for t in words if t in terms), cited) for words, day, cited in memo[key]
               if not terms.keys().isdisjoint(words) and (not chunk_dated or within(day, window))]
    best = max((weight for weight, _ in matched), default=0.0)
    return {place for weight, cited in matched if weight >= best for place in cited}


def _cited_facts(index: keyword.KeywordIndex, lay: Layout, row: dict, tokenizer: str) -> Cited:
    """Per current fact line of a digest chunk: its words, its date and the places it cites
    (its daily lines and the session and resource lines they cite)."""
    lines = row["text"].split("\n")
    first = row["end_line"] - (len(lines) - 1)
    by_line: dict[int, set[tuple[str, int]]] = {}
    for line, target, anchor, kind in out_links(index, row["path"]):
        if row["start_line"] <= line <= row["end_line"] and kind == "link" \
                and target.startswith(f"{lay.daily}/") and anchor and line >= first \
                and not HISTORY_DATE_RE.match(lines[line - first]):
            by_line.setdefault(line, set()).update(
                (target, n) for a, b in parse_anchor(anchor) for n in range(a, b + 1))
    daily: dict[str, set[int]] = {}
    for places in by_line.values():
        for path, n in places:
            daily.setdefault(path, set()).add(n)
    turns: dict[tuple[str, int], set[tuple[str, int]]] = {}
    for path, cited in daily.items():
        for line, target, anchor, _kind in out_links(index, path):
            if line in cited and target.startswith((f"{lay.session}/", f"{lay.resource}/")) and anchor:
                turns.setdefault((path, line), set()).update(
                    (target, n) for a, b in parse_anchor(anchor) for n in range(a, b + 1))
    facts = []
    for line, places in sorted(by_line.items()):
        text = lines[line - first]
        dated = FACT_DATE_RE.match(text)
        words = frozenset(tokenize(searchable_text(text[dated.end():] if dated else text), tokenizer))
        day = line_date(text)
        cited = set(places)
        for place in places:
            cited.update(turns.get(place, ()))
        facts.append((words, day, frozenset(cited)))
    return tuple(facts)


def evidence_first(index: keyword.KeywordIndex, lay: Layout, fused: list, terms: dict[str, float],
                   tokenizer: str, window: tuple[date, date] | None = None) -> list:
    """`fused` (RRF order) with each session or resource candidate holding a line that a digest
    candidate above it cites (`cited_places`: its facts matching the query `terms`, term ->
    idf, best), and that no candidate above the digest candidate holds, moved to
    just above that digest candidate, with its score; the rest in order. Daily chunks stay
    where they are: the digest chunk says what they say (`one_hit_per_fact` then leaves out a
    daily chunk it states)."""
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
        places = cited_places(index, lay, row, numbers[i], terms, tokenizer, window)
        # a turn a candidate above already holds is shown: its other pieces (a long message is
        # indexed in pieces) say other things and stay where they rank
        places = {(path, line) for path, line in places
                  if not any(j < i and a <= line <= b for j, a, b in spans.get(path, ()))}
        lifted = sorted({j for path, line in places for j, a, b in spans.get(path, ())
                         if j > i and j not in moved and a <= line <= b})
        for j in lifted:
            out.append(replace(fused[j], score=max(fused[j].score, candidate.score),
                               restated_by=f"{row['path']}:{row['start_line']}-{row['end_line']}"))
            moved.add(j)
        out.append(candidate)
    return out
