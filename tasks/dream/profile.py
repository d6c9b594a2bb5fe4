"""Stage 3's read side for a system prompt: the profile, what memory holds about the user and the
people they named, without a model.

Built from the digest's person nodes (`subject: person:<who>:<facet>`, their current fact lines:
a replaced value shows only as its newest one) and the statements of daily notes the digest does
not cite yet (the same fact rules as a dream run: `note_facts`, `split_fact`; not the
assistant's words, not a masked secret, not a fragment of fewer than `MIN_WORDS` words).

A profile must not state a value that no longer holds, and offline nothing says which statement
replaced which. So a daily statement stands only while no later statement of the same speaker
shares a content word with it ("I live in Leeds" / "we moved out of Leeds" / "I live in Bath
now": only the last stands); what stands is the newest word on each thing said. The things said
about most often come first (a statement counts the ones it stands for), then the newest; what
fits the token budget (cl100k, as the packer counts) is shown newest first, each line with its
date, whose fact it is and its source link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memflow.schemas.settings import Settings
from memflow.tasks.dream.consolidation import note_facts, people_in, speaker, split_fact
from memflow.tasks.dream.digest import facts_of
from memflow.tasks.dream.facts import same_fact
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.tokenize import tokenize
from memflow.tasks.ground.tokens import count_tokens
from memflow.tasks.ground.workspace import Layout, date_of, kind_of
from memflow.tasks.stores.files import read_text

PERSON = "person:"
USER = "the-user"
MIN_WORDS = 4  # fewer words are a fragment ("Mochi I mean", "we forgot today")
MASK = "[secret masked]"  # what capture leaves of a secret (`capture.secrets`)


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


def daily_facts(lay: Layout, settings: Settings, cited: set[str]) -> list[ProfileFact]:
    """The statements of daily notes the digest does not cite yet that still stand (see the
    module), the things said about most often first, then the newest."""
    said: list[tuple[ProfileFact, frozenset[str]]] = []
    for path in sorted((lay.root / lay.daily).rglob("*.md")):
        rel = path.relative_to(lay.root).as_posix()
        day = date_of(rel)
        if day is None or kind_of(lay, rel) != "note":
            continue
        note = parse_note(rel, read_text(path, settings.decode_errors))
        people = people_in(note)
        for evidence in (part for fact in note_facts(note, procedures=False) for part in split_fact(fact, people)):
            source = f"{rel}#L{evidence.lines[0]}"
            who, text = speaker(evidence.text, people)
            if source not in cited and _worth_stating(who, text):
                said.append((ProfileFact(day.isoformat(), who or "the user", text, source),
                             frozenset(tokenize(text, settings.keyword_tokenizer))))
    return standing(said)


def _worth_stating(who: str, text: str) -> bool:
    words = len(text.split()) + len(_HAN_RE.findall(text)) // 2  # Chinese: two characters a word
    return who.lower() != "assistant" and MASK not in text and words >= MIN_WORDS


_HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def standing(said: list[tuple[ProfileFact, frozenset[str]]]) -> list[ProfileFact]:
    """Of statements in the order said, those no later statement of the same speaker shares a
    content word with, each counting the statements it stands for; the most, times one more
    than the values it names (`values`), first; then the newest."""
    counts: list[int] = []
    for n, (fact, words) in enumerate(said):
        counts.append(1 + sum(counts[m] for m, (older, old_words) in enumerate(said[:n])
                              if older.who == fact.who and old_words & words and not _later(said, m, n)))
    kept = [(counts[n] * (1 + values(fact.text)), fact) for n, (fact, words) in enumerate(said)
            if not any(other.who == fact.who and words & other_words for other, other_words in said[n + 1:])]
    return [fact for _, fact in sorted(kept, key=lambda pair: (-pair[0], _newest(pair[1].date)))]


def _newest(day: str) -> tuple[int, ...]:
    return tuple(-int(part) for part in day.split("-"))


_VALUE_RE = re.compile(r"\d|(?<=[^\s.!?:;]\s)[A-Z][\w’'-]*")


def values(text: str) -> int:
    """How many values a statement names: numbers, and capitalised words inside a sentence
    (names, places, products); what a profile is for."""
    return len(_VALUE_RE.findall(text))


def _later(said: list, m: int, n: int) -> bool:
    """Did a statement between m and n already stand for m (so n counts it through that one)?"""
    fact, words = said[m]
    return any(other.who == fact.who and words & other_words for other, other_words in said[m + 1:n])


def build_profile(lay: Layout, settings: Settings, budget_tokens: int = 300) -> tuple[str, list[ProfileFact]]:
    """(the profile as Markdown within `budget_tokens`, the facts it shows), newest first."""
    facts, cited = digest_facts(lay, settings)
    facts.sort(key=lambda f: f.date, reverse=True)
    header = "# Profile (newest first)"
    kept: list[ProfileFact] = []
    used = count_tokens(header)
    pool = [*facts, *daily_facts(lay, settings, cited)]
    for fact in pool:
        if any(k.who == fact.who and same_fact(k.text, fact.text) for k in kept) or any(
                o.who == fact.who and o.date > fact.date and same_fact(o.text, fact.text) for o in pool):
            continue  # the same fact again, or a value a newer statement replaces
        cost = count_tokens("\n" + fact.line())
        if used + cost <= budget_tokens:
            kept.append(fact)
            used += cost
    kept.sort(key=lambda f: f.date, reverse=True)
    lines = [f.line() for f in kept] or ["- nothing is known about the user yet"]
    return "\n".join([header, *lines]), kept
