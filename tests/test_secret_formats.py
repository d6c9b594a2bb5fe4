"""Known credential formats are looked for only in texts that hold what each match needs
(`screens.needed`): the screened search finds exactly what running every pattern finds."""

from __future__ import annotations

import random
import re
import string

from memflow.tasks.ground import secret_formats
from memflow.tasks.ground.screens import Screened, needed
from memflow.tasks.ground.secret_formats import _patterns, known_format_spans


def unscreened(text: str) -> list[tuple[int, int]]:
    saved = secret_formats._screened
    secret_formats._screened = lambda: tuple(Screened(p, ()) for p in _patterns())
    try:
        return known_format_spans(text)
    finally:
        secret_formats._screened = saved


def test_needed_literals_of_hand_read_patterns():
    assert needed(re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")) == \
        [frozenset({"A"}), frozenset({"3T", "BIA", "CCA", "KIA", "SIA"})]
    assert needed(re.compile(r"xox(?:a|b)-(?:\d+-)+[a-z0-9]+")) == \
        [frozenset({"xox"}), frozenset({"a", "b"}), frozenset({"-"}), frozenset({"-"})]
    assert needed(re.compile(r"\w+[/\\]\S*")) == [frozenset({"/", "\\"})]
    assert needed(re.compile(r"(?:\s|^)key|x?")) == []  # a way through with no literal: no screen
    assert needed(re.compile(r"a(?i:b)")) == []  # a group with flags of its own: no screen


def test_screened_formats_find_what_every_pattern_finds():
    rng = random.Random(11)
    pieces = []
    for pattern in _patterns():  # the literal pieces of every pattern, and text around them
        pieces += [word for words in needed(pattern) for word in words]
    pieces += ["AKIA" + "".join(rng.choice(string.ascii_uppercase) for _ in range(16)), "ghp_" + "a1" * 18,
               "https://user:pa55word@host", "-us12", "x" * 32, " ", "\n", "=", ":", "'", '"', "key", "KEY",
               "token", "secret_key", "ibm_cloud_iam", "cloudant", "0123456789abcdef" * 4, "é", "ſ", "K"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) if rng.random() < 0.6 else rng.choice(string.printable)
                       for _ in range(rng.randint(1, 40)))
        assert known_format_spans(text) == unscreened(text), text

