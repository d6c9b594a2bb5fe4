"""Packing results into a token budget (pure): what an agent is given is a few hundred tokens,
so a hit brings the lines that match the query, not its whole chunk.

Each packed block is a short header (`[path:Lx-Ly] heading path`), then the hit's lines that
match the query best (a line's score is the summed idf of the query terms it has; lines scoring
at least `KEEP` of the hit's best line are kept, so a name every line repeats does not pull in
every line), adjacent ones kept together, a gap shown as `…`. A line is never
cut (a long message is indexed as pieces, each a line: `ground.transcript`): a block takes the
matching lines that fit, in order, and results are added in rank order (`recall.sequence`: the
context at a budget is held at every larger budget; a line too long for the room left waits
while shorter lines of later hits go in). A hit with no matching line (a vector-only hit)
gives its first lines.
Lines keep their provenance links, so every packed line stays resolvable to its source. Every
line shows its date: a digest line its own, any other the header's (the note's path, the
session's heading, else the chunk's date added to it). A line the digest replaced is labelled
`(replaced DATE)` and comes after the block's current lines; of two lines of a block answering
the same question, the newer comes first (`timeline.newest_lines`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import date
from dataclasses import replace
from functools import lru_cache

from memflow.schemas.recall import SearchResult
from memflow.tasks.ground.markdown import (
    FACT_DATE_RE,
    HISTORY_DATE_RE,
    RELATED,
    iso_date,
    line_date,
    line_text,
    parse_anchor,
    searchable_text,
)
from memflow.tasks.ground.memo import memo
from memflow.tasks.ground.speakers import line_words
from memflow.tasks.ground.transcript import is_code, line_places, piece_of, spoken
from memflow.tasks.ground.tokenize import tokenize
from memflow.tasks.recall.answers import Head, answers, opening_blocks
from memflow.tasks.recall.replaced import is_replaced, unlabelled
from memflow.tasks.recall.sequence import Sequence, Unit, Units, next_rung
from memflow.tasks.recall.timeline import newest_first, newest_lines, within

GAP = "…"
KEEP = 0.3
_DIGITS = frozenset("0123456789")


def line_scores(result: SearchResult, weights: dict[str, float], tokenizer: str) -> list[float]:
    """Per line of `result.text`: the summed idf of the query terms it has (0 for no content)."""
    asked = [(f" {term} ", weight) for term, weight in weights.items()]
    return [0.0 if terms is None else _score(terms, asked) for terms, _, _ in _lines(result, tokenizer)]


_LINES: dict[tuple[str, str, bool], tuple] = {}
_LINES_KEPT = 1 << 14


def _lines(result: SearchResult, tokenizer: str) -> tuple[tuple[str | None, bool, bool], ...]:
    """Per line of a hit's text: its search terms as one string, each term between spaces
    (None for a line without content, `_content`), whether it is replaced, whether it is code;
    kept across searches (a resident process meets the same candidates again and again). The
    terms of a line as the index stored it are read from the hit's row (`SearchResult._indexed`),
    not tokenized again: a first search over lines never seen cost 2-3x a repeated one."""
    transcript = result.path.endswith(".jsonl")
    text = result.text
    key = (text, tokenizer, transcript)
    found = _LINES.get(key)
    if found is None:
        known = _indexed_lines(result)
        replaced, code = "(replaced " in text, " (L" in text  # most texts have neither
        found = tuple((_known_terms(line, known, tokenizer, transcript) if _content(line) else None,
                       replaced and is_replaced(line), code and is_code(line)) for line in text.split("\n"))
        if len(_LINES) >= _LINES_KEPT:
            del _LINES[next(iter(_LINES))]  # the oldest first
        _LINES[key] = found
    return found


def _indexed_lines(result: SearchResult) -> dict[str, str]:
    """Each line of the hit's text as indexed -> its stored terms (none when search did not
    say: a result made elsewhere, or an index without them)."""
    indexed = result._indexed  # noqa: SLF001 (set by recall.hybrid, never serialized)
    if not indexed or indexed[1] is None:
        return {}
    return _terms_by_line(*indexed)


@lru_cache(maxsize=256)  # the hits in hand: `answers` and `_lines` both read a new hit's (read only)
def _terms_by_line(text: str, terms: str) -> dict[str, str]:
    lines, terms = text.split("\n"), terms.split("\n")
    return dict(zip(lines, terms)) if len(lines) == len(terms) else {}


def _known_terms(line: str, known: dict[str, str], tokenizer: str, transcript: bool) -> str:
    stored = known.get(unlabelled(line)) if known else None
    return f" {stored} " if stored is not None else _terms(line, tokenizer, transcript)


def _score(terms: str, asked: list[tuple[str, float]]) -> float:
    """The summed weights of the `asked` terms (each between spaces) that `terms` holds,
    exactly rounded (`math.fsum`: the sum does not depend on the order the terms come in)."""
    found = [weight for term, weight in asked if term in terms]
    return math.fsum(found) if found else 0.0


@memo(1 << 16)
def _terms(line: str, tokenizer: str, transcript: bool) -> str:
    """A line's search terms, each between spaces (a piece's place, `L45 part 2/5`, is no
    words of the message), kept across searches: a resident process meets the same candidate
    lines again and again."""
    return f" {' '.join(line_words(unlabelled(line), tokenizer, transcript))} "


@lru_cache(maxsize=None)
def _terms_of(tokenizer: str) -> Callable[[str], list[str]]:
    """A text's search terms as a list, one function per tokenizer (`answers` keeps what it
    reads of a hit per function, so every search passes the same one)."""
    return lambda text: _terms(text, tokenizer, True).split()


def matching_lines(result: SearchResult, weights: dict[str, float], tokenizer: str,
                   neighbours: int = 1, scores: list[float] | None = None) -> list[int]:
    """Offsets (in `result.text`) of the lines that match the query best (see KEEP) and up to
    `neighbours` lines either side of each (the answer to a question is often the next turn),
    best first (a block shows them in file order); the first lines when none matches;
    `scores`: `line_scores`, when known."""
    lines = _lines(result, tokenizer)
    scores = line_scores(result, weights, tokenizer) if scores is None else scores
    best = max(scores, default=0.0)
    if best > 0:
        matching = {i for i, value in enumerate(scores) if value > 0 and value >= KEEP * best}
        keep = matching.union(*(_shown_with(result.text, i, neighbours) for i in matching))

        def distance(j: int) -> int:
            return min(abs(j - i) for i in matching)
        # best first: the matching lines by score, then their neighbours, nearest first; code and
        # logs in a long message after its words (a listing is long and rarely the answer), a
        # replaced line after the current ones, so a tight budget drops them first
        return sorted(keep, key=lambda i: (lines[i][1], lines[i][2], distance(i), -scores[i], i))
    return [i for i, line in enumerate(lines) if line[0] is not None][:2]


def in_window(text: str, scores: list[float], window: tuple[date, date]) -> list[float]:
    """`scores` of a hit's lines with the digest facts dated outside the asked `window` at 0
    when a fact dated inside it matches: a chunk ranked for the days a question names shows its
    facts of those days (it was ranked for them), not another fact of it that fits a tight
    budget better."""
    dated = [iso_date(fact.group(1)) if (fact := FACT_DATE_RE.match(line)) else None for line in _split(text)]
    inside = [within(day, window) for day in dated]
    if not any(score > 0 and held for score, held in zip(scores, inside)):
        return scores
    return [0.0 if day is not None and not held else score for score, day, held in zip(scores, dated, inside)]


def context_of(text: str, i: int, neighbours: int) -> list[int]:
    """The lines shown beside line `i` of a hit: up to `neighbours` either side (the answer to
    a question is often the next turn), but a dated fact line (a digest node's `- DATE: ...`)
    stands alone: the facts beside it are other facts, not its context; only its own history
    (`  - until DATE: ...`) goes with it, and a history line goes with the fact it was replaced
    by (an old value is not shown without the current one)."""
    lines = _split(text)
    if HISTORY_DATE_RE.match(lines[i]):
        fact = next((j for j in range(i - 1, -1, -1) if not HISTORY_DATE_RE.match(lines[j])), None)
        return [fact, i] if fact is not None and FACT_DATE_RE.match(lines[fact]) else [i]
    if not FACT_DATE_RE.match(lines[i]):
        return [j for j in range(i - neighbours, i + neighbours + 1)
                if 0 <= j < len(lines) and not FACT_DATE_RE.match(lines[j])]
    history = []
    for j in range(i + 1, min(len(lines), i + 1 + neighbours)):
        if not HISTORY_DATE_RE.match(lines[j]):
            break
        history.append(j)
    return [i, *history]


@lru_cache(maxsize=1 << 14)  # the same candidate lines come back query after query
def _shown_with(text: str, i: int, neighbours: int) -> tuple[int, ...]:
    """The lines with content `context_of` shows with line `i` of `text`."""
    lines = _split(text)
    return tuple(j for j in context_of(text, i, neighbours) if 0 <= j < len(lines) and _content(lines[j]))


# the texts of the hits in hand (a cached text's lines are walked by every full collection)
@lru_cache(maxsize=256)
def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split("\n"))


@lru_cache(maxsize=4096)
def _repeated(text: str) -> tuple[int, ...]:
    """Offsets of the lines of `text` said more than once in it, word for word ("assistant:
    Noted." after every turn): boilerplate, context for the line beside it at most."""
    seen: dict[str, list[int]] = {}
    for n, line in enumerate(text.split("\n")):
        if _content(line):
            seen.setdefault(line, []).append(n)
    return tuple(sorted(n for same in seen.values() if len(same) > 1 for n in same))


def _content(line: str) -> bool:
    """A line that says something (not blank, a heading, a chunk's `[Part 2/3]` marker, or a
    digest node's `Related: [[a]], [[b]]`, which says nothing itself and matched only through
    its targets' names; the result carries its links anyway)."""
    return bool(line.strip()) and not line.startswith("#") and not line.startswith("[Part ") \
        and not (line.startswith(RELATED) and _RELATED_RE.match(line))


# the line the dream writes under a node (`dream.digest`): links to related nodes only
_RELATED_RE = re.compile(rf"{re.escape(RELATED)}\[\[[^\[\]]+\]\](?:, \[\[[^\[\]]+\]\])*\s*$")


_TAIL_LINK_RE = re.compile(r"\[\[([^\[\]#|]+)#(L\d+(?:-L\d+)?(?:,L\d+(?:-L\d+)?)*)\]\]\s*$")
_SOURCE_RE = re.compile(r" <- \[\[([^\[\]#|]+)\]\]$")
_FRAGMENT_RE = re.compile(r"^\[Part \d+/\d+ of L\d+\]$", re.MULTILINE)  # a piece of a long note line
_SHORT_REF_RE = re.compile(r"#(L\d+(?:-L\d+)?(?:,L\d+(?:-L\d+)?)*)$")


@memo(4096)
def _has_fragments(text: str) -> bool:
    """The hit holds a piece of a long note line (`[Part 2/3 of L12]`): read once per text."""
    return "[Part " in text and _FRAGMENT_RE.search(text) is not None


def _tail_link(line: str) -> re.Match | None:
    """`_TAIL_LINK_RE` at the end of `line`: a link holds no `[`, so it can only start at the
    last `[[` (a pattern search tried every position of the line)."""
    at = line.rfind("[[")
    return _TAIL_LINK_RE.match(line, at) if at >= 0 else None


def line_number(result: SearchResult, offset: int) -> int:
    """The file line of `result.text`'s line `offset`: a chunk's text is its breadcrumb (and a
    `[Part x/N]` marker) above the file's lines start..end, so it counts back from the end; the
    pieces of a long message (`assistant (L45 part 2/5): ...`) all stand for their log line."""
    return _line_number(result.path, result.end_line, result.text, offset)


def _line_number(path: str, end_line: int, text: str, offset: int) -> int:
    if " part " not in text or not path.endswith(".jsonl"):
        return end_line - (text.count("\n") - offset)  # the lines after it, without splitting the text
    return line_places(text, end_line)[offset][0]


def unit_of(result: SearchResult, offset: int) -> Unit:
    """Line `offset` of a hit as packing weighs it (`sequence.Unit`): a whole file line has a
    place, a piece of a message or of a long note line does not (its other pieces say other
    things); a note line's words are what a turn it cites must be inside to be left out."""
    offset, own, place, cites, said, turn, code = _unit(result.path, result.end_line, result.text, offset)
    return Unit(offset, own, place, frozenset(cites), said, turn, code)


@lru_cache(maxsize=1 << 15)
def _unit(path: str, end_line: int, text: str, offset: int) -> tuple:
    """`unit_of`'s fields, remembered across searches (a unit depends only on the hit's text and
    place) as a plain tuple of strings and numbers, which the garbage collector stops walking
    after its first look (a `Unit` or a set it walks in every full collection)."""
    line = _split(text)[offset]
    number = _line_number(path, end_line, text, offset)
    turn = path.endswith(".jsonl")
    whole = piece_of(line) is None if turn else not _has_fragments(text)
    tail = _tail_link(line)
    cites = tuple((tail.group(1), n) for a, b in parse_anchor(tail.group(2)) for n in range(a, b + 1)) \
        if tail else ()
    said = line_text(spoken(line) if turn else unlabelled(line)).lower()
    return (offset, (path, number, line), (path, number) if whole else None,
            cites, said, turn, turn and is_code(line))


def block(result: SearchResult, offsets: list[int], texts: dict[int, str] | None = None,
          section: bool = True) -> str:
    """Header and the chosen lines, a gap marked between non-adjacent ones (`texts`: a line shown
    in part, by offset: the sentences of it that answer, `…` for the others; `section`: the
    header names the innermost heading, else only the path and date). Provenance links
    are written once: when every chosen line ends with a link into one source (a daily note's
    session log), the header names it (`<- [[session/dialog/x.jsonl]]`) and each line keeps
    only its anchor (`#L13`); `expand` writes the links out again."""
    lines = _split(result.text)
    first, last = line_number(result, min(offsets)), line_number(result, max(offsets))
    # the innermost heading says what the lines are ("Facts", "Said by Melanie", a digest
    # node's subject); the note's title is in its path already
    name = result.heading_path.split(" > ")[-1].lstrip("#").strip() if result.heading_path and section else ""
    heading = f" {name}" if name else ""
    tails = [_tail_link(lines[o]) for o in offsets]
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
        line = texts.get(offset, lines[offset]) if texts else lines[offset]
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
           window: tuple[date, date] | None = None,
           citations: Callable[[str, int], frozenset] | None = None,
           floor: int | Callable[[str], int] = 0,
           line_floor: Callable[[str], int] | None = None,
           head: Head | None = None) -> Callable[[int], list[str]]:
    """`budget -> blocks` for one ranked list: blocks in rank order whose tokens (joined by blank
    lines) sum to at most the budget, and what a budget packs every larger budget packs too
    (`sequence.Sequence`); `weights`: query token -> idf (`term_weights`). A line already said
    (the same line, the daily line a digest fact cites or the turn that daily line cites, a turn
    a note line holds all the text of) is not shown twice (`citations(path, line)`: the lines a
    note line cites, from the index's links: how a digest line reaches the turn); a turn a note line only quotes in part is shown in its own words. Each hit's lines are chosen and each text counted
    once however many budgets are packed. The blocks chosen are then ordered newest first where
    their lines answer the same question (`timeline.newest_first`, `window`: the days asked about)."""
    pack_hits = hit_packer(results, weights, count, tokenizer, neighbours, window, citations, floor,
                           line_floor, head)
    return lambda budget: [text for _, text in pack_hits(budget)]


def hit_packer(results: list[SearchResult], weights: dict[str, float], count: Callable[[str], int],
               tokenizer: str = "bigram", neighbours: int = 1,
               window: tuple[date, date] | None = None,
               citations: Callable[[str, int], frozenset] | None = None,
               floor: int | Callable[[str], int] = 0,
               line_floor: Callable[[str], int] | None = None,
               head: Head | None = None) -> Callable[[int], list[tuple[int, str]]]:
    """`packer`, each block with the index of the hit it shows.

    With `head` (`answers.Head`), the context opens with the lines that answer the question,
    newest first (`answers`), in at most `head.tokens` (all of a smaller budget); the blocks
    fill the rest.

    The context at a budget is the longest prefix of one sequence of lines that fits, so what
    is packed at a budget is packed at every larger one. The sequence does not depend on the
    budget: it is the lines a greedy packer in rank order adds at each rung of a doubling
    ladder (`RUNGS`), each rung starting from the lines of the one below; a line too long for
    a rung waits for the next instead of holding back the shorter lines of the hits after it.
    `floor`: the tokens (by `count`) no block, a header and one line, costs fewer of, or that
    per hit's path (`tokens.block_floor` for cl100k: a long path makes a dear header): where
    less is left, a hit not yet shown is not looked at. `line_floor`: the tokens no text costs
    fewer of (`tokens.least_tokens` for cl100k): a new block showing a line costs at least the
    floor and the line's words before its links (a block may write them shorter), so where less
    is left that block is not made and counted."""
    count = lru_cache(maxsize=None)(count)
    asked = {t for t, w in weights.items() if w > 0}

    def measure(text: str) -> int:
        """`count(text)` from the counts of its lines, each counted once: exact for cl100k
        when no line is blank (a block has none), whose pre-tokenizer never joins a line end to
        the next line, only to the line's own trailing punctuation or spaces, which
        `line + "\\n"` keeps together (tests/test_packing.py)."""
        parts = text.split("\n")
        return sum(map(line_tokens, parts[:-1])) + count(parts[-1])

    def line_tokens(part: str) -> int:
        """`count(part + "\\n")`; a header `[PATH:L12-L14] ...` as its path's `[PATH:L`
        (counted once per path, which `tokens.block_floor` counts too) and the rest: the
        pre-tokenizer ends a piece between a letter and a digit and looks at nothing before a
        piece, so the header's pieces are the two parts' (tests/test_monotone_packing.py)."""
        at = part.find(":L") if part.startswith("[") else -1
        if at > 0 and part[at + 2:at + 3] in _DIGITS:
            return count(part[:at + 2]) + count(part[at + 2:] + "\n")
        return count(part + "\n")

    @lru_cache(maxsize=None)
    def scores_of(i: int) -> list[float]:
        scores = line_scores(results[i], weights, tokenizer)
        return scores if window is None else in_window(results[i].text, scores, window)

    @lru_cache(maxsize=None)
    def units_of(i: int) -> Units:
        offsets = matching_lines(results[i], weights, tokenizer, neighbours, scores_of(i))
        repeated = _repeated(results[i].text)
        opening = set(offsets).difference(repeated) if repeated else None
        unsaid = _unnoted(i, offsets) if head is not None else set()
        if unsaid:  # a turn capture found nothing in (a greeting, thanks) is context at most
            opening = (opening if opening is not None else set(offsets)) - unsaid
        if citations is None:
            return Units(offsets, lambda o: unit_of(results[i], o), opening)
        return Units(offsets, lambda o: through(unit_of(results[i], o)), opening)

    def _unnoted(i: int, offsets: list[int]) -> set[int]:
        """Offsets of hit i's transcript lines that no note line cites (None-cited logs: none)."""
        if not results[i].path.endswith(".jsonl"):
            return set()
        noted = head.noted(results[i].path)
        return set() if noted is None else {o for o in offsets if line_number(results[i], o) not in noted}

    def through(unit: Unit) -> Unit:
        """A note line citing another note's line cites what that line cites too."""
        further = frozenset().union(*(citations(path, line) for path, line in unit.cites
                                      if not path.endswith(".jsonl")))
        return replace(unit, cites=unit.cites | further) if further - unit.cites else unit

    @lru_cache(maxsize=None)
    def place_of(i: int) -> dict[int, int]:
        """Where each chosen line is shown: the lines are chosen in rank order (so what fits
        does not depend on dates), then shown newest first where they answer one question
        (only lines with query terms can; a hit with one of them keeps its order)."""
        offsets = sorted(units_of(i).offsets)  # shown in file order
        lines = results[i].text.split("\n")
        asking = [lines[o] if scores_of(i)[o] > 0 else "" for o in offsets]
        if sum(map(bool, asking)) < 2:
            return {o: n for n, o in enumerate(offsets)}
        order = newest_lines(asking, results[i].date, tokenizer, window, asked)
        return {offsets[k]: n for n, k in enumerate(order)}

    least = floor if callable(floor) else (lambda path: floor)

    def shown_least(line: str) -> int:
        """The fewest tokens `line` costs as a block shows it (before its links, which a block
        may write shorter), beyond the one the path's floor counts."""
        links = line.find("[[")
        return max(0, line_floor(line if links < 0 else line[:links]) - 1)

    def new_sequence() -> Sequence:
        if line_floor is None:
            return Sequence(len(results), lambda i: least(results[i].path))
        return Sequence(len(results), lambda i: least(results[i].path),
                        lambda i, unit: least(results[i].path) + shown_least(unit.own[2]))

    sequences: dict[tuple, Sequence] = {(): new_sequence()}

    def after(shown: tuple[tuple[int, int], ...]) -> Sequence:
        """The sequence of blocks after an opening that showed the lines `shown` (hit, offset):
        those lines count as said, so no block shows them again."""
        if shown not in sequences:
            sequence = sequences[shown] = new_sequence()
            for i, offset in shown:
                unit = unit_of(results[i], offset)
                sequence.add(unit if citations is None else through(unit))
        return sequences[shown]

    @lru_cache(maxsize=None)
    def step(i: int, chosen: tuple[int, ...]) -> tuple[str, int]:
        # one line needs no order (most hits a rung reaches are tried with one line only)
        shown = list(chosen) if len(chosen) == 1 else sorted(chosen, key=place_of(i).__getitem__)
        text = block(results[i], shown)
        return text, measure(text)

    found: list = []

    def render(i: int, group: list) -> str:
        """An opening block: a turn shown in part links to the whole of it."""
        lines, path = _split(results[i].text), results[i].path
        cut = {a.offset: lines[a.offset].replace(a.text, a.shown, 1)
               + (f" [[{path}#L{a.turn[1]}]]" if path.endswith(".jsonl") else "")
               for a in group if a.shown != a.text}
        return block(results[i], [a.offset for a in group], cut, section=False)

    def size(blocks: list[str]) -> int:
        """Tokens of blocks joined by blank lines, at most (each blank line counted apart)."""
        return sum(measure(text) for text in blocks) + 2 * len(blocks)

    def pack_with_head(budget: int) -> list[tuple[int, str]]:
        if not found:
            found.append(answers(results, weights, _terms_of(tokenizer), line_number, head, window,
                                 _indexed_lines))
        # one sequence for every budget: the whole opening (at most `head.tokens`), then the blocks;
        # a budget holds the longest prefix of it that fits, so a larger one loses nothing
        measured = lambda text: size(text.split("\n\n"))  # noqa: E731
        whole, shown = opening_blocks(found[0], render, measured, head.tokens, head.tokens)
        room = size([text for _, text in whole])
        if budget < room:
            return opening_blocks(found[0], render, measured, budget, head.tokens)[0] or pack_into(budget)
        left = budget - room
        packed = [*whole, *(pack_into(left, after(shown)) if left > 0 else [])]
        if len(packed) == len(whole):
            return packed
        # a block after the opening with a newer line answering the same question goes before it
        order = newest_first([text for _, text in packed], tokenizer, window, asked)
        return [packed[n] for n in order]

    def pack_into(budget: int, sequence: Sequence | None = None) -> list[tuple[int, str]]:
        sequence = sequence or sequences[()]
        while sequence.rung < budget:
            sequence.extend(next_rung(sequence.rung), units_of, step)
        texts: dict[int, str] = {}
        for i, text, total in sequence.steps:
            if total > budget:
                break
            texts[i] = text
        packed = sorted(texts.items())  # rank order
        order = newest_first([text for _, text in packed], tokenizer, window, asked)
        # a block that answers with a replaced value follows every block that does not, so the
        # context states current values first (what fits was decided above, in rank order)
        order.sort(key=lambda n: answers_with_replaced(packed[n][1], tokenizer, asked))
        return [packed[n] for n in order]
    return pack_with_head if head is not None and head.tokens > 0 else pack_into


def answers_with_replaced(text: str, tokenizer: str, asked: set[str]) -> bool:
    """Does a packed block show a replaced line holding one of the query's terms?"""
    return any(is_replaced(line) and asked & set(tokenize(searchable_text(unlabelled(line)), tokenizer))
               for line in text.split("\n")[1:])


def pack(results: list[SearchResult], weights: dict[str, float], budget: int,
         count: Callable[[str], int], tokenizer: str = "bigram", neighbours: int = 1,
         window: tuple[date, date] | None = None) -> list[str]:
    """The blocks of `results` that fit in `budget` tokens (see `packer`)."""
    return packer(results, weights, count, tokenizer, neighbours, window)(budget)
