"""Time in recall (pure): the date each line states, memory as it stood on a day, and the time
window a question names.

A digest fact line says when it was stated (`- 2026-06-09: I live in Lisbon. [[...]]`); a history
line says until when a replaced value held (`  - until 2026-06-09: I live in Berlin.
[[daily/2026-06-01/...#L3]]`), and its source link's path says since when. `as_of_text` turns a
chunk into what it said on a day: facts stated later hidden, a value replaced later shown as the
current one. `window_text` keeps the fact lines dated inside a window. `time_window` resolves
"yesterday", "last week", "in May", "3 days ago", "昨天", "上周", "5月" against a day (the
caller's today in the workspace timezone) into (first, last) days. `newest_first` orders packed
blocks so that of lines answering the same question (same frame, another value) the newest
comes first, the older ones after it as dated history.
"""

from __future__ import annotations

import calendar
import re
from functools import lru_cache
from datetime import date, timedelta

import numpy as np

from memflow.tasks.ground.markdown import FACT_DATE_RE as _FACT_RE
from memflow.tasks.ground.markdown import HISTORY_DATE_RE as _HISTORY_RE
from memflow.tasks.ground.markdown import iso_date as _day
from memflow.tasks.ground.markdown import NOT_AN_ABBREVIATION, line_date, line_text, searchable_text
from memflow.tasks.ground.memo import memo
from memflow.tasks.ground.tokenize import tokenize
from memflow.tasks.ground.transcript import unmarked
from memflow.tasks.recall.replaced import is_replaced, unlabelled

_SOURCE_DATE_RE = re.compile(r"\[\[[^\]]*?(\d{4}-\d{2}-\d{2})[^\]]*\]\]")


def as_of_text(text: str, day: date) -> str | None:
    """`text` as it stood on `day`: fact lines stated after it left out; a history line whose
    value still held then (until after `day`, stated on or before it) shown as a current fact of
    its source's date; a chunk whose dated lines were all later gives None. Undated lines stay."""
    out, dated, kept = [], 0, 0
    for line in text.split("\n"):
        if match := _FACT_RE.match(line):
            dated += 1
            if _day(match.group(1)) and _day(match.group(1)) > day:
                out.append("")  # left blank: every other line keeps its file line number
                continue
        elif match := _HISTORY_RE.match(line):
            dated += 1
            until = _day(match.group(1))
            if until and until > day:  # still the value then
                since = _SOURCE_DATE_RE.search(line)
                stated = _day(since.group(1)) if since else None
                if stated and stated > day:
                    out.append("")
                    continue
                line = f"- {stated.isoformat() if stated else '?'}: " + line[match.end():]
        kept += line_date(line) is not None
        out.append(line)
    return "\n".join(out) if kept or not dated else None


def window_text(text: str, since: date | None, until: date | None) -> str | None:
    """The lines of `text` dated inside [since, until] (undated lines stay; one outside is left
    blank, so a hit's lines keep their file line numbers, counted back from its end line): a
    fact line by the day it states, a history line by the days its value held (its source's
    date to its `until`); None when it has dated lines and none is inside."""
    out, dated, kept = [], 0, 0
    for line in text.split("\n"):
        day = line_date(line)
        if day is not None:
            dated += 1
            first = day
            if _HISTORY_RE.match(line) and (source := _SOURCE_DATE_RE.search(line)):
                first = min(day, _day(source.group(1)) or day)
            if (since and day < since) or (until and first > until):
                out.append("")  # left blank, not taken out: every other line keeps its number
                continue
            kept += 1
        out.append(line)
    return "\n".join(out) if kept or not dated else None


_MONTHS = {name: n for n, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name: n for n, name in enumerate(calendar.month_abbr) if name})
_EN_MONTH_RE = re.compile(r"\b(?:in|during|since|last|this)\s+(" + "|".join(_MONTHS) + r")\b", re.I)
_ZH_MONTH_RE = re.compile(r"(去年|今年)?(\d{1,2})月")
_NAME = "(" + "|".join(_MONTHS) + r")\.?"
_ISO_DAY_RE = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")
_DAY_MONTH_YEAR_RE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+" + _NAME + r",?\s+(\d{4})\b", re.I)
_MONTH_DAY_YEAR_RE = re.compile(r"\b" + _NAME + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.I)
_MONTH_YEAR_RE = re.compile(r"\b" + _NAME + r",?\s+(\d{4})\b", re.I)
_YEAR_RE = re.compile(r"\b(?:in|during|of|throughout)\s+(\d{4})\b", re.I)
_ZH_DATE_RE = re.compile(r"(\d{4})年(?:(\d{1,2})月(?:(\d{1,2})[日号])?)?")
_AGO_RE = re.compile(r"\b(\d+|a|one|two|three|four|five|six|seven)\s+(day|week|month)s?\s+ago\b", re.I)
_WORDS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}


def _month(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _week(day: date) -> tuple[date, date]:
    start = day - timedelta(days=day.weekday())
    return start, start + timedelta(days=6)


def named_dates(question: str) -> tuple[date, date] | None:
    """The days a question names with a year: a day ("on 16 November, 2023", "May 7th, 2022",
    "2023-11-16", "2023年11月16日"), a month ("in January 2022", "2022年1月") or a year ("in
    2022", "2022年"); None when it names none (or an impossible date)."""
    def month(name: str) -> int:
        return _MONTHS[name.capitalize()]

    try:
        if m := _ISO_DAY_RE.search(question):
            day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            return day, day
        if m := _DAY_MONTH_YEAR_RE.search(question):
            day = date(int(m.group(3)), month(m.group(2)), int(m.group(1)))
            return day, day
        if m := _MONTH_DAY_YEAR_RE.search(question):
            day = date(int(m.group(3)), month(m.group(1)), int(m.group(2)))
            return day, day
        for m in _MONTH_YEAR_RE.finditer(question):  # a name or after a preposition, not "may 2000 times"
            if m.group(1)[0].isupper() or re.search(r"\b(?:in|during|since|of|by)\s+$", question[:m.start()], re.I):
                return _month(int(m.group(2)), month(m.group(1)))
        if m := _ZH_DATE_RE.search(question):
            year = int(m.group(1))
            if m.group(3):
                day = date(year, int(m.group(2)), int(m.group(3)))
                return day, day
            return _month(year, int(m.group(2))) if m.group(2) else (date(year, 1, 1), date(year, 12, 31))
        if m := _YEAR_RE.search(question):
            year = int(m.group(1))
            return date(year, 1, 1), date(year, 12, 31)
    except ValueError:  # 31 February, month 13: no window rather than a wrong one
        return None
    return None


def time_window(question: str, today: date) -> tuple[date, date] | None:
    """The days a question's time words name, resolved against `today`; None when it names none.
    A date with its year is that day, month or year (`named_dates`); "last/this week" are
    Monday-Sunday weeks; a month without a year is its latest occurrence not after today."""
    named = named_dates(question)
    if named:
        return named
    q = question.lower()
    fixed = [(("today", "今天"), 0), (("yesterday", "昨天"), 1), (("day before yesterday", "前天"), 2)]
    for words, back in sorted(fixed, key=lambda f: -f[1]):
        if any(re.search(rf"(?<![a-z]){w}(?![a-z])", q) for w in words):
            day = today - timedelta(days=back)
            return day, day
    if m := _AGO_RE.search(q):
        n = int(m.group(1)) if m.group(1).isdigit() else _WORDS[m.group(1).lower()]
        unit = {"day": 1, "week": 7, "month": 30}[m.group(2).lower()]
        day = today - timedelta(days=n * unit)
        slack = timedelta(days=0 if unit == 1 else unit // 2)
        return day - slack, min(day + slack, today)
    if "last week" in q or "上周" in q or "上個星期" in q or "上星期" in q:
        return _week(today - timedelta(days=7))
    if "this week" in q or "本周" in q or "这周" in q:
        return _week(today)
    if "last month" in q or "上个月" in q or "上月" in q:
        first = today.replace(day=1) - timedelta(days=1)
        return _month(first.year, first.month)
    if "this month" in q or "这个月" in q or "本月" in q:
        return _month(today.year, today.month)
    if "last year" in q or "去年" in q and not _ZH_MONTH_RE.search(q):
        return date(today.year - 1, 1, 1), date(today.year - 1, 12, 31)
    if m := _EN_MONTH_RE.search(question):
        month = _MONTHS[m.group(1).capitalize()] if m.group(1).capitalize() in _MONTHS else None
        if month:
            year = today.year if month <= today.month else today.year - 1
            return _month(year, month)
    if m := _ZH_MONTH_RE.search(question):
        month = int(m.group(2))
        if 1 <= month <= 12:
            if m.group(1) == "去年":
                year = today.year - 1
            elif m.group(1) == "今年":
                year = today.year
            else:
                year = today.year if month <= today.month else today.year - 1
            return _month(year, month)
    return None


_ANY_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_SHORT_REF_RE = re.compile(r"\s*#L\d+(?:-L\d+)?(?:,L\d+(?:-L\d+)?)*$")


def dated_lines(block: str, tokenizer: str,
                asked: set[str] | None = None) -> list[tuple[date, frozenset[str], bool, str]]:
    """A packed block's content lines as (date, content terms): a digest fact line by the date it
    states, a history line by its source's date (since when its value held), any other line by
    its header's date (the note's path, the session's heading, or the one packing added); lines
    with no date are left out. Terms are the index tokenizer's (stopwords out), bullets, dates,
    speakers, links and `(replaced ...)` labels not counted. With `asked` (the query's terms),
    only the lines holding one of them: those answer the question, their neighbours need not.
    The flag says whether the line is current (not labelled replaced, not a history line); the
    line itself comes last."""
    lines = block.split("\n")
    header = _ANY_DATE_RE.search(lines[0]) if lines else None
    default = _day(header.group(0)) if header else None
    dated = ((dated_line(line, default, tokenizer, asked), line) for line in lines[1:] if line != "…")
    return [(*pair, line) for pair, line in dated if pair]


def dated_line(line: str, default: date | None, tokenizer: str,
               asked: set[str] | None = None) -> tuple[date, frozenset[str], bool] | None:
    """One line's (date, content terms, current?) as `dated_lines` reads them (`default`: its
    header's date); None for a line without content, date or (with `asked`) a query term."""
    if not line.strip() or line.startswith("#"):
        return None
    day = line_date(line) or default
    if _HISTORY_RE.match(line) and (since := _SOURCE_DATE_RE.search(line)):
        day = _day(since.group(1)) or day
    terms = said_terms(line, tokenizer)
    current = not (is_replaced(line) or _HISTORY_RE.match(line))
    return (day, terms, current) if day and terms and (asked is None or terms & asked) else None


def said_terms(line: str, tokenizer: str) -> frozenset[str]:
    """What a line says as content terms: no bullet, date, speaker, links, anchors or label."""
    return frozenset(_said(line, tokenizer).split(" ")) - _NOTHING


_NOTHING = frozenset({""})


@memo(1 << 16)  # a process searching one workspace sees the same lines again and again
def _said(line: str, tokenizer: str) -> str:
    """The line's terms joined by spaces: a string is nothing the garbage collector walks (a set is)."""
    return " ".join(_said_terms(line, tokenizer))


def _said_terms(line: str, tokenizer: str) -> list[str]:
    said = _SHORT_REF_RE.sub("", line_text(unlabelled(line)))  # packing's `#L13` anchors
    return tokenize(searchable_text(said), tokenizer)


def same_question(a: frozenset[str], b: frozenset[str], asked: frozenset[str] = frozenset()) -> bool:
    """Two lines in the same frame with another value, by their own terms, no word list: each
    has terms the other lacks, and either they share at least two terms with at most
    max(2, shared / 2) differing on a side (one slot differs) and none of the differing terms
    is one of the question's (`asked`: "my sister lives in Oslo" and "my brother lives in
    Bergen" answer different questions when the question names the sister), or they hold the
    same of the question's terms (at least two, all but one of either's), so the question's
    subject and predicate, with something else beside them."""
    shared = len(a & b)
    left, right = a - b, b - a
    if shared < 2 or not left or not right:
        return False
    if max(len(left), len(right)) <= max(2, shared // 2) and not (left | right) & asked:
        return True
    both = len(a & b & asked)
    return both >= 2 and both >= max(len(a & asked), len(b & asked)) - 1 and bool(left - asked) \
        and bool(right - asked)


_FEW_LINES = 12


def same_question_pairs(lines: list[frozenset[str]], asked: frozenset[str] = frozenset()) -> list[tuple[int, int]]:
    """The pairs (i < j) of `lines` (their terms) for which `same_question` holds, counted for all
    pairs at once: the shared, own and asked terms of every pair are products of one line x term
    matrix (a packed context of a hundred lines has thousands of pairs)."""
    if len(lines) < 2:
        return []
    if len(lines) <= _FEW_LINES:  # a block's few lines: the matrices cost more than the pairs
        return [(i, j) for i in range(len(lines)) for j in range(i + 1, len(lines))
                if same_question(lines[i], lines[j], asked)]
    vocabulary: dict[str, int] = {}
    rows = [[vocabulary.setdefault(t, len(vocabulary)) for t in terms] for terms in lines]
    has = np.zeros((len(lines), max(len(vocabulary), 1)), dtype=np.float32)
    for n, columns in enumerate(rows):
        has[n, columns] = 1.0
    shared = (has @ has.T).astype(np.int64)  # exact: small integers
    size = np.diag(shared)
    left, right = size[:, None] - shared, size[None, :] - shared  # a - b, b - a
    asked_columns = [vocabulary[t] for t in asked if t in vocabulary]
    on_asked = has[:, asked_columns]
    both = (on_asked @ on_asked.T).astype(np.int64)  # |a & b & asked|
    mine = np.diag(both)  # |a & asked|
    one_slot = (np.maximum(left, right) <= np.maximum(2, shared // 2)) \
        & (mine[:, None] == both) & (mine[None, :] == both)  # no asked term differs
    same_asked = (both >= 2) & (both >= np.maximum(mine[:, None], mine[None, :]) - 1) \
        & (left - (mine[:, None] - both) > 0) & (right - (mine[None, :] - both) > 0)
    found = (shared >= 2) & (left > 0) & (right > 0) & (one_slot | same_asked)
    i, j = np.nonzero(np.triu(found, 1))
    return list(zip(i.tolist(), j.tolist()))


def newest_first(blocks: list[str], tokenizer: str, window: tuple[date, date] | None = None,
                 asked: set[str] | None = None) -> list[int]:
    """An order of packed `blocks` (indices) in which, whenever lines of two blocks answer the
    same question (`same_question`, or `same_subject_pairs` given the query's terms) on
    different dates, the block with the newer line comes first; otherwise rank order is kept
    (constraints that contradict each other are dropped, earliest rank first). With a `window`
    (as_of, a time the question names) a line inside it counts as newer than any outside;
    `asked`: the query's terms (see `dated_lines`)."""
    items = [[(_when(day, window, current), terms, line)
              for day, terms, current, line in dated_lines(b, tokenizer, asked)] for b in blocks]
    return newest_order(items, frozenset(asked or ()), tokenizer)


def newest_lines(lines: list[str], default: date | None, tokenizer: str,
                 window: tuple[date, date] | None = None, asked: set[str] | None = None) -> list[int]:
    """`newest_first` for the lines of one block (in file order): of two answering the same
    question, the newer first, a later line of the same day counting as newer."""
    items = []
    for n, line in enumerate(lines):
        pair = dated_line(line, default, tokenizer, asked)
        items.append([(_when(pair[0], window, pair[2]) + (n,), pair[1], line)] if pair else [])
    return newest_order(items, frozenset(asked or ()), tokenizer)


_SPOKEN_RE = re.compile(r"^[\w .'-]{1,40}: ")  # `user: `, `Melanie: ` (pieces are unmarked first)
_SENTENCE_END_RE = re.compile(rf"(?<=[.!?。！？]){NOT_AN_ABBREVIATION}\s+")
_VALUE_RE = re.compile(r"(?<![\w.])(?P<num>\d+(?:[.,:]\d+)*)(?!\w)|(?<=[a-z0-9,;] )(?P<name>[A-Z][\w-]+)")


Value = tuple[str, str, tuple[str, ...], str]  # kind, value, the value's own terms, its unit
Sentence = tuple[tuple[str, ...], tuple[Value, ...], tuple]  # its terms, its values, its clauses' terms

_UNIT_RE = re.compile(r"\s?(%|[^\W\d_]+)")


def _unit(sentence: str, at: int, tokenizer: str) -> str:
    """The unit of the number ending at `at`: the word right after it as a search term ("ms",
    "mib", "record"), "%", else "" (no word, or a stopword: "in 2019 and ...")."""
    word = _UNIT_RE.match(sentence, at)
    if not word:
        return ""
    if word.group(1) == "%":
        return "%"
    terms = tokenize(word.group(1), tokenizer)
    return terms[0] if terms else ""


@lru_cache(maxsize=1 << 14)  # a resident process meets the same candidate lines again and again
def sentence_values(line: str, tokenizer: str) -> tuple[Sentence, ...]:
    """Per sentence of a line that states a value: its terms and its values (kind, value, the
    value's own terms, the word right after a number: its unit, "ms", "MiB", "%") by their
    shape: numbers (a version, with two dots or more or a decimal with no unit, is its own kind)
    and names (a word
    capitalised after a word inside the sentence), and its clauses' terms in order. Terms are
    tuples, not sets: tuples of strings are what the garbage collector stops walking, and a
    cached set it walks in every full collection."""
    said = _SPOKEN_RE.sub("", unmarked(_SHORT_REF_RE.sub("", line_text(unlabelled(line)))))
    out = []
    for sentence in _SENTENCE_END_RE.split(said):
        values = []
        for match in _VALUE_RE.finditer(sentence):
            if match.lastgroup == "num":
                value = match.group("num").rstrip(".,:")
                unit = _unit(sentence, match.end(), tokenizer)
                # a version: two dots or more ("2.38.17"), or a decimal with no unit after it
                # ("Our Postgres version is 13.4", "Postgres is on 16.2 now")
                kind = "version" if value.count(".") >= 2 or ("." in value and not unit) else "number"
                values.append((kind, value, (), unit))
            else:
                name = match.group("name")
                values.append(("name", name, tuple(tokenize(name, tokenizer)), ""))
        if values:
            clauses = (tuple(tokenize(searchable_text(c), tokenizer)) for c in _CLAUSE_RE.split(sentence))
            out.append((tuple(dict.fromkeys(tokenize(searchable_text(sentence), tokenizer))), tuple(values),
                        tuple(c for c in clauses if c)))
    return tuple(out)


_CLAUSE_RE = re.compile(r"[,;:()\u2013\u2014]|\s-\s")


def _leads(clauses: tuple[tuple[str, ...], ...], asked: frozenset[str], terms: frozenset[str]) -> bool:
    """Does a clause of the sentence hold all of its asked `terms` and open on one of them
    (nothing named before them: "p95 latency is now 180 ms", not "the search API p95
    latency is 90 ms")?"""
    return any(clause[0] in asked and terms <= set(clause) for clause in clauses)


def stated_values(line: str, tokenizer: str, asked: frozenset[str]) -> set[tuple]:
    """What each sentence of a line that holds some of the query's terms (`asked`) states:
    (those terms, kind, value, unit, whether a clause opens on them: `_leads`), a name that is
    a query term left out."""
    return {(held, kind, value, unit, _leads(clauses, asked, held))
            for terms, values, clauses in sentence_values(line, tokenizer)
            if (held := asked.intersection(terms)) for kind, value, own, unit in values
            if asked.isdisjoint(own)}


def same_subject_pairs(lines: list[str], asked: frozenset[str], tokenizer: str) -> list[tuple[int, int]]:
    """Pairs (i < j) of lines that answer the question with another value of one kind, worded
    as they may be: a sentence of each holds the same of the query's terms and states a value
    of a kind the other's states too, with a value of that kind the other's does not ("We
    pinned X to 2.38.17" and "The lock file now has X at 3.26.0"; "X processes 4362 records per
    batch" and "We cut the X batches down to 3048 rows"). A sentence may also name less of
    what is asked than the other, the subject left to the conversation ("Our checkout API has
    a p95 latency of 420 ms" and "p95 latency is now 180 ms"; "The X container is capped at
    128 MiB" and "X may use 384 MiB now"), when the terms it holds are among the other's, a
    clause of it opens on them (nothing else named in their place: not "the search API p95
    latency is 90 ms") and its value is a number in the same unit, or a version. Only the
    order of what is shown follows from it: both lines are shown, the newer first."""
    said: dict[tuple[frozenset[str], str], dict[int, set[str]]] = {}
    measured: dict[tuple[str, str], list[tuple[int, frozenset[str], str, bool]]] = {}
    for n, line in enumerate(lines):
        for subject, kind, value, unit, leads in stated_values(line, tokenizer, asked):
            said.setdefault((subject, kind), {}).setdefault(n, set()).add(value)
            if kind == "version" or unit:
                measured.setdefault((kind, unit), []).append((n, subject, value, leads))
    pairs = set()
    for by_line in said.values():
        members = sorted(by_line)
        for a, i in enumerate(members):
            pairs.update((i, j) for j in members[a + 1:] if by_line[i] != by_line[j])
    for stated in measured.values():
        values: dict[int, set[str]] = {}  # line -> the values it states in this kind and unit
        for n, _, value, _ in stated:
            values.setdefault(n, set()).add(value)
        for a, (i, one, _, one_leads) in enumerate(stated):
            for j, two, _, two_leads in stated[a + 1:]:
                if i != j and values[i] != values[j] and (one < two and one_leads or two < one and two_leads):
                    pairs.add((min(i, j), max(i, j)))
    return sorted(pairs)


def within(day: date | None, window: tuple[date, date]) -> bool:
    """Is `day` one of the days a question asks about (`window`, inclusive)?"""
    return day is not None and window[0] <= day <= window[1]


def _when(day: date, window: tuple[date, date] | None, current: bool = True) -> tuple:
    """A line's time key: inside the asked window first, then current before replaced or
    history lines whatever their dates (a replaced value is never "newer" than a current one),
    then the date."""
    return (window is None or within(day, window)), current, day


def newest_order(items: list[list[tuple[tuple, frozenset[str], str]]], question: frozenset[str],
                 tokenizer: str = "bigram") -> list[int]:
    """Indices of `items` (each a list of (time key, terms, text) lines) in rank order, except
    that an item with a line answering the same question as an earlier item's line at a later
    time key is pulled just before it; contradicting constraints keep rank order."""
    owner = [n for n, lines in enumerate(items) for _ in lines]
    keys = [key for lines in items for key, _, _ in lines]
    pairs = set(same_question_pairs([terms for lines in items for _, terms, _ in lines], question))
    if question:
        texts = [text for lines in items for _, _, text in lines]
        pairs.update(same_subject_pairs(texts, question, tokenizer))
    after: dict[int, set[int]] = {n: set() for n in range(len(items))}  # n -> items to come first
    for i, j in sorted(pairs):
        p, q, key_a, key_b = owner[i], owner[j], keys[i], keys[j]
        # only a current line pulls: an older replaced one never does
        if p != q and key_a != key_b and max(key_a, key_b)[1]:
            newer, older = (p, q) if key_a > key_b else (q, p)
            after[older].add(newer)
    order: list[int] = []
    placed: set[int] = set()

    def place(n: int, pulling: frozenset[int] = frozenset()) -> None:
        if n in placed or n in pulling:  # placed, or a contradicting constraint: rank order
            return
        for m in sorted(after[n]):  # the items with newer lines come just before it
            place(m, pulling | {n})
        placed.add(n)
        order.append(n)
    for n in range(len(items)):
        place(n)
    return order
