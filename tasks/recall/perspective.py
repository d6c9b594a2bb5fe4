"""The user's perspective for vector queries.

Captured notes keep the user's own words ("My preferred commute is a light bicycle."), while
agents ask about the user in the third person ("How does the user get to work?"). Small sentence
models weigh that shift heavily: with all-MiniLM-L6-v2 the note ranks 21st among the test
workspace's notes for the third-person question and 2nd for "How do I get to work?"
(benchmarks/paraphrase_probe.py). The vector branch therefore embeds the query as written and
its first-person reading and keeps each chunk's better similarity; BM25 keeps the query as
written.
"""

from __future__ import annotations

import re

_AUX = {"does": "do", "is": "am", "has": "have", "was": "was", "did": "did", "will": "will",
        "can": "can", "would": "would", "should": "should", "could": "could", "might": "might"}
_PREPOSITIONS = ("to", "for", "with", "about", "of", "from", "by", "at", "on", "in", "than",
                 "like", "without", "against", "toward", "towards")
_USER = r"the\s+user"
_RULES = [
    # "does the user ..." -> "do I ..."
    (re.compile(rf"\b({'|'.join(_AUX)})\s+{_USER}\b(?!'s)", re.I),
     lambda m: f"{_match_case(_AUX[m.group(1).lower()], m.group(1))} I"),
    # "the user's ..." / "user's ..." -> "my ..."
    (re.compile(r"\b(?:the\s+)?user's\b", re.I), lambda m: _match_case("my", m.group(0))),
    # "... to the user" -> "... to me"
    (re.compile(rf"\b({'|'.join(_PREPOSITIONS)})\s+{_USER}\b", re.I), lambda m: f"{m.group(1)} me"),
    # any other "the user" -> "I"
    (re.compile(r"\bthe\s+user\b", re.I), lambda m: "I"),
]


def _match_case(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def first_person(query: str) -> str | None:
    """The query as the user would ask it, or None when it does not speak of "the user"."""
    rewritten = query
    for pattern, replace in _RULES:
        rewritten = pattern.sub(replace, rewritten)
    return rewritten if rewritten != query else None
