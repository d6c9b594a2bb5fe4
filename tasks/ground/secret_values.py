"""Secrets said in prose, judged by the value's shape and the sentence's structure (pure): no list
of words for "password" (people say "the pass", "combo", "the word to get in", "暗号"), so what
is masked here is masked for what the value looks like and where it stands.

- Spelled digits: four or more digit words in a row ("one-two-three-nine", "seven, five, six,
  three", "一二三九"), not a year ("二〇二四年"). Digit words are a closed class.
- A secret-shaped token, anywhere: letters with a symbol inside (`Marigold!Sky9`, `P@ss`),
  letters and digits that alternate (`Gr0t0upl1kl`), random-looking mixed case and digits
  (`x7Qp2rTz`), a lower-case word followed by digits (`swordfish1987`).
- A value-shaped token where the sentence gives it as the value of something: after a copula or
  a separator ("is", "was now", "'s", ":", "=", "changed to", 是, 为, ：, 改成), before "as the
  ..." ("swordfish1987 as the pass"), or before "is my ..."; the value is letters and digits
  (`Klasto42`, `abc123XY`) or 4 to 8 digits, a digit group ("329-341") included.

What is never a secret here: URLs, e-mail addresses, file paths, data URIs, versions, dates and
times, prices, percentages, hex (hashes, UUIDs), upper-case codes (`BA2490`, `RTX4090`, order and
tracking numbers), snake_case and CamelCase identifiers, a number with a unit or a noun after it
("1200 steps", "1204房间"), a year, a round number, and a number given as the value of a
"number", "code", "ID" or 号 (the room number, the zip code, 房间号): those name a thing, they
do not open it (a PIN there is masked only through `secrets`' listed nouns).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import groupby

from memflow.tasks.ground.screens import Seen, screened
from memflow.tasks.ground.tokenize import STOPWORDS

_DIGIT_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
_SPELLED = re.compile(rf"(?<![\w-]){_DIGIT_WORD}(?:(?:\s*[-,]\s*|\s+){_DIGIT_WORD}){{3,}}(?![\w-])", re.IGNORECASE)
_DIGIT_BY_DIGIT = re.compile(r"(?<![\w.,:/-])\d(?:(?: |-| - )\d){3,}(?![\w.,:/-]|,\d)")  # "4-7-2-9", "8 3 1 5"
_ZH_SPELLED = re.compile(r"[零〇一二三四五六七八九幺两]{4,}(?![零〇一二三四五六七八九十百千万亿年月日号点个次人岁])")
# a run of printable ASCII but brackets, quotes, "=" and ","; CJK text around it splits it too
# ("key=value" and "f(x)" are code, not one token)
_TOKEN = re.compile(r"[^\s=,;|()\[\]{}<>\"'`\u0080-\U0010ffff]+")
# an image's (sound's, video's, font's) bytes written into the text, lines wrapped or not: data
DATA_URI = re.compile(r"data:(?:image|audio|video|font)/[\w.+-]+(?:;[\w=.-]+)*;base64,"
                      r"[A-Za-z0-9+/=]*(?:\r?\n[A-Za-z0-9+/=]+)*", re.IGNORECASE)
_PROTECTED = re.compile(
    DATA_URI.pattern + r"|(?:[a-z][a-z0-9+.-]*://|www\.)\S+"  # a URL
    r"|(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # an e-mail address
    r"|(?<!\S)[^\s/\\]*[/\\]\S*", re.IGNORECASE)  # a path, a host/path with its query
_SCREENED = screened(_PROTECTED)  # a text without "/", "\\", "@", "://" or "www." has none of them
# A token (`_TOKEN`) holding a character other than an ASCII letter, whole: what is left of a
# token of letters after `_trim` is letters, so the loop over tokens need not see those.
_NOT_A_WORD = re.compile(rf"(?<!{_TOKEN.pattern[:-1]}){_TOKEN.pattern[:-1]}*{_TOKEN.pattern[:-2]}A-Za-z]{_TOKEN.pattern[:-1]}*")
_ARITHMETIC_AFTER = re.compile(r"\s*(?:[×*/+=≈^]|-\s*\d)")
_WORD_AFTER = re.compile(r"\s+([A-Za-z]+)")
_ZH_AS = re.compile(r"\s*(?:当|作)")
_PAIR = re.compile(r"(?<![\w=-])[A-Z][a-z]+=[A-Z][A-Za-z0-9!#$%&*?@^~]*[A-Za-z0-9!#$%&*?@^~]")
_SYMBOLS = set("!#$%&*?@^~")
_EDGE_OPEN = "*_~"  # Markdown emphasis around a word
_EDGE_CLOSE = ".:*_~"
_COPULA = {"is", "was", "are", "were", "be", "been", "becomes", "became", "remains", "equals", "stays"}
_CHANGE = {"changed", "set", "reset", "updated", "switched", "rotated", "moved"}
_FILLER = {"now", "still", "actually", "just", "simply", "currently", "also", "always", "probably",
           "definitely", "really", "literally", "officially", "finally", "temporarily"}
_DETERMINER = {"the", "my", "our", "your", "his", "her", "their", "its", "a", "an", "this", "that"}
_NAMING_HEAD = {"number", "numbers", "no", "#", "id", "code", "codes"}  # what names a thing
_ZH_INTRO = re.compile(r"(?:是|为|：|:|=|成了?|作|当)\s*$")
_ZH_AFTER = set("了吧啊呢哦呀嘛当作")  # particles, and "as" (用 1234 当 ...)
_NOT_VALUE = re.compile(
    r"v?\d+(?:\.\d+)+[a-z]*(?:-\w+)?|\d{1,4}[-/.:]\d{1,2}(?:[-/.:T]\d{1,4})*(?::\d\d)*"  # versions, dates, times
    r"|[-+~]?[$€£¥₹]\d[\d,.]*[kKmMbB]?(?:/[A-Za-z]+)?|[A-Za-z]+@\d+|\S*%|\d+(?:st|nd|rd|th|s|am|pm|[kKmMgGxp]|kb|mb|gb|km|kg|mm|cm|ms|hz|fps)"  # money, units
    r"|[@#]\w+|\d+(?:-[a-z]+)+|[0-9a-fA-F-]+|[A-Z0-9_.-]+|[a-z0-9]+(?:_[a-z0-9]+)+")


def value_spans(text: str) -> list[tuple[int, int]]:
    """Spans of secrets said in prose (see the module)."""
    spans = [m.span() for rule in (_SPELLED, _ZH_SPELLED, _DIGIT_BY_DIGIT) for m in rule.finditer(text)]
    protected: list[tuple[int, int]] | None = None  # found when a token needs them
    at = 0
    for match in _PAIR.finditer(text):  # "Magu=Rikliskai7": "=" inside a password, not a setting
        if introduced(text, match.start(), match.end()):
            spans.append(match.span())
    for match in _NOT_A_WORD.finditer(text):  # the tokens a word's letters do not make up
        start, end = _trim(text, *match.span())
        if end - start < 4 or text[start:end].isalpha():
            continue  # most tokens: words
        if protected is None:
            protected = [m.span() for m in _PROTECTED.finditer(text)] if _SCREENED.may_match(Seen(text)) else []
        while at < len(protected) and protected[at][1] <= start:
            at += 1
        if at < len(protected) and protected[at][0] < end or "/" in text[start:end] or "\\" in text[start:end]:
            continue  # a URL, an address, a path, a data URI
        token = text[start:end]
        if token[0] == "-" and token[1:2].isalpha():
            continue  # a command-line option: "-Xmx4096m"
        core = token.rstrip("!?#") or token
        if secret_shaped(core) or (introduced(text, start, end) and (value_shaped(core, text, start)
                                                                     or value_shaped(token, text, start))):
            spans.append((start, end))
    return spans


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in _EDGE_OPEN:
        start += 1
    while end > start and (text[end - 1] in _EDGE_CLOSE or text[end - 2:end] in ("'s", "’s")):
        end -= 2 if text[end - 2:end] in ("'s", "’s") else 1
    return start, end


def secret_shaped(token: str) -> bool:
    """A token no ordinary word, name, number or identifier looks like (see the module)."""
    if len(token) < 6 or _NOT_VALUE.fullmatch(token):
        return False
    letters = sum(c.isalpha() for c in token)
    digits = sum(c.isdigit() for c in token)
    # a symbol inside (a "$" first only before a letter: leetspeak, not money)
    symbol = any(c in _SYMBOLS for c in token[1:-1]) or token[0] == "$" and token[1].isalpha()
    many = sum(c in _SYMBOLS for c in token[1:-1]) >= 2
    if letters >= 3 and symbol and (digits or _mixed_case(token) or many):
        return True
    if letters >= 4 and digits >= 2 and max(map(_switches, re.split(r"[-_.]", token))) >= 3:
        return True  # leetspeak and random letters with digits: "Gr0t0upl1kl", "k3br1mah"
    if re.fullmatch(r"[a-z]{5,}\d{3,}", token):
        return True  # a word and a number run together: "swordfish1987"
    return len(token) >= 8 and _random_mix(token)


def _switches(part: str) -> int:
    """How often a part changes between letters and digits ("Gr0t0up": 4; "arm64": 1)."""
    return sum(1 for _ in groupby(c.isalpha() for c in part if c.isalnum())) - 1


def _mixed_case(token: str) -> bool:
    return any(c.isupper() for c in token[1:]) and any(c.islower() for c in token)


def _random_mix(token: str) -> bool:
    """Upper case, lower case and digits mixed the way random text mixes them (not an identifier:
    capitalised words and one number at most)."""
    core = [c for c in token if c.isalnum()]
    classes = ["u" if c.isupper() else "l" if c.islower() else "d" for c in core]
    if len(set(classes)) < 3:
        return False
    runs = [(kind, len(list(group))) for kind, group in groupby(classes)]
    lower = [n for kind, n in runs if kind == "l"]
    capitals = sum(kind == "u" and n > 1 for kind, n in runs)
    if sum(kind == "d" for kind, _ in runs) <= 1 and capitals <= 1 and lower and sum(lower) / len(lower) >= 2.5:
        return False
    counts = Counter(core)
    entropy = -sum(n / len(core) * math.log2(n / len(core)) for n in counts.values())
    return (len(runs) - 1) / (len(core) - 1) >= 0.3 and entropy >= 2.5


def value_shaped(token: str, text: str, start: int) -> bool:
    """A token that could be a secret when it is given as a value: letters with 2+ digits (not an
    upper-case code, hex or snake_case), or 4 to 8 digits that are no year, round number or
    count of something."""
    if re.fullmatch(r"\d{3,4}(?:-\d{3,4})+", token):
        digits = token.replace("-", "")
        return 6 <= len(digits) <= 8 and not any(g.endswith("00") for g in token.split("-")) \
            and not _names_a_thing(text, start)
    if token.isdigit():
        return (4 <= len(token) <= 8 and not re.fullmatch(r"(?:19|20)\d\d", token) and not _round(token)
                and not _counts_something(text, start + len(token)) and not _names_a_thing(text, start))
    if _NOT_VALUE.fullmatch(token) or not re.fullmatch(r"[\w!#$%&*?@^~+=.-]+", token):
        return False
    letters, digits = sum(c.isalpha() for c in token), sum(c.isdigit() for c in token)
    if re.fullmatch(r"[A-Za-z]{2,}(?:[._+][A-Za-z]{2,})+(?:[!?#*]+|\d+[!?#*]*)", token) or \
            re.fullmatch(r"[A-Za-z]{2,}(?:-[A-Za-z]{2,})+(?:\d+|-\d{2,})[!?#*]*|[A-Za-z]{2,}(?:-[A-Za-z]{2,})*[#*]+", token):
        return True  # words joined, then a symbol or a number: "Getruzi.Dabo!", "Tiger-Moon4", "Kesto#"
    if letters >= 5 and re.search(r"[A-Za-z]\d+[A-Za-z]", token):
        return True  # a digit inside a word: "Faboupijan1mo"
    return letters >= 3 and digits >= 2


def _round(number: str) -> bool:
    """1200, 35000: a count, not a code."""
    return len(number) - len(number.rstrip("0")) >= len(number) / 2


def _counts_something(text: str, end: int) -> bool:
    """A number followed by a noun or a unit ("1200 steps", "1204房间") counts or labels it."""
    if _ARITHMETIC_AFTER.match(text, end):
        return True  # arithmetic: "1024 × 2048"
    after = text[end:end + 1]
    if after and "\u4e00" <= after <= "\u9fff":
        return after not in _ZH_AFTER
    word = _WORD_AFTER.match(text, end)
    return bool(word) and word.group(1).lower() not in STOPWORDS and word.group(1).lower() not in _FILLER


def _names_a_thing(text: str, start: int) -> bool:
    """The value of a "number", "code", "ID" or 号: the room number, the zip code, 房间号."""
    before = text[max(0, start - 60):start]
    zh = re.search(r"(号码?|编号)\s*(?:是|为|：|:)?\s*$", before)
    if zh:
        return True
    if re.search(r"[×*/+≈^]\s*$", before):
        return True  # arithmetic: "12 × 2048"
    words = re.findall(r"[#\w'’]+", before)
    while words and (words[-1].lower() in _COPULA | _FILLER or words[-1].lower() in {"to"} | _CHANGE):
        words.pop()
    if words and ("_" in words[-1] or re.search(r"[a-z][A-Z]", words[-1])):
        return True  # a setting in code or a log (`unit_amount: 17900`, `maxRetries: 3000`)
    return bool(words) and words[-1].lower().removesuffix("'s").removesuffix("’s") in _NAMING_HEAD


def introduced(text: str, start: int, end: int) -> bool:
    """Is the token at text[start:end] given as the value of something? (see the module)"""
    before = text[max(0, start - 40):start]
    if re.search(r"(?:[\w.-]=|(?:_\w*|[a-z][A-Z]\w*|\.\w+):)\s*$", before):
        return False  # a setting in code: "retries=3", "max_conn: 20", "app.key: x"
    if _ZH_INTRO.search(before):
        return True
    if re.search(r"用\s*$", before) and _ZH_AS.match(text, end):
        return True
    if re.search(r"(?:[:=>]|\w['’]s|\s[-–—])\s*$", before):  # "pass: x", "pin = x", "it's x"
        return True
    words = [w.lower() for w in re.findall(r"[\w'’]+", before)]
    while words and words[-1] in _FILLER:
        words.pop()
    if words and (words[-1] in _COPULA or words[-1] == "with"):
        return True  # "the pass is V", "log in with V"
    if len(words) >= 2 and words[-1] == "to" and words[-2] in _CHANGE | {"it", "them"}:
        return True
    after = [w.lower() for w in re.findall(r"[\w'’]+", text[end:end + 40])[:2]]
    owner = len(after) == 2 and (after[1] in _DETERMINER or re.search(r"\w['’]s$", after[1]))
    return bool(owner) and (after[0] == "as" or after[0] in _COPULA)
