"""Literal screens of regular expressions (pure): what every match of a pattern must hold, looked
for with substring searches before the pattern itself runs over a text.

A pattern such as detect-secrets' IBM key pattern tries a lookbehind and a dozen alternatives at
every position of a text; the texts it runs on hardly ever hold `key`, `pwd` or `token` next to
`=`. `needed` reads, off the parsed pattern, the runs of literal characters no match can do
without (a set of alternatives for each); a text missing one of them has no match, and the
pattern is skipped. Exact by construction: a match compares those literals character by
character, with the pattern's own case rule, and so does the screen.
"""

from __future__ import annotations

import re
import re._constants as _op
import re._parser as _parser
from dataclasses import dataclass


@dataclass(frozen=True, eq=False)
class Screen:
    """One of the pieces every match of a pattern holds: any of `words`, compared as the
    pattern compares them (`caseless`: ignoring case)."""
    words: tuple[str, ...]
    caseless: bool
    regex: re.Pattern  # the words as the pattern compares them, for any text
    ascii_lowered: tuple[str, ...]  # caseless: the ASCII words, lower-cased
    others: re.Pattern | None  # caseless: the other words, as the pattern compares them

    def found(self, text: str, lowered: str | None) -> bool:
        """A member of `words` is in `text`; `lowered` is the text lower-cased when it is ASCII,
        else None. In an ASCII text an ASCII word's letter matches ignoring case exactly when
        their lower cases are the same; other words are looked for as the pattern would."""
        if not self.caseless:
            return any(word in text for word in self.words)
        if lowered is None:
            return self.regex.search(text) is not None
        return any(word in lowered for word in self.ascii_lowered) or (
            self.others is not None and self.others.search(text) is not None)


class Seen:
    """One text and what its screens found, shared by the patterns run over it."""

    def __init__(self, text: str):
        self.text = text
        self.lowered = text.lower() if text.isascii() else None
        self.found: dict[Screen, bool] = {}

    def holds(self, screen: Screen) -> bool:
        found = self.found.get(screen)
        if found is None:
            found = self.found[screen] = screen.found(self.text, self.lowered)
        return found


@dataclass(frozen=True)
class Screened:
    """A pattern with its screens, the one of the longest words first."""
    pattern: re.Pattern
    screens: tuple[Screen, ...]

    def may_match(self, seen: Seen) -> bool:
        """False when the text holds none of one screen's words: no match there."""
        return all(seen.holds(screen) for screen in self.screens)


_SHARED: dict[tuple, Screen] = {}  # patterns share screens ("key", "token")


def screened(pattern: re.Pattern) -> Screened:
    """`pattern` with its screens (`needed`); one Screen per words and case rule."""
    flags = pattern.flags & (re.IGNORECASE | re.ASCII)
    screens = []
    for found in needed(pattern):
        words = tuple(sorted(found, key=len, reverse=True))
        if (words, flags) not in _SHARED:
            others = [w for w in words if not w.isascii()]
            _SHARED[words, flags] = Screen(words, bool(flags & re.IGNORECASE), _alternatives(words, flags),
                                           tuple(w.lower() for w in words if w.isascii()),
                                           _alternatives(others, flags) if others else None)
        screens.append(_SHARED[words, flags])
    return Screened(pattern, tuple(sorted(screens, key=lambda screen: -min(map(len, screen.words)))))


def _alternatives(words, flags: int) -> re.Pattern:
    return re.compile("|".join(map(re.escape, words)), flags)


def needed(pattern: re.Pattern) -> list[frozenset[str]]:
    """Sets of literal strings such that every match of `pattern` holds a member of each set
    (the runs of literal characters it cannot match without: `AKIA`, one of `key`/`pwd`/...),
    read off the parsed pattern; none for a pattern that changes its flags inside."""
    try:
        return _needed(_parser.parse(pattern.pattern, pattern.flags))
    except _LocalFlags:
        return []


class _LocalFlags(Exception):
    """A group sets its own flags: its literals may be compared otherwise."""


def _needed(items) -> list[frozenset[str]]:
    out: list[frozenset[str]] = []
    run: list[str] = []
    for op, av in items:
        if op is _op.LITERAL:
            run.append(chr(av))
            continue
        if run:
            out.append(frozenset(["".join(run)]))
            run = []
        if op is _op.SUBPATTERN:
            if av[1] or av[2]:
                raise _LocalFlags
            out += _needed(av[3])
        elif op is _op.ATOMIC_GROUP:
            out += _needed(av)
        elif op in (_op.MAX_REPEAT, _op.MIN_REPEAT, _op.POSSESSIVE_REPEAT) and av[0] >= 1:
            out += _needed(av[2])
        elif op is _op.IN and all(kind is _op.LITERAL for kind, _ in av):  # `[/\\]`: one of them
            out.append(frozenset(chr(char) for _, char in av))
        elif op is _op.BRANCH:
            branches = [_needed(branch) for branch in av[1]]
            if all(branches):  # every way through holds one of its best set
                out.append(frozenset().union(*(max(b, key=lambda words: min(map(len, words))) for b in branches)))
    if run:
        out.append(frozenset(["".join(run)]))
    return out
