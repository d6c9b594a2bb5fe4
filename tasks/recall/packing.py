"""Packing results into a token budget (pure): what an agent is given is a few hundred tokens,
so a hit brings the lines that match the query, not its whole chunk.

Each packed block is a short header (`[path:Lx-Ly] heading path`), then the hit's lines that
match the query best (a line's score is the summed idf of the query terms it has; lines scoring
at least `KEEP` of the hit's best line are kept, so a name every line repeats does not pull in
every line), adjacent ones kept together, a gap shown as `…`. A line is never
cut: a block takes the matching lines that fit, in order, and results are added in rank order
until the budget is full. A hit with no matching line (a vector-only hit) gives its first lines.
Lines keep their provenance links, so every packed line stays resolvable to its source. Every
line shows its date: a digest line its own, any other the header's (the note's path, the
session's heading, else the chunk's date added to it). A line the digest replaced is labelled
`(replaced DATE)` and comes after the block's current lines; of two lines of a block answering
the same question, the newer comes first (`timeline.newest_lines`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from functools import lru_cache

from memflow.schemas.recall import SearchResult
from memflow.tasks.ground.markdown import line_date, parse_anchor, searchable_text
from memflow.tasks.ground.speakers import line_terms
from memflow.tasks.ground.tokenize import tokenize
from memflow.tasks.recall.replaced import is_replaced, unlabelled
from memflow.tasks.recall.timeline import newest_first, newest_lines

GAP = "…"
KEEP = 0.3
_MIN_BLOCK_TOKENS = 12  # a header alone is not worth its tokens


def line_scores(result: SearchResult, weights: dict[str, float], tokenizer: str) -> list[float]:
    """Per line of `result.text`: the summed idf of the query terms it has (0 for no content)."""
    transcript = result.path.endswith(".jsonl")  # a session log's lines: `Speaker: text`
    return [sum(weights.get(t, 0.0)
                for t in set(line_terms(searchable_text(unlabelled(line)), tokenizer, transcript)))
            if _content(line) else 0.0 for line in result.text.split("\n")]


def matching_lines(result: SearchResult, weights: dict[str, float], tokenizer: str,
                   neighbours: int = 1, scores: list[float] | None = None) -> list[int]:
    """Offsets (in `result.text`) of the lines that match the query best (see KEEP) and up to
    `neighbours` lines either side of each (the answer to a question is often the next turn);
    the first lines when none matches; `scores`: `line_scores`, when known."""
    lines = result.text.split("\n")
    scores = line_scores(result, weights, tokenizer) if scores is None else scores
    best = max(scores, default=0.0)
    if best > 0:
        keep = {i for i, value in enumerate(scores) if value > 0 and value >= KEEP * best}
        keep |= {j for i in keep for j in range(i - neighbours, i + neighbours + 1)
                 if 0 <= j < len(lines) and _content(lines[j])}
        # a replaced line comes after the current ones, so a tight budget drops it first
        return sorted(keep, key=lambda i: (is_replaced(lines[i]), i))
    return [i for i, line in enumerate(lines) if _content(line)][:2]


def _content(line: str) -> bool:
    """A line that says something (not blank, a heading or a chunk's `[Part 2/3]` marker)."""
    return bool(line.strip()) and not line.startswith("#") and not line.startswith("[Part ")


_TAIL_LINK_RE = re.compile(r"\[\[([^\[\]#|]+)#(L\d+(?:-L\d+)?(?:,L\d+(?:-L\d+)?)*)\]\]\s*$")
_SOURCE_RE = re.compile(r" <- \[\[([^\[\]#|]+)\]\]$")
_SHORT_REF_RE = re.compile(r"#(L\d+(?:-L\d+)?(?:,L\d+(?:-L\d+)?)*)$")


def line_number(result: SearchResult, offset: int) -> int:
    """The file line of `result.text`'s line `offset`: a chunk's text is its breadcrumb (and a
    `[Part x/N]` marker) above the file's lines start..end, so it counts back from the end."""
    return result.end_line - (result.text.count("\n") - offset)


def line_keys(result: SearchResult, offset: int) -> set[tuple[str, int]]:
    """What a line says, as places: its own (path, line) and the lines its provenance link
    cites. A line whose places were all shown already says nothing new."""
    keys = {(result.path, line_number(result, offset))}
    tail = _TAIL_LINK_RE.search(result.text.split("\n")[offset])
    if tail:
        keys |= {(tail.group(1), n) for a, b in parse_anchor(tail.group(2)) for n in range(a, b + 1)}
    return keys


def block(result: SearchResult, offsets: list[int]) -> str:
    """Header and the chosen lines, a gap marked between non-adjacent ones. Provenance links
    are written once: when every chosen line ends with a link into one source (a daily note's
    session log), the header names it (`<- [[session/dialog/x.jsonl]]`) and each line keeps
    only its anchor (`#L13`); `expand` writes the links out again."""
    lines = result.text.split("\n")
    first, last = line_number(result, min(offsets)), line_number(result, max(offsets))
    # the innermost heading says what the lines are ("Facts", "Said by Melanie", a digest
    # node's subject); the note's title is in its path already
    section = result.heading_path.split(" > ")[-1].lstrip("#").strip() if result.heading_path else ""
    heading = f" {section}" if section else ""
    tails = [_TAIL_LINK_RE.search(lines[o]) for o in offsets]
    sources = {m.group(1) for m in tails if m}
    shared = next(iter(sources)) if len(sources) == 1 else None
    out = [f"[{result.path}:L{first}-L{last}]{heading}" + (f" <- [[{shared}]]" if shared else "")]
    day = result.date.isoformat() if result.date else None
    if day and day not in out[0] and not all(line_date(lines[o]) for o in offsets):
        out[0] += f" ({day})"  # every line shows its date: the header's, when it is not its own
    previous = None
    for offset, tail in zip(offsets, tails):
        if previous is not None and offset != previous + 1:
            out.append(GAP)
        line = lines[offset]
        if shared and tail:
            line = f"{line[:tail.start()].rstrip()} #{tail.group(2)}"
        out.append(line)
        previous = offset
    return "\n".join(out)


def expand(packed: str) -> str:
    """A packed block with its provenance links written out in full (`#L13` -> `[[log#L13]]`)."""
    lines = packed.split("\n")
    source = _SOURCE_RE.search(lines[0]) if lines else None
    if not source:
        return packed
    target = source.group(1)
    return "\n".join([lines[0], *(_SHORT_REF_RE.sub(lambda m: f"[[{target}#{m.group(1)}]]", line)
                                   for line in lines[1:])])


def packer(results: list[SearchResult], weights: dict[str, float], count: Callable[[str], int],
           tokenizer: str = "bigram", neighbours: int = 1,
           window: tuple[date, date] | None = None) -> Callable[[int], list[str]]:
    """`budget -> blocks` for one ranked list: blocks in rank order whose tokens (joined by blank
    lines) sum to at most the budget; `weights`: query token -> idf (`term_weights`). A line
    already said above (the same transcript turn, the daily line a digest fact cites, the turn
    a note line quotes) is not shown twice. Each hit's lines are chosen and each text counted
    once however many budgets are packed. The blocks chosen are then ordered newest first where
    their lines answer the same question (`timeline.newest_first`, `window`: the days asked about)."""
    pack_hits = hit_packer(results, weights, count, tokenizer, neighbours, window)
    return lambda budget: [text for _, text in pack_hits(budget)]


def hit_packer(results: list[SearchResult], weights: dict[str, float], count: Callable[[str], int],
               tokenizer: str = "bigram", neighbours: int = 1,
               window: tuple[date, date] | None = None) -> Callable[[int], list[tuple[int, str]]]:
    """`packer`, each block with the index of the hit it shows."""
    count = lru_cache(maxsize=None)(count)
    asked = {t for t, w in weights.items() if w > 0}

    @lru_cache(maxsize=None)
    def scores_of(i: int) -> list[float]:
        return line_scores(results[i], weights, tokenizer)

    @lru_cache(maxsize=None)
    def offsets_of(i: int) -> list[tuple[int, frozenset]]:
        return [(o, frozenset(line_keys(results[i], o)))
                for o in matching_lines(results[i], weights, tokenizer, neighbours, scores_of(i))]

    @lru_cache(maxsize=None)
    def place_of(i: int) -> dict[int, int]:
        """Where each chosen line is shown: the lines are chosen in rank order (so what fits
        does not depend on dates), then shown newest first where they answer one question
        (only lines with query terms can; a hit with one of them keeps its order)."""
        offsets = [o for o, _ in offsets_of(i)]
        lines = results[i].text.split("\n")
        asking = [lines[o] if scores_of(i)[o] > 0 else "" for o in offsets]
        if sum(map(bool, asking)) < 2:
            return {o: n for n, o in enumerate(offsets)}
        order = newest_lines(asking, results[i].date, tokenizer, window, asked)
        return {offsets[k]: n for n, k in enumerate(order)}

    def pack_into(budget: int) -> list[tuple[int, str]]:
        packed: list[tuple[int, str]] = []
        used = 0
        shown: set[tuple[str, int]] = set()
        for i, result in enumerate(results):
            chosen: list[int] = []
            text = ""
            fresh = [(o, keys) for o, keys in offsets_of(i) if not keys & shown]
            for offset, _keys in fresh:  # whole lines, in order, while they fit
                candidate = block(result, sorted([*chosen, offset], key=place_of(i).__getitem__))
                size = count(candidate) + (1 if packed else 0)
                if used + size > budget:
                    break
                chosen.append(offset)
                text = candidate
            if not chosen:  # not even its first line fits: a later, shorter hit may
                if budget - used < _MIN_BLOCK_TOKENS:
                    break
                continue
            used += count(text) + (1 if packed else 0)
            packed.append((i, text))
            shown.update(key for o, keys in fresh if o in chosen for key in keys)
        order = newest_first([text for _, text in packed], tokenizer, window, asked)
        # a block that answers with a replaced value follows every block that does not, so the
        # context states current values first (what fits was decided above, in rank order)
        order.sort(key=lambda n: answers_with_replaced(packed[n][1], tokenizer, asked))
        return [packed[n] for n in order]
    return pack_into


def answers_with_replaced(text: str, tokenizer: str, asked: set[str]) -> bool:
    """Does a packed block show a replaced line holding one of the query's terms?"""
    return any(is_replaced(line) and asked & set(tokenize(searchable_text(unlabelled(line)), tokenizer))
               for line in text.split("\n")[1:])


def pack(results: list[SearchResult], weights: dict[str, float], budget: int,
         count: Callable[[str], int], tokenizer: str = "bigram", neighbours: int = 1,
         window: tuple[date, date] | None = None) -> list[str]:
    """The blocks of `results` that fit in `budget` tokens (see `packer`)."""
    return packer(results, weights, count, tokenizer, neighbours, window)(budget)
