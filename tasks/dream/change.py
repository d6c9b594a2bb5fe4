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
are closed grammatical classes (negations, personal pronouns; the others are in `words`), never
attributes or topics. Statements come cut and their subjects read by
`statements`; `ungrounded` checks a model's decision against the lines it cites.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memflow.tasks.dream.statements import WHO_PREFIX_RE, subject
from memflow.tasks.dream.words import (BRACKETED_RE, HAN_PREP, PREPOSITIONS, PRONOUNS, QUANTIFIERS, Tok, content_words, han_share,
                                       pronoun_led, seq_of, toks)
from memflow.tasks.ground.markdown import split_frontmatter
from memflow.tasks.ground.tokenize import INDEFINITE_PRONOUNS, STOPWORDS


def _same_subject(a: str, b: str) -> bool:
    """"manager" and "new manager" are one subject; "i" and "sister" are not."""
    words_a, words_b = set(a.split()), set(b.split())
    return bool(words_a) and (words_a <= words_b or words_b <= words_a)


def _is_qualifier(seq: list[Tok], start: int, led_by_pronoun: bool) -> bool:
    """Is the slot at `seq[start]` the object of a prepositional phrase that follows an object
    ("I drink tea *at* breakfast", "the team drinks tea *at* lunch"), rather than the predicate's
    own complement ("I live *in* Leeds", "my sister lives *in* Porto")?"""
    if start == 0 or seq[start - 1].kind != "prep" or seq[start - 1].norm in HAN_PREP:
        return False
    before = [t for t in seq[:start - 1] if t.kind != "prep"]
    return len(before) >= (2 if led_by_pronoun else 3)


def named_change(new: str, old: str) -> bool:
    """Does the new statement name a value of the old one and a new value of the same kind, with
    a preposition between them ("from Leeds to Bristol"), about the same subject?"""
    a = seq_of(old)
    b = cut_by(seq_of(new), {t.norm for t in a if t.kind == "han"})
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
    new_subject = set(subject(new).split())
    # about what the old statement names: the same subject, or one the old statement holds
    # ("Current mix has 10% code" and "code goes from 10% to 15%"; a pronoun, "I'm", is no
    # such thing: any statement may hold it)
    held = bool(new_subject) and new_subject <= old_norms and not any(
        re.split(r"['’]", w, maxsplit=1)[0] in PRONOUNS for w in new_subject)
    if not _same_subject(subj, subject(new)) and not held:
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


def cut_by(tokens: list[Tok], words: set[str]) -> list[Tok]:
    """Chinese words of `tokens` cut where one of `words` (the other statement's) opens or ends
    them: written without spaces, "从杭州改成上海" reads "杭州改" as one word (no function
    character stands between the value and the verb after it) until the old statement's "杭州"
    shows where the value ends, whatever the verb."""
    longest = sorted(words, key=lambda w: (-len(w), w))
    out: list[Tok] = []
    for tok in tokens:
        shorter = [w for w in longest if tok.kind == "han" and len(w) < len(tok.norm)]
        # a word opening it first (the value before its verb), then one ending it
        at = next((len(w) for w in shorter if tok.norm.startswith(w)), None) or \
            next((len(tok.norm) - len(w) for w in shorter if tok.norm.endswith(w)), None)
        if at is None:
            out.append(tok)
        else:
            out += [Tok(tok.norm[:at], tok.norm[:at], "han"), Tok(tok.norm[at:], tok.norm[at:], "han")]
    return out


def named_old_values(text: str) -> list[str]:
    """The values a statement names as old ones (see `named_change`): X of "from X to Y", "from
    X (down|up)? to", 从X到/改成, "X -> Y", "instead of X", "rather than X", ", not X". Where the
    fact it changes may stand, whatever node it went to."""
    b = seq_of(text)
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


def names_old_value(new: str, old: str) -> bool:
    """Does the new statement name a value of the old one as its old value (`named_old_values`)?"""
    held = {t.norm for t in seq_of(old) if t.kind in ("num", "name", "code", "han", "word")}
    return any(t.norm in held for value in named_old_values(new) for t in seq_of(value))


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
            # "to" right after the old value, or one word on ("from A down to B", 从A改成B): a
            # "to" further on belongs to another phrase ("away from the court, ... a way to be")
            if to is not None and to <= 1 and to + 1 < len(after) and after[to + 1].norm not in old_norms \
                    and after[to + 1].kind in ("word", "han", "name"):
                return True
    return False


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
    a, b = content_words(seq_of(old)), content_words(seq_of(new))
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
            and not extra & (_qualified(seq_of(old)) | _qualified(seq_of(new))) \
            and not (_negates_extra(new, extra) or _negates_extra(old, extra))
        return "replaces" if turned and _same_subject(subject(_unsaid(new)), subject(_unsaid(old))) else None
    if {t.norm for t in a} == {t.norm for t in b}:
        return "same"
    values_a = {t.norm for t in a if t.kind in ("num", "name", "code")}
    values_b = {t.norm for t in b if t.kind in ("num", "name", "code")}
    norms_a, norms_b = {t.norm for t in a}, {t.norm for t in b}
    one_language = (han_share(new) > 0.5) == (han_share(old) > 0.5)
    if one_language and values_a == values_b and len(norms_a & norms_b) / len(norms_a | norms_b) >= 0.8:
        return "same"
    # a change the statement itself names, said as done (not planned, wished or supposed), of a
    # line that states nothing else besides (its other values all said again: replacing "X is
    # 1.29, Y writes to Z 14" on "Z went from 14 to 16" would put X and Y into the history too)
    if tentative(new) or states_more(old, values_b):
        return None
    return "replaces" if named_change(new, old) else None


# modal auxiliaries, "going to", conditional conjunctions (English, Chinese: 能愿动词 and 如果/要是/
# 假如) and the progressive aspect ("we're migrating X from A to B next quarter"): closed
# grammatical classes that say a change is planned, wished, supposed or under way, not done
_TENTATIVE_RE = re.compile(r"\b(?:will|would|shall|should|could|might|must|can|going to|gonna|if|unless|"
                           r"whether)\b|\b(?-i:may)\b|['’](?:ll|d)\b|"
                           r"\b(?:am|is|are|be|being)\s+\w+ing\b|['’]re\s+\w+ing\b|"
                           r"想|要|会|能|可能|应该|如果|要是|假如|若", re.IGNORECASE)


def states_more(old: str, kept: set[str]) -> bool:
    """Does the old line state another fact besides the one a new statement changes: a part of
    it after a comma or a semicolon, not opening on a preposition (which qualifies the part
    before it: "I live in Berlin, in a flat near X"), whose values the new statement neither
    names nor keeps any of ("Cluster is EKS 1.29, workers write to RDS Postgres 14")?"""
    groups: list[list[Tok]] = []
    for n, part in enumerate(re.split(r"[,;，；]", old)):
        tokens = seq_of(f"and {part}" if n else part)  # a capital after the comma opens no sentence
        if tokens and tokens[0].kind == "prep" and groups:
            groups[-1] += tokens
        elif tokens:
            groups.append(tokens)
    for tokens in groups:
        values = {t.norm for t in tokens if t.kind in ("num", "name", "code")}
        if values and not values & kept:
            return True
    return False


def tentative(text: str) -> bool:
    """Does the statement say its change is planned, wished, supposed or under way (a modal
    auxiliary, "going to", a conditional conjunction, the progressive aspect), not done?"""
    return bool(_TENTATIVE_RE.search(BRACKETED_RE.sub(" ", text)))


# negation, a closed grammatical class (English and Chinese); a leading "No," answers a question
_HAN_NEGATION = r"[不没沒](?![过仅但论管])"  # not 不过/不仅 (but, not only)
_NEGATION_RE = re.compile(r"\b(?:not|no|never|nor|neither|none|nobody|nothing|nowhere|cannot)\b|n['’]t\b|"
                          + _HAN_NEGATION, re.IGNORECASE)
_ANSWER_NO_RE = re.compile(r"^\s*no\b[\s,.!]*", re.IGNORECASE)


@lru_cache(maxsize=1 << 16)  # the dream compares a statement with many
def negated(text: str) -> bool:
    """Does the statement say something is not so (an odd count of negations: "not
    uncommon" is not negated)? Brackets (what was sent with it, asides) are left out."""
    said = _CONTRAST_RE.sub(" ", _ANSWER_NO_RE.sub("", BRACKETED_RE.sub(" ", text)))
    return len(_NEGATION_RE.findall(said)) % 2 == 1


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
    tokens = toks(BRACKETED_RE.sub(" ", text))
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


# what ends a run of words as a sentence end does: a link, a bracketed marker, a bold label, a
# heading mark, a colon ("[code, 7 lines] Nothing in ...", "- **retry**: Half of ...")
_BREAK_RE = re.compile(r"\[\[[^\]]*\]\]|\[[^\]]*\]|\*\*[^*]*\*\*:?|(?:^|\s)#{1,6}\s|:\s|^\s*(?:[-*+]|\d+[.)])\s",
                       re.MULTILINE)


def _names(text: str) -> list[Tok]:
    return [t for t in toks(_BREAK_RE.sub(". ", text)) if t.kind == "name"
            and t.norm not in QUANTIFIERS and t.norm not in INDEFINITE_PRONOUNS]


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
    said = {t.norm for t in content_words(seq_of(cited))}
    tokens = content_words(seq_of(new))
    values = [t for t in tokens if t.kind in ("num", "name", "code", "han")]
    if values:
        return [t.surface for t in values if t.norm not in said]
    unsaid = [t.surface for t in tokens if t.norm not in said]
    return unsaid if not tokens or len(unsaid) * 2 > len(tokens) else []
