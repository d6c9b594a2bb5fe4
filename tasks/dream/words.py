"""A statement read as typed words (pure), and the closed word classes the dream's rules read.

`toks` turns a statement into typed tokens: values (numbers with their unit, in digits whatever
their spelling: "four", 四), names (a capital past the sentence start, a mixed-case or digit
word), identifiers, prepositions and function words; Chinese runs are cut at their function
characters. Every word list here is a closed grammatical class (prepositions, pronouns,
determiners, auxiliaries, quantifiers, number words, irregular past forms, Chinese function
characters), never an attribute or a topic. `statements` cuts lines with them and `change`
compares statements with them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memflow.tasks.ground.tokenize import ALSO_NOT_INTERJECTIONS, INTERJECTIONS, STOPWORDS, tokenize

HAN = "\u3400-\u4dbf\u4e00-\u9fff"
PREPOSITIONS = frozenset("""at on in for with before after during from to into onto by near under over
between without about of off through until via per than instead across around behind beside
within""".split())
PRONOUNS = frozenset("i we you he she they it 我 你 他 她 它".split())
_HAN_STOP = frozenset("的了是在也都着吗呢吧啊就和与及而或很还又已经我你他她它们")
# "从A到B", "(改)成B", "(换)为B": the named-value structure; the verb before 成/为 is any verb
# (`change.cut_by` finds where the old value ends), not a list of verbs of change
HAN_PREP = frozenset("从到成为")
# "now" and its like: function words of two characters (the first is no function character)
_HAN_NOW_RE = re.compile("现在|目前|如今")
EN_NUMBERS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
_ZH_DIGITS = "零一二两三四五六七八九十百"
_LATIN = "\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F"  # accented letters, not × and ÷ among them
_TOKEN_RE = re.compile(
    rf"(?P<code>`[^`]+`|(?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+|\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+\b)"
    rf"|(?P<num>[$€£¥]?\d+(?:[.,:]\d+)*(?:%|[A-Za-z]{{1,4}}\b)?)"
    rf"|(?P<word>[A-Za-z{_LATIN}][A-Za-z0-9_'{_LATIN}-]*)"
    rf"|(?P<zhnum>[{_ZH_DIGITS}]+)"
    rf"|(?P<han>(?:(?![{_ZH_DIGITS}])[{HAN}])+)"
    rf"|(?P<arrow>->|→|=>)"
    rf"|(?P<end>[.!?;。！？；])")


@dataclass(frozen=True)
class Tok:
    surface: str
    norm: str    # what is compared: lowercase stem, numbers as digits
    kind: str    # num | name | code | word | han | prep | stop
    unit: str = ""


_ZH_DIGIT_VALUES = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}


def zh_number(run: str) -> int:
    """A run of Chinese numerals as a number: 四 -> 4, 二十五 -> 25, 三百五十 -> 350, 二零二六 -> 2026."""
    if "百" in run:
        head, _, rest = run.partition("百")
        return _ZH_DIGIT_VALUES.get(head, 1) * 100 + (zh_number(rest) if rest else 0)
    if "十" in run:
        head, _, rest = run.partition("十")
        return (_ZH_DIGIT_VALUES.get(head, 1) if head else 1) * 10 + (_ZH_DIGIT_VALUES.get(rest, 0) if rest else 0)
    return _ZH_DIGIT_VALUES.get(run, 0) if len(run) == 1 else int("".join(str(_ZH_DIGIT_VALUES[c]) for c in run))


def _stem(word: str) -> str:
    stems = tokenize(word)
    return stems[0] if stems else word.lower()


@lru_cache(maxsize=20_000)
def toks(text: str) -> tuple[Tok, ...]:
    """The statement as typed tokens (cached: the dream compares a line with many)."""
    out: list[Tok] = []
    start = True  # a capital at the start of a sentence is not a name
    for match in _TOKEN_RE.finditer(text):
        kind, surface = match.lastgroup, match.group(0)
        if kind == "end":
            start = True
            continue
        if kind == "code":
            out.append(Tok(surface, surface.strip("`").lower(), "code"))
        elif kind == "num":
            value = re.match(r"[$€£¥]?[\d.,:]+", surface).group(0).rstrip(".,:")
            out.append(Tok(surface, value.replace(",", ""), "num", surface[len(value):].lower()))
        elif kind == "zhnum":
            out.append(Tok(surface, str(zh_number(surface)), "num"))
        elif kind == "han":
            out.extend(_han_words(surface))
        elif kind == "arrow":
            out.append(Tok(surface, "to", "prep"))
        else:
            out.append(_word(surface, start))
        start = False
    return tuple(_with_units(out))


def _han_words(run: str) -> list[Tok]:
    """A run of Chinese characters, cut at its function characters (的, 是, 在 ...): each piece
    between them is one word ("我住在杭州" -> 我 住 在 杭州)."""
    out, word = [], ""
    run = _HAN_NOW_RE.sub("\0", run)  # "现在" as one function word, like English "now"
    for char in run:
        if char == "\0":
            if word:
                out.append(Tok(word, word, "han"))
            out.append(Tok("现在", "现在", "stop"))
            word = ""
            continue
        if char in _HAN_STOP or char in HAN_PREP:
            if word:
                out.append(Tok(word, word, "han"))
            out.append(Tok(char, char, "stop" if char in _HAN_STOP else "prep"))
            word = ""
        else:
            word += char
    return out + ([Tok(word, word, "han")] if word else [])


def _word(surface: str, sentence_start: bool) -> Tok:
    lower = surface.lower()
    if lower in EN_NUMBERS and (sentence_start or not surface[0].isupper()):
        return Tok(surface, EN_NUMBERS[lower], "num")  # mid-sentence "Zero" is a name
    if lower in PREPOSITIONS:
        return Tok(surface, lower, "prep")
    if lower in STOPWORDS or lower.rstrip("'s") in STOPWORDS:
        return Tok(surface, lower, "stop")
    mixed = any(c.isdigit() for c in surface) or any(c.isupper() for c in surface[1:])
    name = mixed or (surface[0].isupper() and not sentence_start)
    return Tok(surface, _stem(surface) if not name else lower, "name" if name else "word")


def _with_units(tokens: list[Tok]) -> list[Tok]:
    """A number's unit is its suffix (`40k`, `350ms`) or the word after it (`350 ms`, `6 engineers`)."""
    out = list(tokens)
    for i, tok in enumerate(out):
        if tok.kind == "num" and not tok.unit and i + 1 < len(out) and out[i + 1].kind in ("word", "han"):
            out[i] = Tok(tok.surface, tok.norm, "num", out[i + 1].norm)
    return out


def seq_of(text: str) -> list[Tok]:
    """Content, values and prepositions; Chinese function characters stay as word boundaries."""
    return [t for t in toks(text) if t.kind != "stop" or _is_han(t.surface)]


def _is_han(text: str) -> bool:
    return bool(re.match(f"[{HAN}]", text))


def content_words(tokens: list[Tok]) -> list[Tok]:
    return [t for t in tokens if t.kind not in ("prep", "stop")]


# -- closed word classes -----------------------------------------------------------------------
# Articles, demonstratives and possessive determiners: what opens a noun phrase
DETERMINERS = frozenset("the a an this that these those its their our my your his her".split())
DEMONSTRATIVES = frozenset("this that these those".split())
# Quantifiers heading a partitive ("half of the ...", "most of the ...", "30% of the ..."): the
# determiner quantifiers and the fractional numerals, closed classes (a noun heading one, "the
# majority of", "the rest of", is an open class: its phrase is read as any noun phrase is)
QUANTIFIERS = frozenset("half quarter third most some all none many few several each both any".split())
# Forms of "be", and the auxiliary and modal verbs (a tense or mood, not a fact's verb)
BE = frozenset("is are was were be been being am 's 're".split())
AUXILIARIES = frozenset("""am is are was were be been being have has had do does did will would
shall should can could may might must ought""".split())
SUBJECT_PRONOUNS = frozenset("i he she we they".split())  # pronouns only ever subjects (not "it", "you")
# adverbs of place, time and degree not shaped "-ly" that may stand between a subject and its
# verb ("Everyone here uses X", "Nobody still owns X")
PLAIN_ADVERBS = frozenset("here there also still just even now then already ever never always often".split())
# Interjections and response particles (`INTERJECTIONS`, `ALSO_NOT_INTERJECTIONS`): closed
# classes shared with capture, in `ground.tokenize`
# "there" and "here" before a form of "be": the existential or presentational clause, whose
# subject is the noun phrase after the verb ("There's also *a cron job*", "Here is *the photo*")
EXISTENTIALS = frozenset("there here".split())
# Past forms of common irregular verbs (with the regular "-ed", `past_shaped`): a frame in the
# past tense tells of an event ("I visited Rome", "we went to the cinema"), and two events are two
# facts, never a change of value
IRREGULAR_PAST = frozenset("""went met saw got had took made came gave found bought ran ate drank
wrote left lost won began did said told brought thought felt kept sold sent spent built caught
taught fought flew drove rode swam sang sat stood heard held paid read""".split())
# a bracketed span: what a chat sent with a message ("[image: a photo of a table with snacks and
# a cell phone]") or an aside in parentheses; no statement ends inside one
BRACKETED_RE = re.compile(r"\[[^\[\]\n]*\]|\([^()\n]*\)")


# -- how a statement opens ---------------------------------------------------------------------
_MARKER_RE = re.compile(r"^\s*(?:[\[(<][^\])>]{0,40}[\])>]\s*|[A-Z][A-Za-z]{0,15}\s*#?\d+[:.)]\s+|"
                        r"[A-Z]\d+:\d+\s+|"
                        # a discourse marker before the statement, by shape: an adverb in -ly and
                        # a comma ("Actually, ...", "Honestly, ..."), one word and a colon before a
                        # clause in lower case ("Correction: my sister ...", "Update: the ...")
                        r"[A-Z][a-z]+ly,\s+|[A-Z][a-z]+:\s+(?=[a-z]))+")


def strip_marker(text: str) -> str:
    """`[Turn 12] ...`, `Session 3: ...`, `D1:3 ...`, `Actually, ...`, `Update: the ...` -> the
    statement without its marker."""
    return _MARKER_RE.sub("", text, count=1)


def past_shaped(tok: Tok) -> bool:
    """A word shaped as a verb's past form: an irregular one, or "-ed" (not "-eed": "speed")."""
    word = tok.surface.lower()
    return word in IRREGULAR_PAST or (len(word) >= 5 and word.endswith("ed") and not word.endswith("eed"))


def bare(tok: Tok) -> str:
    """A word without a clitic ("That's" -> "that")."""
    return re.split(r"['’]", tok.surface.lower(), maxsplit=1)[0]


def pronoun_led(text: str, contracted: bool = False) -> bool:
    """Does the statement open on a personal pronoun ("It ...")? With `contracted`, one with a
    verb joined to it counts ("It's ...", "They'll ..."): for naming a node only (a clause cut
    reads "It's" as it always has)."""
    tokens = toks(strip_marker(text))
    return bool(tokens) and ((tokens[0].kind == "stop" and tokens[0].norm in PRONOUNS)
                             or (contracted and bare(tokens[0]) in PRONOUNS))


def demonstrative_led(text: str) -> bool:
    """Does the statement open on "this", "that", "these" or "those" standing for something said
    before ("That is great", "This only happens when ...", "Those never worked"), not bringing a
    noun ("This approach works")? By what follows it: a form of "be", an auxiliary or an adverb
    of the closed class (`PLAIN_ADVERBS`, "only", "really")."""
    tokens = toks(strip_marker(text))
    if not tokens or bare(tokens[0]) not in DEMONSTRATIVES:
        return False
    if bare(tokens[0]) != tokens[0].surface.lower():
        return True  # "That's awesome": the verb joined to it
    if len(tokens) < 2:
        return False
    after = tokens[1].surface.lower()
    return tokens[1].norm in BE or tokens[1].norm in AUXILIARIES or after in PLAIN_ADVERBS \
        or after in ("only", "really")


def han_share(text: str) -> float:
    """Han characters over Han characters and Latin letters: above 0.5 the text is Chinese."""
    han = len(re.findall(f"[{HAN}]", text))
    return han / max(1, han + len(re.findall(r"[A-Za-z]", text)))
