"""When a new statement changes an old one (pure): only on the statement's own evidence.

A fact is replaced only when the new statement itself says that it changed (`relation`):

- **the old value is named** (`named_change`): about the same subject, the new statement names a
  value of the old one and a new value of the same kind with a change between them: "from Leeds
  to Bristol", "13.4 -> 16.2", "Postgres instead of MySQL", "rather than", "in Bergen, not Oslo"
  (for plain words only the explicit "from X to Y"; 从X到Y, 从X改成Y);
- **the old no longer holds** (`negated`): the old statement restated, turned negative ("I no
  longer take the tram", "我不喝咖啡了").

Anything else stands beside the old statement, dated; recall orders them by time. Two statements
of one frame with two values ("I live in Leeds", later "I live in Bristol") are both kept: the
newer is found first, and no offline rule guesses that they answer one question (a chat model
may decide so, `nightly.apply_decision` checks its decision by structure). The word lists here
are closed grammatical classes (prepositions, pronouns, determiners, negation, the tokenizer's
stopwords, Chinese function characters), never attributes or topics. The module also splits a
line into its statements (`clauses`) and reads what a statement is about (`subject`).
"""

from __future__ import annotations

import re
from itertools import takewhile
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from memflow.tasks.ground.markdown import split_frontmatter
from memflow.tasks.ground.tokenize import INDEFINITE_PRONOUNS, STOPWORDS, tokenize

_HAN = "\u3400-\u4dbf\u4e00-\u9fff"
PREPOSITIONS = frozenset("""at on in for with before after during from to into onto by near under over
between without about of off through until via per than instead across around behind beside
within""".split())
PRONOUNS = frozenset("i we you he she they it 我 你 他 她 它".split())
_HAN_STOP = frozenset("的了是在也都着吗呢吧啊就和与及而或很还又已经我你他她它们")
_HAN_PREP = frozenset("从到成为改换")  # "从A到B", "改成B", "换为B": the named-value structure
# "now" and its like: function words of two characters (the first is no function character)
_HAN_NOW_RE = re.compile("现在|目前|如今")
_EN_NUMBERS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
_ZH_DIGITS = "零一二两三四五六七八九十百"
_TOKEN_RE = re.compile(
    rf"(?P<code>`[^`]+`|(?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+|\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+\b)"
    rf"|(?P<num>[$€£¥]?\d+(?:[.,:]\d+)*(?:%|[A-Za-z]{{1,4}}\b)?)"
    rf"|(?P<word>[A-Za-z\u00C0-\u024F][A-Za-z0-9_'\u00C0-\u024F-]*)"
    rf"|(?P<zhnum>[{_ZH_DIGITS}]+)"
    rf"|(?P<han>(?:(?![{_ZH_DIGITS}])[{_HAN}])+)"
    rf"|(?P<arrow>->|→|=>)"
    rf"|(?P<end>[.!?;。！？；])")


@dataclass(frozen=True)
class Tok:
    surface: str
    norm: str    # what is compared: lowercase stem, numbers as digits
    kind: str    # num | name | code | word | han | prep | stop
    unit: str = ""


def _zh_value(run: str) -> str:
    digits = {c: str(i) for i, c in enumerate("零一二三四五六七八九")} | {"两": "2"}
    if "十" not in run and "百" not in run:
        return "".join(digits.get(c, c) for c in run)
    head, _, rest = run.partition("十")
    return str((int(digits.get(head, "1")) if head else 1) * 10 + (int(digits.get(rest, "0")) if rest else 0)) \
        if "百" not in run else run


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
            out.append(Tok(surface, _zh_value(surface), "num"))
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
        if char in _HAN_STOP or char in _HAN_PREP:
            if word:
                out.append(Tok(word, word, "han"))
            out.append(Tok(char, char, "stop" if char in _HAN_STOP else "prep"))
            word = ""
        else:
            word += char
    return out + ([Tok(word, word, "han")] if word else [])


def _word(surface: str, sentence_start: bool) -> Tok:
    lower = surface.lower()
    if lower in _EN_NUMBERS and (sentence_start or not surface[0].isupper()):
        return Tok(surface, _EN_NUMBERS[lower], "num")  # mid-sentence "Zero" is a name
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


def _seq(text: str) -> list[Tok]:
    """Content, values and prepositions; Chinese function characters stay as word boundaries."""
    return [t for t in toks(text) if t.kind != "stop" or _is_han(t.surface)]


def _is_han(text: str) -> bool:
    return bool(re.match(f"[{_HAN}]", text))


def _content(tokens: list[Tok]) -> list[Tok]:
    return [t for t in tokens if t.kind not in ("prep", "stop")]


def _subject_run(text: str) -> list[Tok]:
    """The words a statement is about: a leading personal pronoun; else its first run of plain
    words, without its last word when no copula or other function word follows the run, or a
    determiner does (that word is the verb: "Jonas *lives* in", "the queue *takes* 3 s", "X
    *reads* the log"; "the quarterly budget *is*" keeps both); else its first name. A leading
    prepositional phrase is not the subject ("After the last build *the gairbeik cache* stopped
    ..."), nor a leading indefinite pronoun ("Nothing in *bamzaind* reads ..."); a one-word subject
    keeps its "of"/"for" complement ("the cluster *for tourdriommourt*"). At most two words
    (three with the complement's preposition)."""
    text = _after_leading_clause(strip_marker(text))
    tokens = toks(text)
    if pronoun_led(text, contracted=True) or demonstrative_led(text):
        return [tokens[0]]
    partitive = _partitive_end(tokens)
    if partitive:  # "Half of the fliok tests time out": the tests are what it is about
        tokens = tokens[partitive:]
    tokens = tokens[_leading_phrase_end(tokens):]
    if len(tokens) > 2 and tokens[0].surface.lower() in INDEFINITE_PRONOUNS and tokens[1].kind == "prep":
        tokens = tokens[2:]  # "Nothing in *bamzaind* reads ...": what the statement is about
    elif len(tokens) > 2 and tokens[0].surface.lower() in INDEFINITE_PRONOUNS:
        # "Nobody (really) owns *vollaith*": the pronoun says who does it, the object what of
        verb = 1 + sum(1 for _ in takewhile(lambda t: t.surface.lower() in _PLAIN_ADVERBS or (
            t.kind == "word" and t.surface.endswith("ly")), tokens[1:]))
        rest = [t for t in tokens[verb + 1:] if t.norm not in _DETERMINERS]
        if verb < len(tokens) and tokens[verb].kind in ("word", "stop") and tokens[verb].norm not in _BE \
                and tokens[verb].norm not in _AUXILIARIES and rest and rest[0].kind in ("word", "name"):
            tokens = rest
    if len(tokens) > 2 and tokens[0].kind == "word" and len(tokens[0].surface) >= 6 and tokens[0].surface.endswith("ly") \
            and (tokens[1].norm in _DETERMINERS or tokens[1].norm in PRONOUNS or tokens[1].kind == "name"):
        tokens = tokens[1:]  # "Mostly *the build* is slow", "Currently *we* run ...": an adverb by its shape
        if tokens[0].norm in PRONOUNS:
            return [tokens[0]]
    run: list[Tok] = []
    follower = None
    at = 0
    for at, tok in enumerate(tokens):
        if tok.kind in ("word", "han") and not (run and tok.norm in _AUXILIARIES):  # "X *may* use"
            if run and _past_shaped(tok) and not (len(run) == 1 and run[0].norm in _DETERMINERS):
                return run[:2]  # "That server *crashed* twice": a verb by its shape ends the subject
            run.append(tok)
            continue
        if tok.kind == "num" and not run:
            run.append(tok)  # "the nine gufou ...", "the 2 replicas ...": part of the subject
            continue
        if run:
            follower = tok
            break
        if tok.kind in ("name", "code"):
            return [tok]  # (a leading preposition is skipped: "After that the queue takes ...")
    if follower is not None and (follower.norm in ("of", "for") or follower.kind == "prep") and len(run) == 1:
        head = next((t for t in tokens[at + 1:at + 4] if t.norm not in _DETERMINERS), None)
        if head is not None and head.kind in ("word", "han", "name", "code"):
            # "the cluster *for tourdriommourt*", "the store *behind Niflund*": which one
            return [run[0], follower, head]
    if len(run) >= 2 and (follower is None or (follower.kind != "stop" and follower.norm not in _AUXILIARIES)
                          or follower.norm in _DETERMINERS):
        run = run[:-1]
    return run[:2]


_LEADING_CLAUSE_RE = re.compile(r"^\s*([^,;:]{1,60}?),\s+(?=\S+\s+\S)")
# Subordinating conjunctions (a closed class) opening a clause before the statement's own
SUBORDINATORS = frozenset("since once when whenever while whilst although though because if unless until "
                          "till as whereas now".split())


def _after_leading_clause(text: str) -> str:
    """The statement after a short clause or phrase leading it and closed by a comma ("after
    adding the index, p95 latency is ...", "Since the migration, the staging DB ...", "In
    March, we moved ..."): one that opens on a preposition or a subordinating conjunction, so
    not a statement of its own ("I live in Berlin, in a flat ...") or a name with an aside
    ("Lena, my wife, works at ...")."""
    lead = _LEADING_CLAUSE_RE.match(text)
    if not lead or len(lead.group(1).split()) > 8:
        return text
    first = toks(lead.group(1))[:1]
    if first and (first[0].kind == "prep" or first[0].surface.lower() in SUBORDINATORS):
        return text[lead.end():]
    return text


# Articles and possessive determiners (closed classes): a noun phrase starts after one
_DETERMINERS = frozenset("the a an this that these those its their our my your his her".split())
DETERMINERS = _DETERMINERS  # a closed class: what opens a noun phrase


def _leading_phrase_end(tokens: tuple[Tok, ...]) -> int:
    """Where the subject starts after a leading prepositional phrase ("After the last build the
    X cache ...": at "the X"): the statement opens on a preposition, its noun phrase's words, then a
    determiner opening another noun phrase. 0 when it does not open so."""
    if not tokens or tokens[0].kind != "prep":
        return 0
    content = False
    for i, tok in enumerate(tokens[1:], 1):
        if tok.kind in ("word", "han", "name", "code", "num"):
            content = True
        elif tok.norm in _DETERMINERS and content:
            return i
        elif tok.kind == "prep" or tok.norm in (",",):
            return 0
    return 0


# Quantifiers heading a partitive ("half of the ...", "30% of the ..."): a closed class
_QUANTIFIERS = frozenset("half quarter third rest majority minority part most some all none many few "
                         "several each both any number share".split())


def _partitive_end(tokens: tuple[Tok, ...]) -> int:
    """Where the noun phrase of a leading partitive starts ("Half of the X" -> at X), else 0."""
    head = [t for t in tokens[:4] if t.kind != "stop" or t.surface.lower() in _QUANTIFIERS]
    if len(head) >= 2 and (head[0].surface.lower() in _QUANTIFIERS or head[0].kind == "num") \
            and head[1].surface.lower() == "of":
        return tokens.index(head[1]) + 1
    return 0


def subject(text: str) -> str:
    """Who or what a statement is about, compared form ("the quarterly budget is ..." ->
    "quarterli budget")."""
    return " ".join(t.norm for t in _subject_run(text))


def subject_phrase(text: str) -> str:
    """The subject as written, for naming a node ("Quarterly budget", "Jonas"). A number is a
    value, never part of the name, so counts of one thing share its node ("The 2 replicas ..."
    and "The 3 replicas ..." -> "replicas"); a subject that is a number alone is named by what
    it counts ("About 1200 requests per second ..." -> "requests")."""
    run = _subject_run(text)
    kept = [t for t in run if t.norm not in PRONOUNS and t.kind != "num" and _bare(t) not in _DEMONSTRATIVES
            and _bare(t) not in PRONOUNS]
    while kept and kept[0].kind == "prep":  # "40% *of* requests" -> "requests"
        kept = kept[1:]
    if kept or not run or not all(t.kind == "num" for t in run):
        return " ".join(t.surface.strip("`") for t in kept)
    tokens = toks(text)
    at = tokens.index(run[-1]) if run[-1] in tokens else -1
    counted = tokens[at + 1] if 0 <= at < len(tokens) - 1 else None
    return counted.surface if counted is not None and counted.kind in ("word", "name") else ""


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


_DEMONSTRATIVES = frozenset("this that these those".split())


def _past_shaped(tok: Tok) -> bool:
    """A word shaped as a verb's past form: an irregular one, or "-ed" (not "-eed": "speed")."""
    word = tok.surface.lower()
    return word in _IRREGULAR_PAST or (len(word) >= 5 and word.endswith("ed") and not word.endswith("eed"))


def _bare(tok: Tok) -> str:
    """A word without a clitic ("That's" -> "that")."""
    return re.split(r"['’]", tok.surface.lower(), maxsplit=1)[0]


def demonstrative_led(text: str) -> bool:
    """Does the statement open on "this", "that", "these" or "those" standing for something said
    before ("That is great", "This only happens when ...", "Those never worked"), not bringing a
    noun ("This approach works")? By what follows it: a form of "be", an auxiliary or an adverb
    of the closed class (`_PLAIN_ADVERBS`, "only", "really")."""
    tokens = toks(strip_marker(text))
    if not tokens or _bare(tokens[0]) not in _DEMONSTRATIVES:
        return False
    if _bare(tokens[0]) != tokens[0].surface.lower():
        return True  # "That's awesome": the verb joined to it
    if len(tokens) < 2:
        return False
    after = tokens[1].surface.lower()
    return tokens[1].norm in _BE or tokens[1].norm in _AUXILIARIES or after in _PLAIN_ADVERBS \
        or after in ("only", "really")


def _same_subject(a: str, b: str) -> bool:
    """"manager" and "new manager" are one subject; "i" and "sister" are not."""
    words_a, words_b = set(a.split()), set(b.split())
    return bool(words_a) and (words_a <= words_b or words_b <= words_a)


def pronoun_led(text: str, contracted: bool = False) -> bool:
    """Does the statement open on a personal pronoun ("It ...")? With `contracted`, one with a
    verb joined to it counts ("It's ...", "They'll ..."): for naming a node only (a clause cut
    reads "It's" as it always has)."""
    tokens = toks(strip_marker(text))
    return bool(tokens) and ((tokens[0].kind == "stop" and tokens[0].norm in PRONOUNS)
                             or (contracted and _bare(tokens[0]) in PRONOUNS))


# Past forms of common irregular verbs, and the regular "-ed": a frame in the past tense tells
# of an event ("I visited Rome", "we went to the cinema"), and two events are two facts, never a
# change of value. A closed grammatical class, not a list of topics.
_IRREGULAR_PAST = frozenset("""went met saw got had took made came gave found bought ran ate drank
wrote left lost won began did said told brought thought felt kept sold sent spent built caught
taught fought flew drove rode swam sang sat stood heard held paid read""".split())


_BE = frozenset("is are was were be been being am 's 're".split())


def _is_qualifier(seq: list[Tok], start: int, led_by_pronoun: bool) -> bool:
    """Is the slot at `seq[start]` the object of a prepositional phrase that follows an object
    ("I drink tea *at* breakfast", "the team drinks tea *at* lunch"), rather than the predicate's
    own complement ("I live *in* Leeds", "my sister lives *in* Porto")?"""
    if start == 0 or seq[start - 1].kind != "prep" or seq[start - 1].norm in _HAN_PREP:
        return False
    before = [t for t in seq[:start - 1] if t.kind != "prep"]
    return len(before) >= (2 if led_by_pronoun else 3)


def named_change(new: str, old: str) -> bool:
    """Does the new statement name a value of the old one and a new value of the same kind, with
    a preposition between them ("from Leeds to Bristol"), about the same subject?"""
    a, b = _seq(old), _seq(new)
    subj = subject(old)
    old_norms = {t.norm for t in a}
    subject_norms = set(subj.split())
    # what the old statement says besides its subject: an occasion's change restates all of it
    # ("we deploy the search service on Tuesdays instead of Fridays" is no change of when the
    # billing service is deployed)
    frame = {t.norm for t in a if t.kind == "word"} - subject_norms
    # the same head (the verb after it may differ: "the queue takes ...", "the queue went from");
    # or the old statement restated whole, its subject now an object, with the old value set
    # against a new one outright ("We raised the Redis cache TTL from 300 to 900 seconds")
    if not _same_subject(subj, subject(new)):
        new_norms = {t.norm for t in b}
        return bool(subject_norms) and subject_norms | frame <= new_norms and any(
            value.kind in ("num", "name", "code") and value.norm not in subject_norms
            and _set_against(b, value, old_norms, new) for value in a)
    led_by_pronoun = pronoun_led(old)
    for i, value in enumerate(a):
        if value.norm in subject_norms:
            continue
        if value.kind not in ("num", "name", "code") and not _word_from_to(b, value, old_norms):
            continue
        if value.kind == "word" or _is_qualifier(a, i, led_by_pronoun):
            if value.kind == "word" or (_set_against(b, value, old_norms, new) and frame <= {t.norm for t in b}):
                return True
            continue  # a shared occasion ("on Fridays") beside another value is not its change
        spots = [j for j, t in enumerate(b) if t.norm == value.norm]
        fresh = [j for j, t in enumerate(b) if t.kind == value.kind and t.norm not in old_norms]
        if any(_from_to(b, s, f) for s in spots for f in fresh):
            return True  # "from Leeds to Bristol", "from 1.2 s down to 400 ms", "13.4 -> 16.2"
        if _set_against(b, value, old_norms, new):  # "in Bergen, not Oslo"
            return True
    return False


def named_old_values(text: str) -> list[str]:
    """The values a statement names as old ones (see `named_change`): X of "from X to Y", "from
    X (down|up)? to", 从X到/改成, "X -> Y", "instead of X", "rather than X", ", not X". Where the
    fact it changes may stand, whatever node it went to."""
    b = _seq(text)
    out = []
    for j, tok in enumerate(b):
        if tok.kind not in ("num", "name", "code", "word", "han"):
            continue
        later = [k for k in range(j + 1, min(len(b), j + 4)) if b[k].kind == tok.kind]
        before = [t.norm for t in b[max(0, j - 2):j]]
        if any(_from_to(b, j, k) for k in later) or before[-2:] in (["instead", "of"], ["rather", "than"]):
            out.append(tok.surface)
    contrast = re.search(r",\s*not\s+(?:the\s+|an?\s+)?([\w.-]+)", text, re.IGNORECASE)
    return [*out, contrast.group(1).rstrip(".")] if contrast else out


def _from_to(b: list[Tok], old: int, new: int) -> bool:
    """The old value at `old` turned into the new one at `new`, close after it: "from <old>
    (down|up)? to <new>" (从<old>到/改成<new>), or "<old> -> <new>". A preposition alone is no
    change: "bigger than Leeds", "a train to Bristol", "tea over coffee" set two values side by
    side."""
    if new <= old:
        return False
    between = b[old + 1:new]
    if sum(t.kind in ("word", "name", "code") for t in between) > 1:
        return False
    if any(t.surface in ("->", "→", "=>") for t in between):
        return True
    # "from <old>", or "from <name> <old>" ("from Postgres 14 to Postgres 16")
    led = old > 0 and (b[old - 1].norm in ("from", "从") or (
        old > 1 and b[old - 1].kind in ("name", "code") and b[old - 2].norm in ("from", "从")))
    return led and any(t.kind == "prep" and t.norm in ("to", "into", "到", "成", "为") for t in between)


def _set_against(b: list[Tok], value: Tok, old_norms: set[str], new: str = "") -> bool:
    """Does the new statement set a new value of the old value's kind against it, outright:
    "<new> instead of <old>", "<new> rather than <old>", "from <old> to <new>", "<new>, not
    <old>" (`new`: its text, where "not" is; tokens leave it out)? Only so does a qualifier's
    value change ("on Tuesdays instead of Fridays"): the same occasion next to another value
    ("dinner with Bo on Fridays" after "lunch with Ana on Fridays") is no change."""
    def fresh(tok: Tok | None) -> bool:
        return tok is not None and tok.kind == value.kind and tok.norm not in old_norms

    contrasted = bool(_CONTRAST_RE.search(new)) and re.search(rf",\s*not\s+(?:the\s+|an?\s+)?{re.escape(value.surface)}(?!\w)",
                                         new, re.IGNORECASE) is not None
    for j, tok in enumerate(b):
        if tok.norm != value.norm:
            continue
        if contrasted and any(fresh(t) for t in b[max(0, j - 2):j]):  # "45 seconds, not 30"
            return True
        before = [t.norm for t in b[max(0, j - 2):j]]
        # the new value just before, its unit word maybe after it ("366 stapu instead of 731")
        if before[-2:] in (["instead", "of"], ["rather", "than"]) and any(fresh(t) for t in b[max(0, j - 4):j - 2]):
            return True
        if before[-1:] == ["from"] and j + 2 < len(b) and b[j + 1].norm == "to" and fresh(b[j + 2]):
            return True
    return False


def _word_from_to(b: list[Tok], value: Tok, old_norms: set[str]) -> bool:
    """Plain words need the explicit "from <old> to <new>" (or 从<old>到/改成<new>)."""
    if value.kind not in ("word", "han"):
        return False
    for j, tok in enumerate(b):
        if tok.norm == value.norm and j > 0 and b[j - 1].norm in ("from", "从"):
            after = b[j + 1:]
            to = next((k for k, t in enumerate(after) if t.norm in ("to", "到", "成", "为")), None)
            if to is not None and to + 1 < len(after) and after[to + 1].norm not in old_norms \
                    and after[to + 1].kind in ("word", "han", "name"):
                return True
    return False


def han_share(text: str) -> float:
    """Han characters over Han characters and Latin letters: above 0.5 the text is Chinese."""
    han = len(re.findall(f"[{_HAN}]", text))
    return han / max(1, han + len(re.findall(r"[A-Za-z]", text)))


# "Tom is my manager now": a name (one or two words), a copula, a possessive noun phrase
_EQUATIONAL_RE = re.compile(r"^\s*([A-Z][\w-]*(?: [A-Z][\w-]*)?) (is|was|are|were) ((?:my|our|your|his|her|their)"
                            r"(?: [A-Za-z][\w-]*){1,2}?)(?=$|[.,!?;:]|\s)(.*)$", re.DOTALL)
_NOT_EQUATED = frozenset("it this that these those there here he she they we i you".split())


def equational(text: str) -> str:
    """A copula between a name and a possessive noun phrase says the same either way round:
    "Tom is my manager now" -> "My manager is Tom now", so it aligns with "My manager is Priya"
    (the noun phrase is one or two words, ending where a function word or the sentence's end
    follows: "my manager at work" -> "my manager" + " at work"; anything else stays as said)."""
    match = _EQUATIONAL_RE.match(text)
    if not match or match.group(1).lower() in _NOT_EQUATED:
        return text
    name, be, phrase, rest = match.groups()
    follower = re.match(r"\s*([A-Za-z']+)", rest)
    while follower and follower.group(1).lower() not in STOPWORDS and follower.group(1).lower() not in PREPOSITIONS:
        if len(phrase.split()) >= 3:
            return text  # a longer noun phrase than two words, or a clause: left as said
        phrase, rest = f"{phrase} {follower.group(1)}", rest[follower.end():]
        follower = re.match(r"\s*([A-Za-z']+)", rest)
    return f"{phrase[:1].upper()}{phrase[1:]} {be} {name}{rest}"


def relation(new: str, old: str) -> str | None:
    """"same" (the same statement again), "replaces" (evidence of a change, as above), or None
    (another fact that stands beside the old one)."""
    new, old = equational(new), equational(old)
    a, b = _content(_seq(old)), _content(_seq(new))
    if not a or not b:
        return None
    if negated(new) != negated(old) and not _negation_aside(new if negated(new) else old,
                                                            _affirmed(a) & _affirmed(b)):
        # the statement turned ("I drink coffee" -> "I do not drink coffee", "... no longer ...",
        # "我不喝咖啡了"): negation words are stopwords, so the words alone would read it as the
        # same statement again. Restated with at most one word more or less, it is a change;
        # otherwise another fact.
        norms_a, norms_b = _affirmed(a), _affirmed(b)
        extra = norms_a ^ norms_b  # "anymore", "again": not an occasion or a value added
        turned = (norms_a <= norms_b or norms_b <= norms_a) and len(extra) <= 1 \
            and not extra & (_qualified(_seq(old)) | _qualified(_seq(new))) \
            and not (_negates_extra(new, extra) or _negates_extra(old, extra))
        return "replaces" if turned and _same_subject(subject(_unsaid(new)), subject(_unsaid(old))) else None
    if {t.norm for t in a} == {t.norm for t in b}:
        return "same"
    if (han_share(new) > 0.5) != (han_share(old) > 0.5):
        return None  # another language: no frame to align, no value named against another
    values_a = {t.norm for t in a if t.kind in ("num", "name", "code")}
    values_b = {t.norm for t in b if t.kind in ("num", "name", "code")}
    norms_a, norms_b = {t.norm for t in a}, {t.norm for t in b}
    if values_a == values_b and len(norms_a & norms_b) / len(norms_a | norms_b) >= 0.8:
        return "same"
    if _OF_THE_DAY_RE.search(new) and _OF_THE_DAY_RE.search(old):
        return None  # "Back on Drisdanseir today", "Back on Zukcro today": two days' events
    if _points_elsewhere(new) and _points_elsewhere(old):
        return None  # "It costs 40 euros", "It costs 50 euros": two "it"s need not be one thing
    return "replaces" if named_change(new, old) else None


# the day a statement is said of (deictic time words, a closed class): "today", "yesterday",
# "this morning", 今天 ... A statement of its own day tells that day's event; two such are two
# days' events, not one value changed (a measure said of one day is not the next day's; one
# denying the other is still a change, read before this)
_OF_THE_DAY_RE = re.compile(r"\b(?:today|tonight|yesterday|tomorrow|this (?:morning|afternoon|evening))\b|"
                            r"今天|今晚|昨天|明天", re.IGNORECASE)
# negation, a closed grammatical class (English and Chinese); a leading "No," answers a question
_HAN_NEGATION = r"[不没沒](?![过仅但论管])"  # not 不过/不仅 (but, not only)
_NEGATION_RE = re.compile(r"\b(?:not|no|never|nor|neither|none|nobody|nothing|nowhere|cannot)\b|n['’]t\b|"
                          + _HAN_NEGATION, re.IGNORECASE)
_ANSWER_NO_RE = re.compile(r"^\s*no\b[\s,.!]*", re.IGNORECASE)


@lru_cache(maxsize=1 << 16)  # the dream compares a statement with many
def negated(text: str) -> bool:
    """Does the statement say something is not so (an odd count of negations: "not
    uncommon" is not negated)? Brackets (what was sent with it, asides) are left out."""
    bare = _CONTRAST_RE.sub(" ", _ANSWER_NO_RE.sub("", _BRACKETED_RE.sub(" ", text)))
    return len(_NEGATION_RE.findall(bare)) % 2 == 1


_CONTRAST_RE = re.compile(r",\s*not\b", re.IGNORECASE)  # "in Bergen, not Oslo": the old value set aside


def _qualified(seq: list[Tok]) -> set[str]:
    """The norms of the values and of the words in a prepositional phrase ("on *weekdays*")."""
    out, after_prep = set(), False
    for t in seq:
        if (after_prep and t.kind != "prep") or t.kind in ("num", "name", "code"):
            out.add(t.norm)
        after_prep = t.kind == "prep"
    return out


def _unsaid(text: str) -> str:
    """The statement without its negations, for finding its subject ("The X never reads Y")."""
    return " ".join(_NEGATION_RE.sub(" ", _NO_LONGER_RE.sub(" ", text)).split())


_NO_LONGER_RE = re.compile(r"\b(?:no|any) longer\b|\bany ?more\b", re.IGNORECASE)


_NEGATION_PARTS = frozenset("longer more anymore ever".split())  # "no longer", "not anymore": one negation


def _negation_scopes(text: str) -> list[set[str]]:
    """The words each negation of `text` bears on: the next three content words after it."""
    tokens = toks(_BRACKETED_RE.sub(" ", text))
    scopes = []
    for i, t in enumerate(tokens):
        if _NEGATION_RE.fullmatch(t.surface.lower()) or t.surface.lower().endswith(("n't", "n’t")):
            after = [u for u in tokens[i + 1:] if u.kind != "stop" and u.surface.lower() not in _NEGATION_PARTS]
            scopes.append({u.norm for u in after[:3]})
    return scopes


def _negates_extra(text: str, extra: set[str]) -> bool:
    """Does a negation of `text` bear on a word the other statement does not have ("Keep going
    and *never give* up" against "Keep going", "I won't quit, *no matter* what" against "I won't
    quit")? Then what is denied is not what both say: no turn of polarity. A negation bears on
    the next three content words after it."""
    return any(scope & extra for scope in _negation_scopes(text))


def _negation_aside(text: str, shared: set[str]) -> bool:
    """Does every negation of `text` bear only on words the other statement does not have ("I
    always drink a double espresso before my first meeting, *no sugar*" against "I switched from
    espresso to green tea")? Then the two do not differ in polarity on anything both say: the
    negated detail is one more word of one side, and whatever else shows a change still does."""
    scopes = _negation_scopes(text)
    return bool(scopes) and all(scope and not scope & shared for scope in scopes)


def _affirmed(tokens: list[Tok]) -> set[str]:
    """The tokens' norms without their negations ("don't" dropped, 不喝咖啡 -> 喝咖啡)."""
    out = set()
    for t in tokens:
        norm = _HAN_NEGATION_RE.sub("", t.norm) if t.kind == "han" else t.norm
        if norm and not (t.kind != "han" and _NEGATION_RE.fullmatch(norm) or norm.endswith(("n't", "n’t"))):
            out.add(norm)
    return out


_HAN_NEGATION_RE = re.compile(_HAN_NEGATION)


# A label before a colon ("Pooling helped a lot: p99 is down to 310 ms"): at most four words,
# then a statement of three words or more
_LABEL_RE = re.compile(r"^([^:：\n]{1,40})(?::\s|：)\s*(\S.*)$")


def strip_label(text: str) -> str:
    """The statement after a short label and its colon ("Change of plan: X moves to port 2" ->
    "X moves to port 2"); the text as it is otherwise."""
    labelled = _LABEL_RE.match(text)
    if labelled and len(labelled.group(1).split()) <= 4 and len(labelled.group(2).split()) >= 3:
        return labelled.group(2)
    return text


# personal pronouns whose referent two statements in two notes need not share (not "I", "we")
_REFERRING = frozenset("it they he she you".split())


def _points_elsewhere(text: str) -> bool:
    """Is the statement's subject only a pronoun standing for something said elsewhere ("It
    costs 40 euros", "That is 40 euros", "They live in Oslo")? Nothing then says that two such
    statements are about one thing."""
    if not (pronoun_led(text, contracted=True) or demonstrative_led(text)):
        return False
    return _bare(toks(strip_marker(text))[0]) in _REFERRING | _DEMONSTRATIVES


# a bracketed span: what a chat sent with a message ("[image: a photo of a table with snacks and
# a cell phone]") or an aside in parentheses; no statement ends inside one
_BRACKETED_RE = re.compile(r"\[[^\[\]\n]*\]|\([^()\n]*\)")


def split_outside(pattern: re.Pattern, text: str) -> tuple[list[str], list[str]]:
    """`text` split at the matches of `pattern` that are not inside brackets (`_BRACKETED_RE`):
    the parts, and the text of each split point between them."""
    masked = _BRACKETED_RE.sub(lambda m: m.group(0)[0] + "\0" * (len(m.group(0)) - 2) + m.group(0)[-1], text)
    parts, joints, start = [], [], 0
    for match in pattern.finditer(masked):
        parts.append(text[start:match.start()])
        joints.append(text[match.start():match.end()])
        start = match.end()
    parts.append(text[start:])
    return parts, joints


_CLAUSE_SPLIT_RE = re.compile(r"\s*(?:,?\s+(?:and|but|while|whereas)\s+|;\s*|，(?:而且|并且|但是?|还)?|；"
                              # a comma before a clause of its own: a name or "I"/"we", then a
                              # word in lower case ("My new manager is Tom, Priya moved to ..."),
                              # not a list ("Paris, Rome and Berlin") or an aside ("Tom, my ...")
                              r"|,\s+(?=(?:[A-Z][a-z]+|I|[Ww]e)(?:['’][a-z]+)?\s+(?!(?:and|or|nor)\b)[a-z]))\s*")


def clauses(text: str) -> list[str]:
    """A line that states several facts, split into one statement each ("I live in Porto and
    teach at the conservatory" -> "I live in Porto", "I teach at the conservatory"); a part too
    small to be a statement ("salt and pepper", "between 3 and 5") stays joined. A part without a
    subject of its own borrows the first part's pronoun."""
    parts, joints = split_outside(_CLAUSE_SPLIT_RE, text.strip())
    parts = [p for p in parts if p]
    if len(parts) < 2:
        return [text]
    merged: list[str] = []
    before: list[str] = []  # the joint in front of each merged part
    for i, part in enumerate(parts):
        if merged and (len(_content(_seq(part))) < 2 or len(_content(_seq(merged[-1]))) < 2
                       or _compound_subject(merged[-1], part)):
            merged[-1] = f"{merged[-1]}{joints[i - 1]}{part}"
        else:
            merged.append(part)
            before.append(joints[i - 1] if i else "")
    if len(merged) < 2:
        return [text]
    lead = toks(merged[0])[0] if toks(merged[0]) else None
    out = [merged[0].rstrip(" ,.;")]
    for part, joint in zip(merged[1:], before[1:]):
        first = toks(part)[0] if toks(part) else None
        if _SEMICOLON_RE.fullmatch(joint) and _noun_led(part):
            pass  # "...; coffee was ruining my sleep": a clause with its own subject and verb
        elif first and (first.kind == "word" or first.norm in _AUXILIARIES) and part[:1].islower():  # no subject
            if _noun_led(part) or not (lead and pronoun_led(merged[0]) and _plain_head(merged[0])):
                # only the first part's pronoun, when it alone is the head the part continues,
                # can be lent: "find peace in it" or "hiking the other day" alone is no fact
                out[-1] = f"{out[-1]}{joint}{part}".rstrip(" ,.;")
                continue
            if _GERUND_RE.fullmatch(first.surface):
                # "I usually go climbing on Tuesdays and swimming on Fridays": the part continues
                # the first part's verb, not its pronoun ("I swimming on Fridays" says nothing):
                # it borrows what comes before the first part's own -ing word, or stays joined
                verb = _GERUND_RE.search(merged[0], len(lead.surface))
                if verb is None:
                    out[-1] = f"{out[-1]}{joint}{part}".rstrip(" ,.;")
                    continue
                part = f"{merged[0][:verb.start()]}{part}"
            else:
                part = f"{lead.surface} {part}"
        out.append(part.rstrip(" ,.;"))
    return out if len(out) > 1 else [text]


_SEMICOLON_RE = re.compile(r"\s*[;；]\s*")  # joins clauses (never noun phrases, as "and" may)


# an -ing form by its shape (a vowel before the ending: "swimming", "going"; not "bring", "thing")
_GERUND_RE = re.compile(r"\b[a-z]*[aeiouy][a-z]*ing\b")


def _compound_subject(before: str, part: str) -> bool:
    """"My wife Lena and I have two kids": the part before "and" is a short noun phrase (two
    content words at most, no preposition, no pronoun of its own) and the part after opens on
    a subject pronoun: one subject of two, not two statements ("My wife Lena" is no fact)."""
    first = toks(part)[0] if toks(part) else None
    if first is None or first.norm not in _SUBJECTS:
        return False
    seq = _seq(before)
    return len(_content(seq)) <= 2 and not any(t.kind == "prep" for t in seq) and not pronoun_led(before)


# auxiliary and modal verbs: a closed grammatical class (a tense or mood, not a fact's verb)
_AUXILIARIES = frozenset("""am is are was were be been being have has had do does did will would
shall should can could may might must ought""".split())


_SUBJECTS = frozenset("i he she we they".split())  # pronouns only ever subjects (not "it", "you")


def is_clause(text: str) -> bool:
    """Does a short statement say something of something: a subject pronoun, an auxiliary or a
    copula, a verb's past form or a present "-s" after the first word? "Back on Fiontour today"
    and "the grorvear part again" do not (fragments: a node of them holds no fact); "Kenji owns
    billing now", "I live in Leeds", "Signed the lease in Porto" do. Longer statements and
    Chinese are taken as clauses (nothing here can tell)."""
    if han_share(text) > 0.3:
        return True
    words = [w.lower() for w in re.findall(r"[A-Za-z][\w'’]*", text)]
    if len(words) > CLAUSE_WORDS:
        return True
    parts = {re.split(r"['’]", w, maxsplit=1)[0] for w in words}
    if parts & (_SUBJECTS | _AUXILIARIES | _BE | {"it", "you"}) or any(
            re.search(r"['’](?:s|re|ve|ll|d|m)$", w) for w in words):
        return True
    return any(_past_shaped(Tok(w, w, "word")) or (n > 0 and len(w) > 3 and w.endswith("s") and not
               w.endswith("ss")) for n, w in enumerate(words))


CLAUSE_WORDS = 6  # past this many words a statement is taken as saying something


def _noun_led(part: str) -> bool:
    """A part after "and" whose first word is followed by a verb of its own (an auxiliary or
    copula: "infrastructure are key", "pears were cheap") or by a pronoun starting a clause
    ("power you were talking about"): that word is a noun, the subject of that verb or the head
    of that clause, not a verb the first part's pronoun could take ("I infrastructure are key"
    would be a statement nobody made). The "and" joins noun phrases: the sentence stays whole."""
    tokens = toks(part)
    if len(tokens) < 2 or tokens[0].kind != "word" or tokens[0].norm in _AUXILIARIES:
        return False
    return tokens[1].norm in _AUXILIARIES or tokens[1].norm in _SUBJECTS or tokens[1].norm == "you"


def _plain_head(part: str) -> bool:
    """Whether a pronoun-led statement's pronoun alone is the head that a subjectless part after
    "and" continues: its verb comes right after the pronoun ("I live in Porto and teach ..."),
    not an auxiliary or modal ("I will visit Rome and see ..." -> not "I see ..."), with no
    infinitive ("I want to get stronger and improve ..." -> not "I improve ...") and no second
    clause ("It can be hard, so I try ... and make sure ..." -> not "It make sure ...") in
    between. Read from word classes, not from a list of verbs."""
    tokens = toks(part)
    if len(tokens) < 2 or tokens[1].kind != "word" or tokens[1].norm in _AUXILIARIES or "," in part:
        return False
    if any(tok.norm in _SUBJECTS for tok in tokens[1:]):  # "It reminded me of a sunset I saw while ..."
        return False
    return not any(tok.norm == "to" and nxt.kind == "word" and nxt.surface[:1].islower()
                   and nxt.norm not in _DETERMINERS for tok, nxt in zip(tokens[1:], tokens[2:]))


# a line's leading speaker or role ("- user: ", "Ana: "), as a note line writes it
WHO_PREFIX_RE = re.compile(r"^\s*(?:[-*+]\s+)?[^\s:]{1,30}(?: [^\s:]{1,30})?: ")
# what ends a run of words as a sentence end does: a link, a bracketed marker, a bold label, a
# heading mark, a colon ("[code, 7 lines] Nothing in ...", "- **retry**: Half of ...")
_BREAK_RE = re.compile(r"\[\[[^\]]*\]\]|\[[^\]]*\]|\*\*[^*]*\*\*:?|(?:^|\s)#{1,6}\s|:\s|^\s*(?:[-*+]|\d+[.)])\s",
                       re.MULTILINE)


# adverbs of place, time and degree not shaped "-ly" that may stand between a subject and its
# verb ("Everyone here uses X", "Nobody still owns X"): a closed class
_PLAIN_ADVERBS = frozenset("here there also still just even now then already ever never always often".split())


def _names(text: str) -> list[Tok]:
    return [t for t in toks(_BREAK_RE.sub(". ", text)) if t.kind == "name"
            and t.norm not in _QUANTIFIERS and t.norm not in INDEFINITE_PRONOUNS]


def context_names(line: str, note: str, statement: str) -> frozenset[str]:
    """What a statement was said about besides its own words: the names its source line
    mentions ("We pinned X to 5.3 in the lock file. The cluster is rebuilt whenever *Stakpraith*
    rotates its keys.") and the names its note comes back to (in two lines or more: a session
    about one project names it again and again). The speaker's name in front of a line is not
    context."""
    own = {t.norm for t in toks(statement)}
    here = {t.norm for t in _names(WHO_PREFIX_RE.sub("", line, count=1))}
    return frozenset((here | recurring_names(note)) - own)


@lru_cache(maxsize=512)
def recurring_names(note: str) -> frozenset[str]:
    """The names a note's lines come back to, in two lines or more (its frontmatter and headings
    left out: a title is chosen, not said; speakers' names in front of their lines left out)."""
    seen: dict[str, int] = {}
    for line in split_frontmatter(note)[1].split("\n"):
        if line.lstrip().startswith("#"):
            continue
        for norm in {t.norm for t in _names(WHO_PREFIX_RE.sub("", line, count=1))}:
            seen[norm] = seen.get(norm, 0) + 1
    return frozenset(n for n, count in seen.items() if count >= 2)


def other_context(new: str, new_source: tuple[str, str], old: str, old_source: tuple[str, str]) -> bool:
    """Were two statements made about different things? Each was said with names besides its
    own words (`context_names` of its (line, note)) and none is shared: "we pinned X to 4.3" said
    in a session about one project does not change "we pinned X to 5.3" said about another. A
    statement said with no other name (a short chat) says nothing of its context: the rule then
    stays out of the way."""
    a, b = context_names(*old_source, old), context_names(*new_source, new)
    return bool(a) and bool(b) and not (a & b)


def ungrounded(new: str, cited: str) -> list[str]:
    """What of a new statement is not in the `cited` lines: each value it holds (a number, a
    name, an identifier, a Chinese word) missing from them; a statement holding no value, its
    words when fewer than half are there (a paraphrase keeps the values, not every word: "The
    user lives in Bristol" from "we moved to Bristol"). Empty: the statement comes from them."""
    said = {t.norm for t in _content(_seq(cited))}
    tokens = _content(_seq(new))
    values = [t for t in tokens if t.kind in ("num", "name", "code", "han")]
    if values:
        return [t.surface for t in values if t.norm not in said]
    unsaid = [t.surface for t in tokens if t.norm not in said]
    return unsaid if not tokens or len(unsaid) * 2 > len(tokens) else []
