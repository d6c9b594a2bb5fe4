"""A daily line cut into statements, and what each statement is about (pure).

`clauses` splits a line that states several facts into one statement each ("I live in Porto and
teach at the conservatory" -> "I live in Porto", "I teach at the conservatory"), never inside
brackets (`split_outside`); `is_clause` tells a statement from a fragment; `subject` and
`subject_phrase` read who or what a statement is about, for finding and naming its digest node.
All of it is read from word classes (`words`), not from lists of verbs or topics.
"""

from __future__ import annotations

import re
from itertools import takewhile

from memflow.tasks.dream.words import (AUXILIARIES, BE, BRACKETED_RE, DEMONSTRATIVES, DETERMINERS, EXISTENTIALS,
                                       PLAIN_ADVERBS, PREPOSITIONS, PRONOUNS, QUANTIFIERS, SUBJECT_PRONOUNS, Tok,
                                       bare, content_words, demonstrative_led, han_share, past_shaped, pronoun_led,
                                       seq_of, strip_marker, toks)
from memflow.tasks.ground.tokenize import INDEFINITE_PRONOUNS


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
    introduced = _existential(tokens)
    if introduced is not None:
        return introduced
    partitive = _partitive_end(tokens)
    if partitive:  # "Half of the fliok tests time out": the tests are what it is about
        tokens = tokens[partitive:]
    tokens = tokens[_leading_phrase_end(tokens):]
    if len(tokens) > 2 and tokens[0].surface.lower() in INDEFINITE_PRONOUNS and tokens[1].kind == "prep":
        tokens = tokens[2:]  # "Nothing in *bamzaind* reads ...": what the statement is about
    elif len(tokens) > 2 and tokens[0].surface.lower() in INDEFINITE_PRONOUNS:
        # "Nobody (really) owns *vollaith*": the pronoun says who does it, the object what of
        verb = 1 + sum(1 for _ in takewhile(lambda t: t.surface.lower() in PLAIN_ADVERBS or (
            t.kind == "word" and t.surface.endswith("ly")), tokens[1:]))
        rest = [t for t in tokens[verb + 1:] if t.norm not in DETERMINERS]
        if verb < len(tokens) and tokens[verb].kind in ("word", "stop") and tokens[verb].norm not in BE \
                and tokens[verb].norm not in AUXILIARIES and rest and rest[0].kind in ("word", "name"):
            tokens = rest
    if len(tokens) > 2 and tokens[0].kind == "word" and len(tokens[0].surface) >= 6 and tokens[0].surface.endswith("ly") \
            and (tokens[1].norm in DETERMINERS or tokens[1].norm in PRONOUNS or tokens[1].kind == "name"):
        tokens = tokens[1:]  # "Mostly *the build* is slow", "Currently *we* run ...": an adverb by its shape
        if tokens[0].norm in PRONOUNS:
            return [tokens[0]]
    run: list[Tok] = []
    follower = None
    at = 0
    for at, tok in enumerate(tokens):
        if tok.kind in ("word", "han") and not (run and tok.norm in AUXILIARIES):  # "X *may* use"
            if run and past_shaped(tok) and not (len(run) == 1 and run[0].norm in DETERMINERS):
                return run[:2]  # "That server *crashed* twice": a verb by its shape ends the subject
            if run and tok.surface.lower() in PLAIN_ADVERBS:
                return run[:2]  # "Kenji *never* approved it": an adverb between the subject and its verb
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
        head = next((t for t in tokens[at + 1:at + 4] if t.norm not in DETERMINERS), None)
        if head is not None and head.kind in ("word", "han", "name", "code"):
            # "the cluster *for tourdriommourt*", "the store *behind Niflund*": which one
            return [run[0], follower, head]
    if len(run) >= 2 and (follower is None or (follower.kind != "stop" and follower.norm not in AUXILIARIES)
                          or follower.norm in DETERMINERS):
        run = run[:-1]
    return run[:2]


def _existential(tokens: tuple[Tok, ...]) -> list[Tok] | None:
    """The subject of an existential or presentational clause ("There's also *a cron job* that
    ...", "There are 3 *replicas* ...", "Here is the new *team photo*"): the noun phrase after
    "there"/"here" and a form of "be" (auxiliaries, adverbs, determiners and numbers before it
    skipped), its last two words (English puts the head last); None for any other statement.
    Read as a plain subject, the adverb ("also") or the adjective before the head named it."""
    if len(tokens) < 2 or bare(tokens[0]) not in EXISTENTIALS:
        return None
    at = 1
    if bare(tokens[0]) == tokens[0].surface.lower():  # no verb joined to it: "There is", "There has been"
        while at < len(tokens) and tokens[at].norm in AUXILIARIES and tokens[at].norm not in BE:
            at += 1
        if at >= len(tokens) or tokens[at].norm not in BE:
            return None  # "There we go", "Here it ends": no existential
    while at < len(tokens) and (tokens[at].norm in BE or tokens[at].norm in AUXILIARIES
                                or tokens[at].surface.lower() in PLAIN_ADVERBS or tokens[at].norm in DETERMINERS
                                or tokens[at].kind == "num" or tokens[at].surface.lower().endswith("ly")):
        at += 1
    if at < len(tokens) and tokens[at].kind in ("name", "code"):
        return [tokens[at]]
    run = list(takewhile(lambda t: t.kind in ("word", "han", "name"), tokens[at:]))
    return run[-2:] or None


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
        elif tok.norm in DETERMINERS and content:
            return i
        elif tok.kind == "prep" or tok.norm in (",",):
            return 0
    return 0


def _partitive_end(tokens: tuple[Tok, ...]) -> int:
    """Where the noun phrase of a leading partitive starts ("Half of the X" -> at X), else 0."""
    head = [t for t in tokens[:4] if t.kind != "stop" or t.surface.lower() in QUANTIFIERS]
    if len(head) >= 2 and (head[0].surface.lower() in QUANTIFIERS or head[0].kind == "num") \
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
    kept = [t for t in run if t.norm not in PRONOUNS and t.kind != "num" and bare(t) not in DEMONSTRATIVES
            and bare(t) not in PRONOUNS]
    while kept and kept[0].kind == "prep":  # "40% *of* requests" -> "requests"
        kept = kept[1:]
    if kept or not run or not all(t.kind == "num" for t in run):
        return " ".join(t.surface.strip("`") for t in kept)
    tokens = toks(text)
    at = tokens.index(run[-1]) if run[-1] in tokens else -1
    counted = tokens[at + 1] if 0 <= at < len(tokens) - 1 else None
    return counted.surface if counted is not None and counted.kind in ("word", "name") else ""


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


def split_outside(pattern: re.Pattern, text: str) -> tuple[list[str], list[str]]:
    """`text` split at the matches of `pattern` that are not inside brackets (`BRACKETED_RE`):
    the parts, and the text of each split point between them."""
    masked = BRACKETED_RE.sub(lambda m: m.group(0)[0] + "\0" * (len(m.group(0)) - 2) + m.group(0)[-1], text)
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
        if merged and (len(content_words(seq_of(part))) < 2 or len(content_words(seq_of(merged[-1]))) < 2
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
        elif first and (first.kind == "word" or first.norm in AUXILIARIES) and part[:1].islower():  # no subject
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
    if first is None or first.norm not in SUBJECT_PRONOUNS:
        return False
    seq = seq_of(before)
    return len(content_words(seq)) <= 2 and not any(t.kind == "prep" for t in seq) and not pronoun_led(before)


def is_clause(text: str) -> bool:
    """Does a short statement say something of something: a subject pronoun, an auxiliary or a
    copula, a verb's past form or a present "-s" after the first word? "Back on Fiontour today"
    and "the grorvear part again" do not (fragments: a node of them holds no fact); "Kenji owns
    billing now", "I live in Leeds", "Signed the lease in Porto" do. Longer statements and
    Chinese are taken as clauses (nothing here can tell)."""
    if han_share(text) > 0.3:
        return True
    said = re.findall(r"[A-Za-z][\w'’]*", text)
    words = [w.lower() for w in said]
    if len(words) > CLAUSE_WORDS:
        return True
    parts = {re.split(r"['’]", w, maxsplit=1)[0] for w in words}
    if parts & (SUBJECT_PRONOUNS | AUXILIARIES | BE | {"it", "you"}) or any(
            re.search(r"['’](?:s|re|ve|ll|d|m)$", w) for w in words):
        return True
    return any((past_shaped(Tok(w, w, "word")) and not (n > 0 and said[n][0].isupper()))
               or (n > 0 and _present_s(said[n], words[n - 1])) for n, w in enumerate(words))


def _present_s(word: str, before: str) -> bool:
    """A verb's present "-s" after the first word ("Kenji owns billing now"): not a name
    capitalised inside the sentence ("Back on Chosstus today"), nor a word after a determiner or
    a preposition, which heads a noun phrase ("the grairtshios part again")."""
    return len(word) > 3 and word.endswith("s") and not word.endswith("ss") and not word[0].isupper() \
        and before not in DETERMINERS and before not in PREPOSITIONS


CLAUSE_WORDS = 6  # past this many words a statement is taken as saying something


def _noun_led(part: str) -> bool:
    """A part after "and" whose first word is followed by a verb of its own (an auxiliary or
    copula: "infrastructure are key", "pears were cheap") or by a pronoun starting a clause
    ("power you were talking about"): that word is a noun, the subject of that verb or the head
    of that clause, not a verb the first part's pronoun could take ("I infrastructure are key"
    would be a statement nobody made). The "and" joins noun phrases: the sentence stays whole."""
    tokens = toks(part)
    if len(tokens) < 2 or tokens[0].kind != "word" or tokens[0].norm in AUXILIARIES:
        return False
    return tokens[1].norm in AUXILIARIES or tokens[1].norm in SUBJECT_PRONOUNS or tokens[1].norm == "you"


def _plain_head(part: str) -> bool:
    """Whether a pronoun-led statement's pronoun alone is the head that a subjectless part after
    "and" continues: its verb comes right after the pronoun ("I live in Porto and teach ..."),
    not an auxiliary or modal ("I will visit Rome and see ..." -> not "I see ..."), with no
    infinitive ("I want to get stronger and improve ..." -> not "I improve ...") and no second
    clause ("It can be hard, so I try ... and make sure ..." -> not "It make sure ...") in
    between. Read from word classes, not from a list of verbs."""
    tokens = toks(part)
    if len(tokens) < 2 or tokens[1].kind != "word" or tokens[1].norm in AUXILIARIES or "," in part:
        return False
    if any(tok.norm in SUBJECT_PRONOUNS for tok in tokens[1:]):  # "It reminded me of a sunset I saw while ..."
        return False
    return not any(tok.norm == "to" and nxt.kind == "word" and nxt.surface[:1].islower()
                   and nxt.norm not in DETERMINERS for tok, nxt in zip(tokens[1:], tokens[2:]))


# a line's leading speaker or role ("- user: ", "Ana: "), as a note line writes it
WHO_PREFIX_RE = re.compile(r"^\s*(?:[-*+]\s+)?[^\s:]{1,30}(?: [^\s:]{1,30})?: ")
