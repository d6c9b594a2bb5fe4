"""Keyword tokenizer shared by indexing and queries (pure; identical at both ends).

English and other Latin text: lower-cased words, English stopwords dropped, Snowball stemming
(PyStemmer). Identifiers stay findable whole and by their parts: `handleWebSocketReconnect` gives
`handlewebsocketreconnect` plus `handl`, `web`, `socket`, `reconnect`; `ECONNREFUSED`, `P99`,
`C` and `7` are kept (1-character tokens are not dropped). Chinese: character bigrams of every
Han run (a lone character stays a unigram), or jieba words with `keyword_tokenizer="jieba"`.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from itertools import chain

TOKENIZER_VERSION = "3"  # 3: a plural acronym is one word and its singular ("VMs": vms, vm; not v, ms)
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# Han runs, or runs of other letters and digits (a Han character always ends such a run, so
# `9点有汽车保养` gives `9` and the Han run `点有汽车保养`).
_WORD_RE = re.compile(rf"[{_HAN}]+|[^\W_{_HAN}]+(?:_+[^\W_{_HAN}]+)*", re.UNICODE)
_HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
HAN_RE = _HAN_RE  # a Han character: its tokens come first in `tokenize`'s list
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# capitals and a plural "s" ("VMs", "APIs", "GPUs"): an acronym's plural, not a camelCase
# identifier (its parts were "v" and "ms", so "How many VMs" matched every "310 ms")
_PLURAL_ACRONYM_RE = re.compile(r"[A-Z]{2,}s")

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours yourself yourselves s t don
的 了 和 是 在 我 有 也 就 都 而 及 与 着 或 一个 没有 我们 你们 他们 这 那 之 吗 呢 吧 啊
""".split())

# indefinite pronouns: closed-class words that open sentences ("Nothing in X reads ...") and
# name nothing a note or a node is about
INDEFINITE_PRONOUNS = frozenset("nothing nobody noone everything everybody everyone something somebody "
                                "someone anything anybody anyone".split())
# Interjections and response particles (a closed class: the conversational routine, "Wow",
# "Haha", "Yep"); "no" and "well" are also a determiner and a noun ("No cars are ...", "Well
# water is ..."): interjections only before a name, or alone (`ALSO_NOT_INTERJECTIONS`)
INTERJECTIONS = frozenset("""yes yeah yep yup ok okay oh ah aha wow hmm um uh oops ugh hey hi hello
thanks sorry alright no well haha lol yay omg aww""".split())
ALSO_NOT_INTERJECTIONS = frozenset("no well".split())


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    # no cache of its own: `_latin_tokens` keeps the stems, and PyStemmer's cache is 10,000
    # tracked lists the garbage collector walks in every full collection
    return Stemmer.Stemmer("english", 0)


@lru_cache(maxsize=1)
def load_jieba():
    import jieba

    jieba.setLogLevel(60)
    jieba.initialize()
    return jieba


@lru_cache(maxsize=8)
def tokenizer_id(kind: str) -> str:
    """Folder name of a keyword index built with this tokenizer: `<kind>-<fingerprint>`."""
    digest = hashlib.sha256(f"{kind}|{TOKENIZER_VERSION}|{sorted(STOPWORDS)}".encode()).hexdigest()
    return f"{kind}-{digest[:10]}"


@lru_cache(maxsize=500_000)
def _latin_tokens(word: str) -> tuple[str, ...]:
    """One non-Han word -> stemmed tokens: the whole word, plus its parts when it is an
    identifier (camelCase, snake_case, letters mixed with digits), or its singular when it is
    an acronym's plural ("VMs"). Cached: words repeat."""
    lower = word.lower()
    plural = _PLURAL_ACRONYM_RE.fullmatch(word) is not None
    split = not plural and ("_" in word or (any(c.isupper() for c in word[1:]) and not word.isupper()) or (
        any(c.isdigit() for c in word) and any(c.isalpha() for c in word)))
    out = [lower] if lower not in STOPWORDS else []
    if plural and lower[:-1] not in STOPWORDS:
        out.append(lower[:-1])  # the acronym itself: "VM" finds "VMs"
    if split:
        parts = [p.lower() for p in _CAMEL_RE.findall(word.replace("_", " "))]
        out.extend(p for p in parts if p != lower and p not in STOPWORDS)
    if not out:
        return ()
    stems = _stemmer().stemWords(out)
    return tuple(dict.fromkeys(stems)) if plural else tuple(stems)  # "APIs": api once, not twice


def _han_tokens(run: str, kind: str) -> list[str]:
    if kind == "jieba":
        return [w for w in load_jieba().cut_for_search(run) if w.strip() and w not in STOPWORDS]
    if len(run) == 1:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)]


def tokenize(text: str, kind: str = "bigram") -> list[str]:
    """Text -> keyword tokens."""
    han: list[str] = []
    out: list[str] = []
    for word in _WORD_RE.findall(text):
        if _HAN_RE.match(word):
            han.extend(_han_tokens(word, kind))
        else:
            out.extend(_latin_tokens(word))
    return han + out


# A line break, or a word as `_WORD_RE` finds it: several lines tokenized in one scan.
_LINES_WORD_RE = re.compile(rf"\n|{_WORD_RE.pattern}", re.UNICODE)


def tokenize_lines(lines: list[str], kind: str = "bigram") -> list[list[str]]:
    """`[tokenize(line, kind) for line in lines]` (lines without line breaks) in one regex scan
    over the joined lines: the index tokenizes every line of every chunk, and a call per line
    cost as much as the words."""
    joined = "\n".join(lines)
    if not _HAN_RE.search(joined):  # no Han run: each line's words, mapped without a test per word
        words, latin = _WORD_RE.findall, _latin_tokens
        return [list(chain.from_iterable(map(latin, words(line)))) for line in lines]
    result: list[list[str]] = []
    han: list[str] = []
    out: list[str] = []
    han_match, latin = _HAN_RE.match, _latin_tokens
    for word in _LINES_WORD_RE.findall(joined):
        if word == "\n":
            result.append(han + out if han else out)
            han, out = [], []
        elif han_match(word):
            han.extend(_han_tokens(word, kind))
        else:
            out.extend(latin(word))
    result.append(han + out if han else out)
    return result


# Two Latin words side by side, separated by spaces only ("roll back", "log in").
_PAIR_RE = re.compile(r"(?<![^\W\d_])([^\W\d_]{2,})[ \t]+(?=([^\W\d_]{2,})(?![^\W\d_]))")


def query_tokens(text: str, kind: str = "bigram") -> list[str]:
    """Query -> keyword tokens: those of `tokenize`, plus each pair of adjacent Latin words
    written as one ("roll back" -> `rollback`, "check out" -> `checkout`), so a query finds the
    closed compound a note used; the second word may be a stopword ("log in", "set up"). Queries only: a joined pair that no note contains matches nothing, and
    the index stays as `tokenize` makes it."""
    tokens = tokenize(text, kind)
    joined = []
    for first, second in _PAIR_RE.findall(text):
        if _HAN_RE.search(first + second):
            continue
        first, second = first.lower(), second.lower()
        if first in STOPWORDS:  # "to roll", "the group": no compound starts with a stopword
            continue
        joined.append(first + second)
    return tokens + (list(_stemmer().stemWords(joined)) if joined else [])


# a line break, or a non-Han word: the text of `joined_lines` holds no Han run
_LATIN_LINES_RE = re.compile(rf"\n|[^\W_{_HAN}]+(?:_+[^\W_{_HAN}]+)*", re.UNICODE)


@lru_cache(maxsize=500_000)
def _latin_joined(word: str) -> str:
    return word if word == "\n" else " ".join(_latin_tokens(word))


def joined_lines(text: str) -> str | None:
    """Text without a Han character -> its lines' tokens as one string (tokens by spaces, lines
    by newlines): what `" ".join` of `tokenize_lines(text.split("\n"))` per line gives, in one
    regex scan and C-level joins, so a text of millions of one-word lines costs its words, not
    a Python loop per line. None when the text holds Han (`tokenize_lines` then)."""
    if _HAN_RE.search(text):
        return None
    # every piece non-empty, so spaces are single and only a newline's neighbours to take off
    joined = " ".join(filter(None, map(_latin_joined, _LATIN_LINES_RE.findall(text))))
    return joined.replace(" \n", "\n").replace("\n ", "\n")
