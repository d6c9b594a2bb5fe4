"""Secrets stay out (pure): a text with every secret replaced by `[secret masked]`. Capture masks
a message before it writes anything (`capture.secrets`: the session log, so the daily note, the
digest and the index never see the value); resource cards and the index mask a resource file's
text (`mask_lines`, which keeps its line numbers; the file itself is the user's and stays).

Five rules, their spans merged:
- private key blocks (`-----BEGIN ... PRIVATE KEY-----` to its END, or to the end of the text);
- known credential formats (`ground.secret_formats`: detect-secrets' service patterns);
- random-looking tokens: 20+ characters of letters, digits and `_-+/=` holding upper case,
  lower case and digits, whose character classes alternate the way random text does (an
  identifier such as `getUserAccountId2` changes class once per word) and whose characters are
  spread (Shannon entropy). Hex-only runs (commit hashes, sha256, UUIDs) and tokens of one or
  two classes (order numbers, versions, dates, slugs) are no secret;
- a password, passphrase, PIN or access code stated in prose: a secret noun ("wifi password",
  "PIN", "door code", "API key", "密码"), then, within its clause, a copula or separator ("is",
  "was changed to", ":", "=") or nothing at all, then the value: a quoted text, or the words up to
  the next function word or punctuation. A value that is a function word ("the same"), a
  participle or an adverb ("expired", "stolen", "exactly") is no value, so "I forgot my
  password" and "the password was changed yesterday" stay as they are.
- a secret said in prose without any of those nouns, judged by the value's shape and the
  sentence's structure (`ground.secret_values`: "swordfish1987 as the pass", "It's
  Marigold!Sky9.", "one-two-three-nine").
Data URIs of images, sound, video and fonts are data, not a credential.
`extra` patterns (setting `secret_patterns`) widen it: a match's first group, or all of it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from itertools import groupby

from memflow.tasks.ground.screens import Seen, screened
from memflow.tasks.ground.secret_values import DATA_URI, value_spans
from memflow.tasks.ground.secret_formats import known_format_spans
from memflow.tasks.ground.tokenize import STOPWORDS

MARK = "[secret masked]"

_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
                          r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)|"
                          r"PuTTY-User-Key-File-\d[\s\S]*?(?:Private-MAC: \S+|\Z)")
_TOKEN = re.compile(r"(?<![\w+/=-])[A-Za-z0-9_+/=-]{20,}(?![\w+/=-])")
_HEX = re.compile(r"^[0-9a-fA-F-]+$")

_QUALIFIED_CODE = (r"(?:security|access|door|gate|alarm|lock|entry|entrance|unlock|safe|garage|"
                   r"verification|2fa|otp|one-time|recovery|backup|authentication|auth|login|keypad|"
                   r"building|locker|phone|sim|card)")
_SECRET_NOUN = re.compile(
    r"(?<![\w-])(?:pass(?:word|phrase|code|wd)s?|pins?(?:[ -](?:code|number)s?)?|pwd|"
    + _QUALIFIED_CODE + r"[ -](?:codes?|pins?)|(?:lock|safe|locker) combinations?|"
    r"(?:wi-?fi|wpa2?|network|api|access|secret|private|encryption|ssh|gpg|pgp|license|product)[ -]keys?|"
    r"(?:api|access|auth|bearer|refresh|session|personal access|bot)[ -]tokens?|"
    r"(?:client|app|api|shared|webhook)[ -]secrets?)(?![\w-])"
    r"|密码|口令|验证码|PIN码", re.IGNORECASE)
_NOUN_SCREENED = screened(_SECRET_NOUN)
_ZH_VALUE = re.compile(r"\s*(?:是|为|：|:|=)?\s*([A-Za-z0-9!@#$%^&*_+=\-.]{3,})")
_COPULA = {"is", "was", "are", "were", "be", "becomes", "became", "remains", "stays", "equals", "reads"}
_CHANGE = {"changed", "set", "reset", "updated", "switched", "rotated", "changing", "setting"}
_FILLER = {"now", "still", "actually", "just", "simply", "currently", "also", "literally", "always",
           "officially", "finally", "temporarily"}
_CLAUSE_END = re.compile(r"[.;!?。；！？](?=\s|$)|\n|,\s|\s[-–—]\s")
_WORD = re.compile(r"""["'“‘`][^"'”’`\n]{1,80}["'”’`]|[^\s,;]+""")


def mask_secrets(text: str, enabled: bool = True, extra: Iterable[str] = (),
                 listed_nouns: bool = True) -> tuple[str, int]:
    """(text with each secret replaced by MARK, how many were masked). `listed_nouns=False`
    leaves out the rule of listed secret nouns (to measure the others alone)."""
    if not enabled or not text:
        return text, 0
    return _replace(text, _spans(text, extra, listed_nouns))


def _spans(text: str, extra: Iterable[str] = (), listed_nouns: bool = True) -> list[tuple[int, int]]:
    spans = [m.span() for m in _PRIVATE_KEY.finditer(text)]
    spans += known_format_spans(text)
    media = [m.span() for m in DATA_URI.finditer(text)]
    spans += [m.span() for m in _TOKEN.finditer(text)
              if random_token(m.group(0)) and not any(s <= m.start() < e for s, e in media)]
    spans += value_spans(text)
    spans += prose_spans(text) if listed_nouns else []
    for pattern in extra:
        for m in re.finditer(pattern, text):
            spans.append(m.span(1) if m.re.groups and m.group(1) else m.span())
    return spans


def mask_lines(text: str, enabled: bool = True, extra: Iterable[str] = ()) -> tuple[str, int]:
    """`mask_secrets` that keeps the text's line numbers: a secret over several lines (a private
    key) leaves its mark and as many line ends (links to a line of a resource stay right)."""
    if not enabled or not text:
        return text, 0
    return _replace(text, _spans(text, extra), keep_lines=True)


def mask_without_nouns(text: str) -> tuple[str, int]:
    """`mask_secrets` without the listed-noun rule: what shape and structure catch alone."""
    return mask_secrets(text, listed_nouns=False)


def _replace(text: str, spans: list[tuple[int, int]], keep_lines: bool = False) -> tuple[str, int]:
    merged: list[list[int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, at = [], 0
    for start, end in merged:
        out += [text[at:start], MARK + ("\n" * text.count("\n", start, end) if keep_lines else "")]
        at = end
    return "".join(out) + text[at:], len(merged)


def random_token(token: str) -> bool:
    """A 20+ character token that reads as random (see the module), not a hash or identifier."""
    if _HEX.match(token):
        return False
    core = re.sub(r"[_+/=-]", "", token)
    classes = [("u" if c.isupper() else "l" if c.islower() else "d") for c in core if c.isalnum()]
    if len(classes) < 16:
        return False
    runs = [(kind, len(list(group))) for kind, group in groupby(classes)]
    digit_runs = sum(kind == "d" for kind, _ in runs)
    counts = Counter(core)
    entropy = -sum(n / len(core) * math.log2(n / len(core)) for n in counts.values())
    if len(set(classes)) < 3:  # letters of one case and digits: only long, well-mixed ones
        return len(classes) >= 24 and digit_runs >= 5 and entropy >= 3.5
    lower_runs = [n for kind, n in runs if kind == "l"]
    capitals = sum(kind == "u" and n > 1 for kind, n in runs)
    if digit_runs <= 1 and capitals <= 1 and lower_runs and sum(lower_runs) / len(lower_runs) >= 2.5:
        return False  # an identifier: capitalised words (one acronym at most), a number at most
    switches = (len(runs) - 1) / (len(classes) - 1)
    return switches >= 0.3 and entropy >= 3.3


def prose_spans(text: str) -> list[tuple[int, int]]:
    """Spans of secret values stated in prose (see the module)."""
    spans: list[tuple[int, int]] = []
    if not _NOUN_SCREENED.may_match(Seen(text)):  # no noun's letters anywhere: no noun
        return spans
    for noun in _SECRET_NOUN.finditer(text):
        if not noun.group(0).isascii():
            value = _ZH_VALUE.match(text, noun.end())
            if value:
                spans.append(value.span(1))
            continue
        end = _CLAUSE_END.search(text, noun.end())
        clause_end = end.start() if end else len(text)
        spans += _value_after(text, noun.end(), clause_end)
    return spans


def _value_after(text: str, start: int, stop: int) -> list[tuple[int, int]]:
    words = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text, start, stop)]
    head = text[start:words[0][1]] if words else text[start:stop]
    if re.match(r"^\s*(?:'s\b|[:=]|\s-\s)", text[start:stop]) or re.match(r"^\s*[:=]", head):
        at = 0  # "password: x", "PIN = 1234", "password's hunter2"
        while at < len(words) and (words[at][0] == "'s" or not re.search(r"\w", words[at][0])):
            at += 1
    else:
        at = _separator(words)
        if at is None:
            # "use PIN 4471", "passcode 8842": a credential-looking word right after the noun
            return [(words[0][1], words[0][2])] if words and _credential_like(words[0][0]) else []
    while at < len(words) and words[at][0].lower().strip(",") in _FILLER:
        at += 1
    if at >= len(words):
        return []
    first = words[at][0]
    if first[0] in "\"'“‘`":
        return [(words[at][1] + 1, words[at][2] - 1)]
    if not _value_word(first):
        return []
    end = at + 1
    while not _credential_like(first) and end < len(words) and _value_word(words[end][0]) and words[end][0].lower() not in STOPWORDS:
        end += 1
    last = words[end - 1][2]
    while last > words[at][1] and text[last - 1] in ".!?)":
        last -= 1
    return [(words[at][1], last)]


def _separator(words: list[tuple[str, int, int]]) -> int | None:
    """Index of the first value word after a copula or a change verb ("set to") within the next
    eight words, or None."""
    for i, (word, _s, _e) in enumerate(words[:9]):
        low = word.lower().rstrip(":")
        if low in _COPULA and i + 1 < len(words) and words[i + 1][0].lower() in _CHANGE:
            continue  # "was changed to X": the value comes after "to"
        if low in _COPULA or word.endswith(":") or word in ("=", ":", "-"):
            return i + 1
        if low == "to" and i and words[i - 1][0].lower() in _CHANGE:
            return i + 1
    return None


def _value_word(word: str) -> bool:
    bare = word.strip(".,!?)(")
    low = bare.lower()
    if not bare or low in STOPWORDS:
        return False
    if bare.isalpha() and bare.islower() and re.search(r"(ed|en|ing|ly)$", low) and len(low) > 4:
        return False  # "expired", "stolen", "expiring", "exactly": said of the secret, not it
    return True


def _credential_like(word: str) -> bool:
    bare = word.strip(".,!?)(")
    return bool(re.search(r"\d", bare)) and len(bare) >= 3 and bare.lower() not in STOPWORDS
