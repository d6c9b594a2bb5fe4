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


def test_screened_prose_rules_mask_what_the_unscreened_rules_mask():
    """`value_spans` looks at tokens holding a non-letter only and finds URLs, addresses and
    paths only in texts that may hold one; `prose_spans` looks for secret nouns only in texts
    holding their letters: the same spans as the rules run in full (their code before, here)."""
    from memflow.tasks.ground import secret_values, secrets
    from memflow.tasks.ground.secret_values import _PROTECTED, _TOKEN, _trim, introduced, secret_shaped, value_shaped

    def full_value_spans(text):
        spans = [m.span() for rule in (secret_values._SPELLED, secret_values._ZH_SPELLED,
                                       secret_values._DIGIT_BY_DIGIT) for m in rule.finditer(text)]
        protected, at = [m.span() for m in _PROTECTED.finditer(text)], 0
        for match in secret_values._PAIR.finditer(text):
            if introduced(text, match.start(), match.end()):
                spans.append(match.span())
        for match in _TOKEN.finditer(text):
            start, end = _trim(text, *match.span())
            if end - start < 4 or text[start:end].isalpha():
                continue
            while at < len(protected) and protected[at][1] <= start:
                at += 1
            if at < len(protected) and protected[at][0] < end or "/" in text[start:end] or "\\" in text[start:end]:
                continue
            token = text[start:end]
            if token[0] == "-" and token[1:2].isalpha():
                continue
            core = token.rstrip("!?#") or token
            if secret_shaped(core) or (introduced(text, start, end) and (value_shaped(core, text, start)
                                                                         or value_shaped(token, text, start))):
                spans.append((start, end))
        return spans

    def full_prose_spans(text):
        saved = secrets._NOUN_SCREENED
        secrets._NOUN_SCREENED = Screened(secrets._SECRET_NOUN, ())
        try:
            return secrets.prose_spans(text)
        finally:
            secrets._NOUN_SCREENED = saved

    rng = random.Random(4)
    pieces = ["The", " pass", "word", " is ", "PIN", " code", ": ", "Marigold!Sky9", "swordfish1987", "4471",
              "one-two-three-nine", "https://x.io/a?b=1", "me@mail.com", "/usr/bin", "C:\\x", "www.x.com",
              "data:image/png;base64,AAAA", "Klasto42", "Magu=Rikliskai7", "-Xmx4096m", "'s", "*", "_", "~",
              ".", "\n", "密码", "是", "Gr0t0upl1kl", "x7Qp2rTz", "2026-01-02", "v1.2.3", "$40", "ſ", "K", "é"]
    for _ in range(4000):
        text = "".join(rng.choice(pieces) if rng.random() < 0.7 else rng.choice(string.printable)
                       for _ in range(rng.randint(1, 30)))
        assert secret_values.value_spans(text) == full_value_spans(text), text
        assert secrets.prose_spans(text) == full_prose_spans(text), text
