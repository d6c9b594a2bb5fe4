"""The opening of a packed context (pure): the lines that answer the question, newest first.

An agent asking "where does the user live?" must get the current value before any older one,
whether or not the dream consolidated it. Search ranks chunks (transcript windows, notes,
digest nodes) by relevance; this module reads the lines of the ranked candidates again, one by
one, and picks the ones that answer the question:
- a line scores BM25 over the candidate lines for the question's terms (who said it counts as
  the index counts a speaker; a name said to the listener does not count; a piece of a long
  message also scores `CONTEXT` for the question's terms its other pieces hold; an assistant's
  line scores `ASSISTANT` of it unless the question names the assistant);
- the lines scoring `BAND` of the best and holding a word of the question (not only its
  speaker) answer it, but a turn capture found nothing in (a greeting, thanks: no note line
  cites it), code, and a line the digest replaced do not, nor an assistant line echoing the
  words of a user line of that day;
- a budget takes them the best and the newest (of those scoring `NEWEST_BAND` of the best) in
  turn, each best one with the reply of another person to it (not the assistant's), then the
  later lines naming a value of the best line (`values`: "we moved out of Leeds" after "I live
  in Leeds"; `recall.follow_values` searches for them);
- what a budget takes is shown newest first, each line with its date and source, so an older
  value follows a newer one as history, never alone when the newer one is among them; a line
  is cut to the sentences holding a question's word and the `AFTER` sentences after each.
A question asked in the past tense ("when did ...", `asks_now`) is not opened this way: it asks
about an event, which ranked evidence with its neighbours answers better (`recall.answer_head`).
"""

from __future__ import annotations

import re
from itertools import zip_longest
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from datetime import date

from memflow.schemas.recall import SearchResult
from memflow.tasks.ground.markdown import FACT_DATE_RE, HISTORY_DATE_RE, iso_date, searchable_text
from memflow.tasks.ground.speakers import MARK, speaker_tokens, split_line
from memflow.tasks.ground.tokenize import HAN_RE, tokenize
from memflow.tasks.ground.transcript import is_code, piece_of, unmarked
from memflow.tasks.recall.replaced import is_replaced, unlabelled
from memflow.tasks.recall.timeline import within

AFTER = 2  # sentences kept after one holding a question's term (the value follows its subject)
NEWEST_BAND = 0.7  # of the best line's score: the answers the newest of which goes in early
BAND = 0.3  # of the best line's score: the lines that answer the question
K1, B = 1.2, 0.75  # BM25 over the candidate lines
FOLLOW = 1  # the best lines whose values are followed forward
CONTEXT = 0.5  # of a term's weight, for a piece whose message holds it in another piece
ASSISTANT = 0.25  # an assistant's line scores this share: memory is of what the user said
ASSISTANT_MARKS = frozenset(speaker_tokens("assistant"))  # a question naming the assistant as its speaker

_SENTENCE_RE = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
_TAIL_LINK_RE = re.compile(r"\s*\[\[([^\[\]#|]+)#(L\d+)[^\[\]]*\]\]\s*$")
_BULLET_RE = re.compile(r"^\s{0,1}[-*+]\s+")
_SET_OFF = (",", "，")
# The past forms of the auxiliaries and the copula (a closed class): a question asked with one
# ("When did she paint it?", "Where was he living?") asks about an event or a past state.
_PAST_AUXILIARIES = frozenset({"was", "were", "did", "had", "didn't", "wasn't", "weren't", "hadn't"})
_PRESENT_AUXILIARIES = frozenset({"is", "are", "am", "do", "does", "has", "have", "can", "isn't", "aren't",
                                  "don't", "doesn't", "hasn't", "haven't", "can't"})
_WORD_RE = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")


@dataclass(frozen=True)
class Head:
    """What the opening of a context needs from the workspace: `idf(term)` (which terms are
    values), `noted(log path)` (the turns of a session log that a note line cites: the ones
    capture found a statement in; None when no note cites that log), `tokens` (the most the
    opening takes), `as_of` (no line said later opens it), `digest` (the folder of the dream's
    nodes, whose facts restate daily lines and turns) and `cites(path, line)` (the places a note
    line's provenance links cite: how a digest fact reaches the turn it restates). `logs`, when
    given: `noted` of many logs at once (what a search meeting ~50 new hits reads in one go)."""
    idf: Callable[[str], float]
    noted: Callable[[str], frozenset[int] | None]
    tokens: int
    as_of: date | None = None
    digest: str = "digest"
    cites: Callable[[str, int], frozenset] | None = None
    logs: Callable[[list[str]], dict[str, frozenset[int] | None]] | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """One answering line: where it is (`hit`: the result's index, `offset`: its line in the
    hit's text), its day, the turn it is (path, line), its score, and what of it is shown
    (`shown`: the sentences holding one of the `asked` terms, `…` for the others; the whole
    line's words when all are), worked out when first asked for: an opening shows a few of
    the twenty-odd answers a search finds."""
    hit: int
    offset: int
    day: date | None
    turn: tuple[str, int]
    score: float
    text: str
    asked: frozenset[str] = frozenset()
    terms_of: Callable[[str], list[str]] | None = None

    @property
    def shown(self) -> str:
        return _shown(self.text, self.asked, self.terms_of) if self.terms_of is not None else self.text


@dataclass(frozen=True, slots=True)
class _Line:
    hit: int
    offset: int
    day: date | None
    who: str
    text: str
    source: str
    turn: tuple[str, int]
    counts: dict[str, int]  # its terms and how often each occurs (shared across searches: read only)
    length: int
    part: int = 0  # a piece of a long message: which one (the turn is the whole message)

    @property
    def key(self) -> tuple:
        return (*self.turn, self.part)


def asks_now(question: str) -> bool:
    """Does a question ask what holds now? Its first auxiliary or copula says: a past form
    ("did", "was") asks about an event or a past state, where ranked evidence with its context
    serves better than the newest lines; a present form, a contracted one ("what's") or none
    (Chinese) asks what holds now."""
    for word in _WORD_RE.findall(question.lower().replace("’", "'")):
        if word in _PAST_AUXILIARIES:
            return False
        if word in _PRESENT_AUXILIARIES or word.endswith("'s"):
            return True
    return True


def answers(results: list[SearchResult], weights: dict[str, float], terms_of: Callable[[str], list[str]],
            line_of: Callable[[SearchResult, int], int], head: Head,
            window: tuple[date, date] | None = None,
            indexed: Callable[[SearchResult], dict[str, str]] | None = None) -> list[Answer]:
    """The lines of `results` that answer the question (see the module), in the order a budget
    takes them: the best and the newest in turn, then the lines naming a value of the best.
    `weights`: query term -> idf; `terms_of(text)`: a text's search terms; `line_of(hit, offset)`:
    the file line of a hit's line `offset` (what each hit's lines are read as is kept across
    searches for the same two functions: pass the same ones each time); `indexed(hit)`: its
    lines as indexed -> the terms the index stored for each (what `terms_of` gives a line); `head`: what the workspace says (`Head`);
    `window`: the days the question asks about (only lines said then answer it, when one of
    them holds a term of it)."""
    asked = frozenset(t for t, w in weights.items() if w > 0)
    logs = [result.path for result in results if result.path.endswith(".jsonl")]
    noted = head.logs(logs) if head.logs is not None else {path: head.noted(path) for path in logs}
    lines = _one_per_turn([line for i, result in enumerate(results)
                           for line in _candidates(i, result, line_of, head, terms_of, indexed, noted)])
    lines = _evidence_held(lines, results, head)
    if window is not None:
        inside = [line for line in lines if line.day and within(line.day, window)]
        lines = inside if any(asked.intersection(line.counts) for line in inside) else lines
    assistant = 1.0 if asked & ASSISTANT_MARKS else ASSISTANT  # unless the question names it
    scored = _bm25(lines, weights, assistant)
    # a digest fact that another candidate says in full (the turn it came from, `_not_restated`)
    # is shown once, as that line: it neither answers nor sets the bar of the band (it scores
    # higher for being short, and set a bar a newer long turn did not reach)
    answering = [line for line in lines if scored[line.key] > 0]
    node = f"{head.digest}/"
    said_by = _words_of(answering) if any(line.source.startswith(node) for line in answering) else []
    restated = {line.key for line, text in said_by
                if line.source.startswith(node) and _restated_by(line, text, said_by)}
    best = max((score for key, score in scored.items() if key not in restated), default=0.0)
    if best <= 0:
        return []
    said = frozenset(t for t in asked if not t.startswith(MARK))  # what is asked, not who said it
    chosen = _no_echoes([line for line in lines if scored[line.key] >= BAND * best and line.key not in restated
                         and said.intersection(line.counts)], asked, assistant < 1.0)
    by_score = _with_replies(sorted(chosen, key=lambda x: -scored[x.key]), lines)
    by_day = sorted((x for x in chosen if scored[x.key] >= NEWEST_BAND * best),
                    key=lambda x: (x.day or date.min, x.turn), reverse=True)
    order = dict.fromkeys(line.key for pair in zip_longest(by_score, by_day) for line in pair if line)
    followed = _followed(by_score[:FOLLOW], lines, set(order), asked, head.idf)
    order.update(dict.fromkeys(line.key for line in followed))
    lines_of = {line.key: line for line in _not_restated(by_score + followed)}
    return [Answer(line.hit, line.offset, line.day, line.turn, scored[line.key], line.text, asked, terms_of)
            for line in map(lines_of.get, order) if line]


_LINK_RE = re.compile(r"\[\[([^\[\]#|]+)#L(\d+)")


def _evidence_held(lines: list[_Line], results: list[SearchResult], head: Head) -> list[_Line]:
    """`lines` without the digest facts whose evidence another candidate line is (the daily
    line a fact cites, or the turn that daily line cites): that line answers for the fact, in
    the words it was said. A fact reworded or split by the dream ("They take me to alternate
    realities" from "... and take me to alternate realities") is not held word for word by its
    turn, so it took an opening slot of its own, and its shortness lowered the mean length every
    other line is scored against: the dream moved which lines opened a context without adding
    one."""
    node = f"{head.digest}/"
    if not any(line.source.startswith(node) for line in lines):
        return lines
    held = {line.turn for line in lines if not line.source.startswith(node)}
    held.update((source[:at], int(source[at + 2:])) for line in lines if not line.source.startswith(node)
                for source in [line.source] for at in [source.rfind("#L")])
    return [line for line in lines if not line.source.startswith(node)
            or not _cited_by(results[line.hit].text.split("\n")[line.offset], head) & held]


def _cited_by(text: str, head: Head) -> set[tuple[str, int]]:
    """The places a line's provenance links cite, and the places those cite in turn."""
    places = {(path, int(n)) for path, n in _LINK_RE.findall(text)}
    if head.cites is not None:
        for path, n in list(places):
            places.update(head.cites(path, n))
    return places


def _with_replies(ranked: list[_Line], lines: list[_Line]) -> list[_Line]:
    """`ranked`, each line followed by the next line of its hit when another speaker than its
    own, and not the assistant, said it: in a conversation between people the answer is often
    the reply ("What got you into running?" / "I've been running farther to de-stress"); an
    assistant's reply is advice about what the user said, not what they said."""
    at = {(line.hit, line.offset): line for line in lines}
    out = []
    for line in ranked:
        out.append(line)
        reply = at.get((line.hit, line.offset + 1))
        if reply is not None and reply.who.lower() not in ("assistant", line.who.lower()):
            out.append(reply)
    return out


def _bm25(lines: list[_Line], weights: dict[str, float], assistant: float = ASSISTANT) -> dict[tuple, float]:
    """Each line's BM25 score for the question among the candidate lines (their lengths), an
    assistant's line at `assistant` of it: memory is of what the user said. A piece of a long
    message also scores `CONTEXT` of the weights of the question's terms that only the other
    pieces of its message hold ("Back on Stakpraith today" opens the message whose fourth piece
    says "Niflund processes 2008 records per batch")."""
    mean = sum(line.length for line in lines) / max(len(lines), 1) or 1.0
    message: dict[tuple, set[str]] = {}
    for line in lines:
        if line.part:
            message.setdefault(line.turn, set()).update(line.counts)
    out = {}
    for line in lines:
        norm = K1 * (1 - B + B * line.length / mean)
        score = sum(w * line.counts[t] * (K1 + 1) / (line.counts[t] + norm)
                    for t, w in weights.items() if t in line.counts)
        if line.part:
            score += CONTEXT * sum(w for t, w in weights.items()
                                   if t not in line.counts and t in message[line.turn])
        out[line.key] = score * (assistant if line.who.lower() == "assistant" else 1.0)
    return out


def _candidates(i: int, result: SearchResult, line_of: Callable[[SearchResult, int], int], head: Head,
                terms_of: Callable[[str], list[str]],
                indexed: Callable[[SearchResult], dict[str, str]] | None = None,
                logs: dict[str, frozenset[int] | None] | None = None) -> list[_Line]:
    """Each line of hit i that is a transcript turn capture found a statement in (when its log
    was captured into notes), a daily line or a current digest fact; `logs`: `head.noted` of the
    hits' logs, when read already."""
    transcript = result.path.endswith(".jsonl")
    noted = (logs[result.path] if logs is not None and result.path in logs else head.noted(result.path)) \
        if transcript else None
    return [_Line(i, *read) for read in _readings(result, line_of, terms_of, indexed)
            if not (head.as_of and read[1] and read[1] > head.as_of or noted is not None and read[5][1] not in noted)]


# (line_of, terms_of) -> (hit's path, text, date, end line) -> its lines as `_readings` reads them
_READINGS: dict[tuple, dict[tuple, tuple[tuple, ...]]] = {}
_READINGS_KEPT = 1 << 13


def _readings(result: SearchResult, line_of: Callable[[SearchResult, int], int],
              terms_of: Callable[[str], list[str]],
              indexed: Callable[[SearchResult], dict[str, str]] | None = None) -> tuple[tuple, ...]:
    """`_Line`'s fields but the hit's index, for each line of a hit that may answer, kept
    across searches (a resident process meets the same candidates query after query, and
    reading a line's speaker, date and terms again was a third of a packed search): they depend
    only on the hit's text and place and the two functions (`packing` passes the same ones
    for a tokenizer every time). Held as tuples of strings, numbers, dates and plain dicts of
    them, which the garbage collector stops walking (`ground.memo`); the oldest go first when
    `_READINGS_KEPT` hits are held. A transcript turn that is its whole line (no name said to
    the listener, not a piece) takes the terms the index stored for that line (`indexed`: a
    hit's lines as indexed -> their terms, what `terms_of` gives each): tokenizing every line
    of every new candidate was most of a search meeting new hits."""
    table = _READINGS.setdefault((line_of, terms_of), {})
    key = (result.path, result.text, result.date, result.end_line)
    found = table.get(key)
    if found is not None:
        return found
    out = []
    transcript = result.path.endswith(".jsonl")
    known = indexed(result) if indexed else {}
    for offset, line in enumerate(result.text.split("\n")):
        if not line.strip() or line.startswith(("#", "[")) or is_replaced(line) or HISTORY_DATE_RE.match(line):
            continue
        read = _read(result, line, line_of(result, offset))
        if read is None:
            continue
        day, who, text, source, turn = read
        said = f"{who}: {_unaddressed(text)}" if who else _unaddressed(text)
        if transcript:  # the whole turn as indexed: its terms are stored
            stored = known.get(said) if said == line else None
            terms = stored.split() if stored is not None else terms_of(said)
        else:  # a note line: what it says is its stored terms without its bullet's and date's
            stored = known.get(line)
            terms = (stored is not None and said_terms(line, said, stored)) or terms_of(said)
        piece = piece_of(line) if transcript else None
        counts: dict[str, int] = {}  # as `dict(Counter(terms))`, at a fraction of its cost on a dozen terms
        for term in terms:
            counts[term] = counts.get(term, 0) + 1
        out.append((offset, day, who, text, source, turn, counts, len(terms), piece[1] if piece else 0))
    if len(table) >= _READINGS_KEPT:
        del table[next(iter(table))]
    found = table[key] = tuple(out)
    return found


def said_terms(line: str, said: str, stored: str) -> list[str] | None:
    """The terms of `said` (what a note `line` says: its words after its bullet, date and
    speaker, before its tail link; `_read`) as a search term list gives them to a transcript
    line (`speakers.line_words(said, kind, True)`), read off `stored`, the terms the index stored
    for the whole line (`line_words(line, kind)`), or None where that cannot be told.

    Both are the tokens of a text then the speaker's marked tokens. Where the two find the same
    speaker and the line's text, link taken off, is some head ending in a space then `said`'s
    text (and no Han run: its tokens would come first), the line's tokens are the head's, then
    the text's (no word spans a space), so `said`'s are `stored` without the head's
    (`tests/test_line_terms.py` compares both on random note lines)."""
    if not line.isascii() and HAN_RE.search(line) or "[[" in said or unlabelled(said) != said or unmarked(said) != said:
        return None
    who, rest = split_line(searchable_text(line))
    said_by, text = split_line(said, True)
    if said_by != who:
        return None
    core, text = rest.rstrip(), text.rstrip()
    start = len(core) - len(text)
    if not text or start <= 0 or not core.endswith(text) or not core[start - 1].isspace():
        return None
    head = _head_tokens(core[:start])
    terms = stored.split()
    return terms[len(head):] if terms[:len(head)] == head else None


_HEADS: dict[str, list[str]] = {}


def _head_tokens(head: str) -> list[str]:
    """A note line's bullet and date (`- `, `- 2024-05-01: `): a few kinds in a workspace."""
    if head not in _HEADS:
        if len(_HEADS) >= 4096:
            _HEADS.clear()
        _HEADS[head] = tokenize(head)
    return _HEADS[head]


def _unaddressed(text: str) -> str:
    """`text` without the names said to the listener ("Wow, Melanie, that's great!", "Hey
    Hannah, ...", "Thanks, Jo!"): a capitalised word set off by punctuation, opening a sentence
    or after its first word or a comma. Who is addressed is not what a line is about; who said
    it is (the speaker counts as the index counts it). The words come back joined by single
    spaces; a text with no name said is read without a loop over its words (`_names_said`),
    and returned as it is when already spaced so."""
    if not _names_said(text):  # then it has no space at either end
        if "  " not in text and text.isprintable():  # single-spaced: a space but " " is unprintable
            return text
        spaced = " ".join(text.split())
        return text if spaced == text else spaced
    out = []
    for sentence in _SENTENCE_RE.split(text):
        words = sentence.split()
        # only a word ending in punctuation can be a name said to the listener: most are not
        out.append(" ".join(word for n, word in enumerate(words)
                            if word[-1] not in _ADDRESS_ENDS or not _addressed(word, n, words)))
    return " ".join(out)


def _names_said(text: str) -> bool:
    """Might `text` say a name to the listener (`_addressed`)? True for a text with a CJK
    sentence end (the split cuts it without a space) or a space at either end (an empty
    sentence); else a look at each word ending in `_ADDRESS_ENDS`, not a loop over every word: a
    sentence starts at the text's start or after a word ending in `.`, `!` or `?` (where the
    split cuts), so a word's place in its sentence is read off the two words before it."""
    if "。" in text or "！" in text or "？" in text or text != text.strip():  # a CJK sentence end
        return True
    last = len(text) - 1
    for end in _ADDRESS_ENDS:  # each word ending in one (`str.find` scans faster than a pattern)
        at = text.find(end)
        while at >= 0:
            if at == last or text[at + 1].isspace():
                *before, word = text[:at + 1].rsplit(None, 2)[-3:]  # it and the two words before it
                if _name_said(word):
                    opens = not before or before[-1][-1] in _STOPS  # the first word of its sentence
                    second = not opens and (len(before) < 2 or before[0][-1] in _STOPS)
                    if opens or second or before[-1].endswith(_SET_OFF):
                        return True
            at = text.find(end, at + 1)
    return False


_STOPS = ".!?"  # the sentence ends `_SENTENCE_RE` cuts after a space (its CJK ones are not here)
_ADDRESS_ENDS = ",!?.，~…"


def _addressed(word: str, n: int, words: list[str]) -> bool:
    return _name_said(word) and (n <= 1 or words[n - 1].endswith(_SET_OFF))


def _name_said(word: str) -> bool:
    """A capitalised word set off by punctuation: a name, if said to the listener."""
    bare = word.rstrip(_ADDRESS_ENDS)
    return bare != word and bare.isalpha() and bare[:1].isupper() and bare[1:].islower()


def _read(result: SearchResult, line: str, number: int) -> tuple | None:
    """(day, who, text, source link, turn) of one line of a hit, None for code and headers."""
    if result.path.endswith(".jsonl"):
        if is_code(line):
            return None
        bare = unmarked(line)
        at = bare.find(": ")
        who, text = (bare[:at], bare[at + 2:]) if at > 0 else ("", bare)
        whole = piece_of(line)
        number = whole[0] if whole else number
        return result.date, who, text.strip(), f"{result.path}#L{number}", (result.path, number)
    if not _BULLET_RE.match(line):
        return None
    fact = FACT_DATE_RE.match(line)
    day = iso_date(fact.group(1)) if fact else result.date
    body = line[fact.end():] if fact else _BULLET_RE.sub("", line, count=1)
    link = _tail_link(body)
    text = body[:link.start()] if link else body
    at = text.find(": ")
    who = text[:at] if 0 < at < 30 and " " not in text[:at].strip() else ""
    text = text[at + 2:] if who else text
    turn = (link.group(1), int(link.group(2)[1:])) if link and link.group(1).endswith(".jsonl") \
        else (result.path, number)
    return day, who, text.strip(), f"{result.path}#L{number}", turn


def _tail_link(body: str) -> re.Match | None:
    """`_TAIL_LINK_RE.search(body)`, tried where it can only start: a link holds no `[`, so at
    the last `[[`, or at the spaces before it (a search tried every position of the line)."""
    at = body.rfind("[[")
    if at < 0:
        return None
    while at and body[at - 1].isspace():
        at -= 1
    return _TAIL_LINK_RE.match(body, at)


def _followed(sources: list[_Line], lines: list[_Line], taken: set, asked: frozenset[str],
              idf: Callable[[str], float]) -> list[_Line]:
    """The lines said after one of `sources` that name one of its values (`values`): "we
    moved from Leeds" after "I live in Leeds"; newest first."""
    out = []
    for source in sources:
        named = set(values(source.counts, asked, idf))
        out += [line for line in lines if line.key not in taken and source.day and line.day
                and line.day > source.day and named.intersection(line.counts)]
        taken.update(line.key for line in out)
    return sorted(out, key=lambda x: (x.day, x.turn), reverse=True)


def values(terms, asked, idf: Callable[[str], float]) -> list[str]:
    """The values a line answering a question names: the rarer half (in the workspace) of its
    terms that the question does not hold, rarest first (a place, a name, a number say more
    than the words around them)."""
    rarest = sorted((t for t in dict.fromkeys(terms) if t not in asked and idf(t) > 0), key=idf, reverse=True)
    return rarest[:max(1, (len(rarest) + 1) // 2)]


def _not_restated(lines: list[_Line]) -> list[_Line]:
    """Without a line whose words another line holds all of (a digest fact and the turn it came
    from, an assistant quoting the user word for word): one of them is said once; of lines
    saying the same words, the one read first (of the higher-ranked hit, then the earlier line:
    their places decide, never where each object happens to live in memory, so a search
    answers the same whatever the process did before it)."""
    said = _words_of(lines)
    return [line for line, text in said if not _restated_by(line, text, said)]


def _words_of(lines: list[_Line]) -> list[tuple[_Line, str]]:
    return [(line, " ".join(line.text.lower().split()).rstrip(".!")) for line in lines]


def _restated_by(line: _Line, text: str, said: list[tuple[_Line, str]]) -> bool:
    """Does another of `said` hold all the words of `line` (`text`: its words, `_words_of`)?"""
    return any(other is not line and text in words
               and (text != words or (other.hit, other.offset) < (line.hit, line.offset))
               for other, words in said)


def _one_per_turn(lines: list[_Line]) -> list[_Line]:
    """One line per turn (per piece of a long one): of a daily line and the turn it cites, the
    turn (its whole text)."""
    best: dict[tuple, _Line] = {}
    for line in lines:
        key = line.key
        held = best.get(key)
        if held is None or (line.source.endswith(".jsonl#L%d" % line.turn[1]) and not held.source.endswith(
                ".jsonl#L%d" % held.turn[1])):
            best[key] = line
    return list(best.values())


def _no_echoes(lines: list[_Line], asked: frozenset[str], drop: bool = True) -> list[_Line]:
    """Without an assistant line whose question terms a user line of the same day holds too
    (all of them when not `drop`: the question asks what the assistant said)."""
    if not drop:
        return lines
    said: dict[date | None, set[str]] = {}
    for line in lines:
        if line.who.lower() != "assistant":
            said.setdefault(line.day, set()).update(asked.intersection(line.counts))
    return [line for line in lines if line.who.lower() != "assistant"
            or not asked.intersection(line.counts) <= said.get(line.day, set())]


@lru_cache(maxsize=1024)  # an opening renders each answer it tries again with every one after it
def _shown(text: str, asked: frozenset[str], terms_of: Callable[[str], list[str]]) -> str:
    return _sentences(text, asked, terms_of)


def _sentences(text: str, wanted: frozenset[str], terms_of: Callable[[str], list[str]]) -> str:
    """The sentences of `text` holding a wanted term and the sentence after each (a value is
    often said just after its subject: "Dad's surgery got pushed back. It's April 2 now."), `…`
    where others were left out; the whole text when it is short or no sentence holds one."""
    parts = [p for p in _SENTENCE_RE.split(text) if p.strip()]
    if len(parts) < 3 and len(text) <= 300:
        return text
    matching = [n for n, part in enumerate(parts) if set(terms_of(part)) & wanted]
    if not matching:
        return text
    keep = sorted({m for n in matching for m in range(n, n + 1 + AFTER) if m < len(parts)})
    out, previous = [], -1
    for n in keep:
        if n != previous + 1:
            out.append("…")
        out.append(parts[n])
        previous = n
    if previous != len(parts) - 1:
        out.append("…")
    return " ".join(out)


def opening_blocks(found: list[Answer], render: Callable[[int, list[Answer]], str], count: Callable[[str], int],
            room: int, most: int) -> tuple[list[tuple[int, str]], tuple[tuple[int, int], ...]]:
    """The blocks that open a context of `room` tokens: the answers in `found`'s order while
    the blocks they make fit, shown newest first, a block for each run of answers from one hit
    (`render(hit, answers)`); each block with its hit, and the (hit, offset) of every line
    shown. An answer that alone takes more than `most` tokens (the most an opening takes) is
    passed over; any other ends the opening where it does not fit, so what a budget opens with,
    every larger budget opens with too."""
    taken: list[Answer] = []
    shown: list[tuple[int, str]] = []
    for answer in found:
        if count(render(answer.hit, [answer])) > most:
            continue
        blocks = _blocks(taken + [answer], render)
        if count("\n\n".join(text for _, text in blocks)) > room:
            break
        taken.append(answer)
        shown = blocks
    return shown, tuple(sorted((a.hit, a.offset) for a in taken))


def _blocks(taken: list[Answer], render: Callable[[int, list[Answer]], str]) -> list[tuple[int, str]]:
    runs: list[tuple[int, list[Answer]]] = []
    for answer in sorted(taken, key=lambda a: (a.day or date.min, a.turn), reverse=True):
        if runs and runs[-1][0] == answer.hit:
            runs[-1][1].append(answer)
        else:
            runs.append((answer.hit, [answer]))
    return [(hit, render(hit, group)) for hit, group in runs]
