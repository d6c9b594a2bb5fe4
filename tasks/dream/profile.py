"""Stage 3's read side for a system prompt: the profile, what memory holds about the user and the
people they named, without a model.

Built from the digest's person nodes (`subject: person:<who>:<facet>`, their current fact lines:
a replaced value shows only as its newest one) and the daily notes' facts the digest does not
cite yet (newest notes first, the same fact rules as a dream run: `note_facts`, `subject_of`).
A daily fact that replaces or repeats a newer one already chosen is left out (`same_fact`).
Lines come newest first, each with its date, whose fact it is and its source link, until the
token budget (cl100k, as the packer counts) is full.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass

from memflow.schemas.settings import Settings
from memflow.tasks.dream.consolidation import note_facts, people_in, speaker, split_fact
from memflow.tasks.dream.digest import facts_of
from memflow.tasks.dream.facts import same_fact, subject_of
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.tokens import count_tokens
from memflow.tasks.ground.workspace import Layout, date_of, kind_of
from memflow.tasks.stores.files import read_text

PERSON = "person:"
USER = "the-user"


@dataclass(frozen=True)
class ProfileFact:
    date: str  # ISO day it was stated
    who: str  # "the user" or the person's name
    text: str
    source: str  # `path#Lnn` of the daily line (or the digest node)

    def line(self) -> str:
        who = "" if self.who == "the user" else f" {self.who}:"
        return f"- {self.date}:{who} {self.text} [[{self.source}]]"


def digest_facts(lay: Layout, settings: Settings) -> tuple[list[ProfileFact], set[str]]:
    """(current facts of every person node, every `path#anchor` the digest cites)."""
    out, cited = [], set()
    for path in sorted((lay.root / lay.digest).rglob("*.md")):
        rel = path.relative_to(lay.root).as_posix()
        note = parse_note(rel, read_text(path, settings.decode_errors))
        subject = str(note.metadata.get("subject") or "")
        for fact in facts_of(note.text):
            cited.update(link for line in [fact, *fact.history] for link in line.links)
            if subject.startswith(PERSON):
                who = _person(subject)
                out.append(ProfileFact(fact.date, who, fact.text, (fact.links or [rel])[0]))
    return out, cited


def _person(subject: str) -> str:
    slug = subject.split(":")[1] if subject.count(":") >= 1 else USER
    return "the user" if slug == USER else slug.replace("-", " ").title()


def daily_facts(lay: Layout, settings: Settings, cited: set[str]) -> Iterator[ProfileFact]:
    """Facts about people in daily notes the digest does not cite yet, newest note first (read
    lazily: a profile stops reading once its budget is full)."""
    for path in sorted((lay.root / lay.daily).rglob("*.md"), reverse=True):
        rel = path.relative_to(lay.root).as_posix()
        day = date_of(rel)
        if day is None or kind_of(lay, rel) != "note":
            continue
        note = parse_note(rel, read_text(path, settings.decode_errors))
        people = people_in(note)
        for evidence in (part for fact in note_facts(note) for part in split_fact(fact, people)):
            source = f"{rel}#L{evidence.lines[0]}"
            if source in cited:
                continue
            who, text = speaker(evidence.text)
            if subject_of(text, who).bucket == "personal":
                yield ProfileFact(day.isoformat(), who or "the user", text, source)


def build_profile(lay: Layout, settings: Settings, budget_tokens: int = 300) -> tuple[str, list[ProfileFact]]:
    """(the profile as Markdown within `budget_tokens`, the facts it shows), newest first."""
    facts, cited = digest_facts(lay, settings)
    facts.sort(key=lambda f: f.date, reverse=True)
    candidates = heapq.merge(facts, daily_facts(lay, settings, cited), key=lambda f: f.date, reverse=True)
    header = "# Profile (newest first)"
    kept: list[ProfileFact] = []
    used = count_tokens(header)
    for fact in candidates:
        if any(k.who == fact.who and same_fact(k.text, fact.text) for k in kept):
            continue  # an older value of a fact already shown, or the same fact again
        cost = count_tokens("\n" + fact.line())
        if used + cost > budget_tokens:
            break
        kept.append(fact)
        used += cost
    lines = [f.line() for f in kept] or ["- nothing is known about the user yet"]
    return "\n".join([header, *lines]), kept
