"""Stage 3's read side for a system prompt: the profile, what memory holds about the user and the
people they named, without a model.

Built from the digest's person nodes (`subject: person:<who>`, their current fact lines) and the
statements of daily notes no person node states (the same fact rules as a dream run: `note_facts`,
`split_fact`; not the assistant's words, not a masked secret, not a fragment of fewer than
`MIN_WORDS` words), so a dream changes where a fact is read from, not which facts stand: of a
daily line a person node cites, the statements it states are read from the node and the others
(the dream put them in a topic's node) from the line, as without a dream; a line the node states
in other words (a model's) is the node's.

A profile must not state a value that no longer holds, and offline nothing says which statement
replaced which. So a statement (a person node's line or a daily one) stands only while no later
statement of the same speaker shares a content word with it ("I live in Leeds" / "we moved out of
Leeds" / "I live in Bath now": only the last stands); what stands is the newest word on each thing
said. The things said about most often come first (a statement counts the ones it stands for),
then the newest; what fits the token budget (cl100k, as the packer counts) is shown newest first,
each line with its date, whose fact it is and its source link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memflow.schemas.settings import Settings
from memflow.tasks.dream.consolidation import note_facts, speaker, speakers_and_people, split_fact
from memflow.tasks.dream.digest import facts_of
from memflow.tasks.dream.facts import same_fact
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.tokenize import INTERJECTIONS, tokenize
from memflow.tasks.ground.tokens import count_tokens
from memflow.tasks.ground.workspace import Layout, date_of, kind_of
from memflow.tasks.stores.files import read_text

PERSON = "person:"
USER = "the-user"
MIN_WORDS = 4  # fewer words are a fragment ("Mochi I mean", "we forgot today")
MASK = "[secret masked]"  # what capture leaves of a secret (`capture.secrets`)
HEADER = "# Profile (newest first)"
MODEL_SHARE = 3  # a model is given the facts of a profile this many times the budget, to word it shorter


@dataclass(frozen=True)
class ProfileFact:
    date: str  # ISO day it was stated
    who: str  # "the user" or the person's name
    text: str
    source: str  # `path#Lnn` of the daily line (or the digest node)

    def line(self) -> str:
        who = "" if self.who == "the user" else f" {self.who}:"
        return f"- {self.date}:{who} {self.text} [[{self.source}]]"


def digest_facts(lay: Layout, settings: Settings) -> tuple[list[ProfileFact], dict[str, set[str]]]:
    """(current facts of every person node, every `path#anchor` those facts and their history
    cite -> the texts the node gives it)."""
    out: list[ProfileFact] = []
    cited: dict[str, set[str]] = {}
    for path in sorted((lay.root / lay.digest).rglob("*.md")):
        rel = path.relative_to(lay.root).as_posix()
        note = parse_note(rel, read_text(path, settings.decode_errors))
        subject = str(note.metadata.get("subject") or "")
        if not subject.startswith(PERSON):
            continue  # a topic's fact is read from its daily statement, as without a dream
        for fact in facts_of(note.text):
            for line in [fact, *fact.history]:
                for link in line.links:
                    cited.setdefault(link, set()).add(_said(line.text))
            who = _person(subject)
            if _worth_stating(who, fact.text):  # the rule a daily statement meets ("更正一下" is none)
                out.append(ProfileFact(fact.date, who, fact.text, (fact.links or [rel])[0]))
    return out, cited


def _person(subject: str) -> str:
    slug = subject.split(":")[1] if subject.count(":") >= 1 else USER
    return "the user" if slug == USER else slug.replace("-", " ").title()


def _said(text: str) -> str:
    """A statement's words as compared between a node and its daily line."""
    return " ".join(text.split()).rstrip(".!").lower()


def daily_facts(lay: Layout, settings: Settings, cited: dict[str, set[str]]) -> list[tuple[ProfileFact, frozenset[str]]]:
    """The statements of daily notes no person node states, each with its content words, in the
    order said (`cited`: `digest_facts`' links and their texts). Of a line a person node cites,
    a statement the node does not state (the dream put it in a topic's node) is read here, as
    without a dream: left out, it no longer stood for the statements before it ("Karen pushed
    for it before the new manager arrives" after "Karen's running the show now"); when the node
    states none of the line's statements word for word (a model worded them), the line is the
    node's."""
    said: list[tuple[ProfileFact, frozenset[str]]] = []
    for path in sorted((lay.root / lay.daily).rglob("*.md")):
        rel = path.relative_to(lay.root).as_posix()
        day = date_of(rel)
        if day is None or kind_of(lay, rel) != "note":
            continue
        note = parse_note(rel, read_text(path, settings.decode_errors))
        speakers, people = speakers_and_people(note)
        parts = [(f"{rel}#L{evidence.lines[0]}", *speaker(evidence.text, speakers))
                 for fact in note_facts(note, procedures=False) for evidence in split_fact(fact, people, speakers)]
        worded = {source for source, _, text in parts if _said(text) in cited.get(source, ())}
        for source, who, text in parts:
            stated = source in cited and (_said(text) in cited[source] or source not in worded)
            if not stated and _worth_stating(who, text):
                said.append((ProfileFact(day.isoformat(), who or "the user", text, source),
                             content_terms(text, settings.keyword_tokenizer)))
    return said


def content_terms(text: str, tokenizer: str) -> frozenset[str]:
    """A statement's terms as search has them, no interjection among them ("haha" in two lines
    says nothing of one thing)."""
    return frozenset(tokenize(text, tokenizer)) - _interjection_terms(tokenizer)


@lru_cache(maxsize=4)
def _interjection_terms(tokenizer: str) -> frozenset[str]:
    return frozenset(tokenize(" ".join(sorted(INTERJECTIONS)), tokenizer))


def _worth_stating(who: str, text: str) -> bool:
    words = len(text.split()) + len(_HAN_RE.findall(text)) // 2  # Chinese: two characters a word
    return who.lower() != "assistant" and MASK not in text and words >= MIN_WORDS


_HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def standing(said: list[tuple[ProfileFact, frozenset[str]]]) -> list[ProfileFact]:
    """Of statements in the order said, those no later statement of the same speaker shares a
    content word with, each counting the statements it stands for; the most, times one more
    than the values it names (`values`), first; then the newest. One pass back over them: the
    statement that next speaks to each (the nearest later one sharing a word) is found from the
    last place each (speaker, word) was seen, so a workspace of years costs what it holds."""
    following: list[int | None] = [None] * len(said)
    seen: dict[tuple[str, str], int] = {}
    n = len(said) - 1
    while n >= 0:
        # the statements of one line were said at once: none replaces another ("这个月开始我不喝酒了，
        # ... 喝酒真的太影响第二天状态了"), only those of a later line do
        first = n
        while first > 0 and said[first - 1][0].source == said[n][0].source:
            first -= 1
        for m in range(n, first - 1, -1):
            fact, words = said[m]
            later = [seen[(fact.who, w)] for w in words if (fact.who, w) in seen]
            following[m] = min(later) if later else None
        for m in range(n, first - 1, -1):
            fact, words = said[m]
            seen.update({(fact.who, w): m for w in words})
        n = first - 1
    counts = [1] * len(said)
    for m, n in enumerate(following):  # in the order said: a statement's count is final when read
        if n is not None:
            counts[n] += counts[m]
    kept = [(counts[n] * (1 + values(fact.text)), fact) for n, (fact, _) in enumerate(said) if following[n] is None]
    return [fact for _, fact in sorted(kept, key=lambda pair: (-pair[0], _newest(pair[1].date)))]


def _newest(day: str) -> tuple[int, ...]:
    return tuple(-int(part) for part in day.split("-"))


_VALUE_RE = re.compile(r"\d|(?<=[^\s.!?:;]\s)[A-Z][\w’'-]*")


def values(text: str) -> int:
    """How many values a statement names: numbers, and capitalised words inside a sentence
    (names, places, products); what a profile is for."""
    return len(_VALUE_RE.findall(text))


def build_profile(lay: Layout, settings: Settings, budget_tokens: int = 300) -> tuple[str, list[ProfileFact]]:
    """(the profile as Markdown within `budget_tokens`, the facts it shows), newest first; with a
    chat model, the model writes it from the current facts (`model_profile`)."""
    if settings.chat_model:
        chosen = current_facts(lay, settings, MODEL_SHARE * budget_tokens)
        return model_profile(settings, chosen, budget_tokens)
    return render(current_facts(lay, settings, budget_tokens), budget_tokens)


def render(kept: list[ProfileFact], budget_tokens: int) -> tuple[str, list[ProfileFact]]:
    kept = sorted(kept, key=lambda f: f.date, reverse=True)
    lines = [f.line() for f in kept] or ["- nothing is known about the user yet"]
    return "\n".join([HEADER, *lines]), kept


def current_facts(lay: Layout, settings: Settings, budget_tokens: int) -> list[ProfileFact]:
    """The facts a profile of `budget_tokens` shows (see the module), in the order chosen."""
    facts, cited = digest_facts(lay, settings)
    said = [(f, content_terms(f.text, settings.keyword_tokenizer)) for f in facts]
    said = sorted([*said, *daily_facts(lay, settings, cited)], key=lambda pair: pair[0].date)  # as said
    kept: list[ProfileFact] = []
    used = count_tokens(HEADER)
    for fact in standing(said):  # a person node's current line and a daily statement alike
        if any(k.who == fact.who and same_fact(k.text, fact.text) for k in kept):
            continue  # the same fact again
        cost = count_tokens("\n" + fact.line())
        if used + cost <= budget_tokens:
            kept.append(fact)
            used += cost
    return kept


PROFILE_SYSTEM = """You write the profile of a user for an assistant's system prompt, from numbered facts
that the user's memory holds (each with the day it was said and who it is about). Reply with one JSON
object: {"lines": [{"text": str, "facts": [int]}]}: one short line per thing that holds now, in your
own words but with the facts' names, numbers and dates as written, citing the numbers of the facts it
comes from. When a newer fact replaces an older one, state the newer value only. Leave out small talk."""


def model_profile(settings: Settings, facts: list[ProfileFact], budget_tokens: int) -> tuple[str, list[ProfileFact]]:
    """A chat model's profile written from `facts` (numbered, dated, with whose they are),
    checked line by line: a line must cite facts it was given, and every number and name in it
    must be in those facts (the model words what they say, it adds nothing); a line that does
    not is left out. Each line shows the newest date and the source of the facts it cites.
    A call that fails raises (`ModelCallError`, `ModelOutputError`)."""
    from memflow.schemas.dream import ProfileReply
    from memflow.tasks.ground.llm import complete_json

    if not facts:
        return render([], budget_tokens)
    given = "\n".join(f"F{n} ({f.date}, {f.who}): {f.text}" for n, f in enumerate(facts, 1))
    reply = complete_json(settings, [{"role": "system", "content": PROFILE_SYSTEM},
                                     {"role": "user", "content": given}], ProfileReply)
    kept: list[ProfileFact] = []
    used = count_tokens(HEADER)
    for line in reply.lines:
        cited = [facts[n - 1] for n in dict.fromkeys(line.facts) if 1 <= n <= len(facts)]
        if not cited or not grounded(line.text, " ".join(f.text for f in cited)):
            continue
        newest = max(cited, key=lambda f: f.date)
        fact = ProfileFact(newest.date, newest.who, " ".join(line.text.split()), newest.source)
        cost = count_tokens("\n" + fact.line())
        if used + cost <= budget_tokens:
            kept.append(fact)
            used += cost
    return render(kept, budget_tokens)


_VALUE_WORD_RE = re.compile(r"[\d][\w.,:/%-]*|(?<=\S\s)[A-Z][\w'’-]+")


def grounded(text: str, source: str) -> bool:
    """Is every number and every capitalised word inside a sentence of `text` in `source`?"""
    return all(value.rstrip(".,:") in source for value in _VALUE_WORD_RE.findall(text))
