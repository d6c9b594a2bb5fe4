"""The order packing adds lines in (pure), one for every budget, so a larger budget never loses
what a smaller one packed: the context at budget B is the longest prefix of the sequence that
fits in B.

The sequence is what a greedy packer adds, in rank order, at each rung of a doubling ladder
(`RUNG` x 2^k), each rung starting from the lines the rung below holds: at a
rung, every hit in rank order takes its next lines while they fit, and a hit whose next line
does not fit leaves the room to the hits after it (that line waits for a larger rung). So a
long line never blocks the shorter ones ranked after it, and at a rung the context is exactly
that greedy packing.

A line already said is left out: the same line shown by another hit, a note line whose place
or cited turn is shown, and a transcript line (a turn, or a piece of one) only when a note line
in the context holds all of its text; otherwise the turn's own words are packed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

# The ladder's rungs are 250 x 2^k tokens (125, 250, 500, ..., 4000, ...): at the budgets the
# tools are documented and measured at the context is exactly what a greedy packer fills them
# with (from the rung below); between rungs, and below the first, it is the longest prefix that
# fits. The first rung is 125: smaller first rungs (31.25) let the short lines of hits 2-7 in
# before the top hit's neighbours, LoCoMo dev budget recall @250 0.628 against 0.646 at 125
# (0.647 with 250: every budget below it then gets only the top hit's lines).
RUNG = 250.0
FIRST_RUNG = RUNG / 2
# A rung reaches the first rung/TOKENS_PER_HIT hits only (12 at 250 tokens, 50 at 1,000): the
# short lines of a low-ranked hit do not go in before the top hits' at a small rung; and a
# caller that searches budget/TOKENS_PER_HIT hits packs what a longer list would.
TOKENS_PER_HIT = 20


@dataclass(frozen=True, slots=True)  # no __dict__ per unit: a packed search makes hundreds
class Unit:
    """One line of a hit, as packing weighs it: `own` identifies it (path, line, text); `place`
    is (path, line) when it is a whole file line; `cites` are the (path, line) its provenance
    link cites; `said` is what it says (normalised), `turn` is set for a transcript line, `code`
    for a piece of code or a log in one."""
    offset: int
    own: tuple[str, int, str]
    place: tuple[str, int] | None
    cites: frozenset
    said: str
    turn: bool
    code: bool = False


class Units:
    """A hit's lines in the order packing tries them (`offsets`), each made a `Unit` when first
    asked for: a hit shows one or two of its lines far more often than all of them."""

    def __init__(self, offsets: list[int], make: Callable[[int], Unit], opening: set[int] | None = None):
        self.offsets = offsets
        self._make = make
        self._made: dict[int, Unit] = {}
        # the lines that may open the hit's block: not a line said again and again in it
        # ("assistant: Noted." beside a turn the daily note already shows), context for the
        # line beside it at most, nothing alone; None: any line
        self.opening = opening

    def __len__(self) -> int:
        return len(self.offsets)

    def __getitem__(self, k: int) -> Unit:
        if k not in self._made:
            self._made[k] = self._make(self.offsets[k])
        return self._made[k]


def next_rung(rung: float) -> float:
    return FIRST_RUNG if rung <= 0 else rung * 2


class Sequence:
    """The sequence built so far (up to `rung`): `steps` holds, per line added, the hit, the
    hit's block text with it, and the tokens of the whole context at that point."""

    def __init__(self, hits: int, floor: Callable[[int], int] | None = None,
                 least: Callable[[int, Unit], int] | None = None):
        self.rung = 0.0
        # hit -> the tokens no block of it costs fewer of (its header and one line); (hit, line)
        # -> the tokens no block of it showing that line costs fewer of
        self.floor = floor or (lambda i: 0)
        self.least = least
        self.steps: list[tuple[int, str, int]] = []
        self.next = [0] * hits
        self.chosen: list[tuple[int, ...]] = [()] * hits
        self.cost = [0] * hits
        self.gap = [0] * hits
        self.used = 0
        self.own: set[tuple[str, int, str]] = set()
        self.places: set[tuple[str, int]] = set()
        self.cited: dict[tuple[str, int], list[str]] = {}

    def hidden(self, unit: Unit) -> bool:
        """Is the line already said by the lines in the sequence?"""
        if unit.own in self.own:
            return True
        if unit.turn:
            return bool(unit.said) and any(unit.said in note for note in self.cited.get(unit.own[:2], ()))
        places = unit.cites | ({unit.place} if unit.place else set())
        return bool(places & self.places)

    def add(self, unit: Unit) -> None:
        self.own.add(unit.own)
        if unit.place:
            self.places.add(unit.place)
        for place in unit.cites:
            self.places.add(place)
            self.cited.setdefault(place, []).append(unit.said)

    def extend(self, rung: float, units_of: Callable[[int], Units],
               step: Callable[[int, tuple[int, ...]], tuple[str, int]]) -> None:
        """Add the lines the greedy packer adds at `rung`, first every hit's lines but code and
        logs, then those (a listing is never the reason a turn is left out); `step(hit,
        offsets)`: the hit's block with those lines and its tokens."""
        reach = min(len(self.next), math.ceil(rung / TOKENS_PER_HIT))
        pending = reach < len(self.next)
        for code in (False, True):
            for i in range(reach):
                if not self.chosen[i] and self.used + self.floor(i) + bool(self.used) > rung:
                    # a new block cannot fit: its lines are not even chosen (most of a long
                    # candidate list once the rung is full); what it would skip as said already
                    # stays said at every larger rung, so the sequence is the same
                    pending = True
                    continue
                pending |= self.fill(i, rung, code, units_of(i), step)
        self.rung = rung if pending else 1 << 62  # nothing left to add: every budget is served

    def fill(self, i: int, rung: float, code: bool, units: Units,
             step: Callable[[int, tuple[int, ...]], tuple[str, int]]) -> bool:
        """Hit `i` takes its next lines while they fit in `rung`; True when one is left."""
        while self.next[i] < len(units):
            unit = units[self.next[i]]
            alone = not self.chosen[i] and units.opening is not None and unit.offset not in units.opening
            if alone or self.hidden(unit):  # said already, or nothing alone: at every larger budget too
                self.next[i] += 1
                continue
            if unit.code and not code:
                return True
            if not self.chosen[i] and self.least is not None \
                    and self.used + self.least(i, unit) + bool(self.used) > rung:
                return True  # its block cannot fit: not made, not counted (most new hits late in a rung)
            text, tokens = step(i, (*self.chosen[i], unit.offset))
            if not self.chosen[i]:  # the blank line before every block but the first
                self.gap[i] = 1 if self.used else 0
            cost = tokens + self.gap[i]
            if self.used - self.cost[i] + cost > rung:
                return True
            self.used += cost - self.cost[i]
            self.cost[i], self.chosen[i] = cost, (*self.chosen[i], unit.offset)
            self.next[i] += 1
            self.add(unit)
            self.steps.append((i, text, self.used))
        return False
