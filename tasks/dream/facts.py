"""The fact model (pure): what is worth remembering, and what a fact line is about.

`is_memory` keeps what capture keeps (every statement that says something), leaving out chatter,
scaffolding, code, configuration and link-only lines. `subject_of` names the node a fact goes
to: a person (one node per person, in parts when it grows), a procedure (a line naming a tool
that no one says about themselves), or the sentence's own subject in its words. No list of topics,
attributes or cue words decides it; whether a new statement replaces an old one is decided by
`change.relation` from the sentences' structure. Offline and deterministic; they err towards "a new fact" (never towards
replacing one): a wrong memory is worse than a duplicate line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memflow.tasks.capture import informative, small_talk
from memflow.tasks.dream.change import relation
from memflow.tasks.dream.digest import ROLE_RE
from memflow.tasks.dream.statements import SUBORDINATORS, strip_label, subject, subject_phrase
from memflow.tasks.dream.words import (ALSO_NOT_INTERJECTIONS, AUXILIARIES, BE, DETERMINERS, EN_NUMBERS, EXISTENTIALS,
                                       HAN, INTERJECTIONS, PLAIN_ADVERBS, PREPOSITIONS, PRONOUNS, demonstrative_led,
                                       han_share, pronoun_led, strip_marker, zh_number)
from memflow.tasks.ground.tokenize import STOPWORDS, tokenize

# -- what is not memory ------------------------------------------------------------------------
# a marker a chat or capture writes in place of content: `(read in part)`, `[image]`, `---`, `…`
_MARKER = re.compile(r"^[\(\[<].{0,40}[\)\]>]\.?$|^(\.{3}|…|-{3,}|={3,}|\*{3,})$")
_HEADER_CELL = re.compile(r"^[A-Za-z_][\w .-]{0,30}$")


def _chatter(sentence: str) -> bool:
    """A sentence that says nothing: capture's rule of it (`capture.small_talk`: greetings,
    thanks, acknowledgements, courtesies, nothing but interjections or function words), or a
    marker. One rule: what capture keeps out of a daily note and what the dream keeps out of a
    node are the same."""
    bare = re.sub(r"[\s.!?,。！？，~…:：;；]+$", "", sentence.strip()).strip()
    return not bare or small_talk(bare, "user") or bool(_MARKER.match(bare))


_LINK_RE = re.compile(r"\[\[[^\]]*\]\]|\[[^\]]*\]\([^)]*\)|https?://\S+")
_CONFIG_RE = re.compile(r"^[\"']?[\w.-]+[\"']?\s*(?::|=|:=)\s*\S.*$")
_CODE_CHARS = set("{}[]()<>;=$`|\\")


def is_scaffolding(text: str) -> bool:
    """Code, configuration and link lines are not facts: a `key: value` / `KEY=value` line, a
    line dense in code punctuation, or one that is nothing but links once they are taken out."""
    bare = strip_marker(text.strip())
    if _CONFIG_RE.match(bare):  # `port: 5432`, `DATABASE_URL=...`, not `Note: my dentist is Dr Li`
        key, value = re.split(r":=|=|:", bare, maxsplit=1)
        key = key.strip().strip("\"'")
        if re.search(r"[_.-]", key) or key.isupper() or (key.islower() and len(value.split()) <= 3):
            return True
    if len(bare) >= 12 and sum(c in _CODE_CHARS for c in bare) / len(bare) > 0.08:
        return True
    rest = _LINK_RE.sub(" ", bare)
    return rest != bare and len([w for w in re.findall(r"[A-Za-z]{2,}|[\u4e00-\u9fff]", rest)
                                 if w.lower() not in STOPWORDS]) < 2


def is_memory(text: str) -> bool:
    """False for what is not worth remembering: greetings, acknowledgements, assistant
    pleasantries, markers such as `(read in part)`, table or CSV header rows, bare fragments,
    code, configuration and link-only lines."""
    if is_scaffolding(text):
        return False
    bare = re.sub(r"[\s.!?,。！？，~…:：;；]+$", "", strip_marker(text.strip())).strip()
    if all(_chatter(s) for s in re.split(r"[.!?,;。！？，；]\s*", bare)):
        return False
    cells = [c.strip() for c in re.split(r"[,;|\t]", bare) if c.strip()]
    if len(cells) >= 3 and all(_HEADER_CELL.match(c) and len(c.split()) <= 3 for c in cells) \
            and not re.search(r"\b(is|are|was|were|has|have|will|use|uses)\b", bare):
        return False  # `name, age, city` or `| id | owner | status |`: a header, not a fact
    # what capture keeps (every statement that says something, however short), and more than a
    # one-word answer, which means nothing without its question ("Porto.")
    han = len(re.findall(f"[{HAN}]", bare))
    return informative(bare, "user") and (han >= 2 or len(re.findall(r"[A-Za-z0-9_./-]+", bare)) >= 2)


# -- values --------------------------------------------------------------------------------------
_ZH_NUMBER_RE = re.compile(r"[零一二两三四五六七八九十百]+")


def numbers(text: str) -> list[str]:
    """Numbers in a text, normalised: `4`, `four`, `四` all give "4"; times keep their form."""
    found = re.findall(r"\d+(?:[.:]\d+)?", text)
    found += [EN_NUMBERS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in EN_NUMBERS]
    found += [str(zh_number(m)) for m in _ZH_NUMBER_RE.findall(text)]
    return found


def terms(text: str) -> set[str]:
    """Content terms (stemmed, stopwords out, numbers in every spelling folded to digits)."""
    return {t for t in tokenize(text) if not t.isdigit() and t not in EN_NUMBERS} | set(numbers(text))


def similarity(a: str, b: str) -> float:
    ta, tb = terms(a), terms(b)
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


# -- subjects ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Subject:
    key: str      # stable identity, e.g. "person:jonas:home", "team:payments", "procedure:rollback"
    name: str     # what a node about it is called: "Jonas – home and family"
    bucket: str   # personal | procedure | wiki


_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine|myself)\b|我", re.IGNORECASE)
# a tool by its shape: a path (from a root or home, or of two folders or more, or to a file with an
# extension: never "and/or", "13/14"), a file name with an extension, or a CONSTANT_NAME
_IDENTIFIER_RE = re.compile(r"(?<![\w/])(?:\.{0,2}/|~/)[\w.-]+(?:/[\w.-]+)*|(?:[\w.-]*[A-Za-z][\w.-]*/){2,}[\w.-]+|"
                            r"(?:[\w.-]+/)+[\w-]+\.[a-z][a-z0-9]{0,4}\b|\b[A-Za-z][\w-]*\.[a-z][a-z0-9]{1,4}\b(?!\.\w)|"
                            r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")
_PROPER_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?)\b")
# closed classes: function words (determiners, pronouns, wh-words, conjunctions, adverbs of
# sequence), day and month names and the deictic days: capitalised, they still name no subject
_NOT_NAMES = frozenset("""The This That These Those Our We They It Its There Here When What Where
Which While After Before Also Next Then And But Or Monday Tuesday Wednesday Thursday Friday Saturday
Sunday January February March April May June July August September October November December
Today Tomorrow Yesterday""".split())


def _named(word: str) -> bool:
    """Can `word` (capitalised) name what a statement is about? Not a function word or a day
    or month name, nor its plural ("on Tuesdays and Thursdays" names a time, not a thing)."""
    return word not in _NOT_NAMES and not (word.endswith("s") and word[:-1] in _NOT_NAMES)


# coordinating conjunctions (a closed class): "Oh and we renamed the dog" opens a clause of its own
_COORDINATORS = frozenset("and but so or yet".split())
_OPENING_RE = re.compile(r"^\s*([A-Za-z]+)(,?)\s+([^\s,]+)")
_APPOSITIVE_RE = re.compile(r"[^,.!?;:]{1,40},")


def without_opener(text: str) -> str:
    """The statement without a word opening it that cannot be its subject, read from where it
    stands, not from a list of such words: one set off by a comma ("Yeah, she's an hour away",
    "Perfect, Retiro it is", "Ugh, probably 60 days"), unless a noun phrase closed by a second
    comma follows (an appositive: "Jonas, my brother, lives in Oslo"), or one followed by a word
    that opens a clause or a noun phrase of its own: a pronoun, a determiner, a conjunction before
    either ("Yeah she's fine", "Also the p95 hasn't moved", "Oh and we renamed the dog"), or an
    interjection (`words.INTERJECTIONS`, a closed class: "Yes Kenji approved the budget", "Ok
    arms at 350M"; "no" and "well" only before a name: "Well Kenji moved", not "Well water is"). A preposition or a subordinator opening the sentence is left
    to `subject_phrase` ("In Berlin we ...", "When we moved, ..."), and "There's ..." too (the
    existential's subject follows its verb). Such a word named nodes "Yeah", "Oh", "Also", "Yes",
    gathering unrelated statements."""
    match = _OPENING_RE.match(text)
    if not match:
        return text
    first, comma, after = match.group(1).lower(), match.group(2), match.group(3)
    if first in PRONOUNS or first in DETERMINERS or first in PREPOSITIONS or first in SUBORDINATORS \
            or first in _COORDINATORS:
        return text
    rest = text[match.start(3):]
    head = re.split(r"['’]", after.lower(), maxsplit=1)[0]
    opens = head in PRONOUNS or head in DETERMINERS
    if head in _COORDINATORS:  # "Oh and we ...", not "Alice and Bob ..."
        following = (rest.split()[1:2] or [""])[0]
        opens = re.split(r"['’]", following.lower(), maxsplit=1)[0] in PRONOUNS | DETERMINERS
        rest = rest[len(after):].lstrip() if opens else rest
    if comma and head not in PRONOUNS and _APPOSITIVE_RE.match(rest):
        return text
    # an adverb of the closed class before a verb of its own ("Also raised the HPA to 16",
    # "Already paired"): the speaker's subjectless statement, not one about "Also"
    adverb = first in PLAIN_ADVERBS and first not in EXISTENTIALS and head not in BE and head not in AUXILIARIES
    interjection = first in INTERJECTIONS and (after[:1].isupper() or first not in ALSO_NOT_INTERJECTIONS)
    return rest if comma or opens or adverb or interjection else text


def _procedure(text: str) -> Subject:
    about = procedure_subject(text)
    if len(slug(about)) < 2:
        # a span of symbols ("` + `", left when a label's colon cut a code span) or one letter
        # names nothing: the procedure is named by its words outside code
        about = procedure_subject(_CODE_SPAN_RE.sub(" ", text).replace("`", " "))
    return Subject(f"procedure:{slug(about)}", about[:1].upper() + about[1:], "procedure")


def _first_word(text: str) -> str:
    return re.split(r"['’\s]", text.lower(), maxsplit=1)[0]


def slug(text: str) -> str:
    return re.sub(rf"[^a-z0-9{HAN}]+", "-", text.lower()).strip("-")


_CODE_SPAN_RE = re.compile(r"`[^`\n]+`")


def is_procedure(text: str, who: str = "") -> bool:
    """A how-to: a line naming a tool (a script, a file, a command in backticks, a CONSTANT) that
    no one says about themselves and that is not a statement about a thing named by its subject
    ("The payments service reads `app.yaml`" is the service's; "Run `make deploy` after a tag"
    and "Before a release, `scripts/check.sh` must pass" are how-tos), or steps no one in
    particular says ("Always drain the queue before the sync"). A named speaker's "never give
    up!" or "check out my painting" is what that person said (their node)."""
    tool = bool(_IDENTIFIER_RE.search(text) or _CODE_SPAN_RE.search(text))
    if _FIRST_PERSON.search(text):
        return False
    if not tool:  # steps said by no one in particular, opening on when or whether to do them
        return not who and bool(_STEP_START.match(text.strip()))
    first = (re.findall(r"[A-Za-z][\w'’-]*", text) or [""])[0].lower()
    return first not in DETERMINERS


# a line of steps opens on an adverb of frequency or sequence or a negated auxiliary (closed classes)
_STEP_START = re.compile(r"^(?:always|never|first|then|next|finally|do not|don't|don’t)\b", re.IGNORECASE)


def procedure_subject(text: str) -> str:
    """What a procedure is for: its script or command named by its path's words without the
    file's extension (`deploy/rollback.sh` -> "deploy rollback"), else its first content words."""
    ident = _IDENTIFIER_RE.search(text) or _CODE_SPAN_RE.search(text)
    if ident:
        name = ident.group(0).strip("`")
        name = re.sub(r"(?<=\w)\.[A-Za-z]{1,5}$", "", name)  # the extension names no purpose
        words = [p for p in re.split(r"[/._\s-]+", name.lower()) if p]
        if words:
            return " ".join(list(dict.fromkeys(words))[-3:])
    text = _STEP_START.sub("", text.strip(), count=1)  # "Don't forget to ..." is not about "Don't"
    words = [w for w in re.findall(r"[A-Za-z][\w'’-]*[\w]", text) if w.lower() not in STOPWORDS][:3]
    return " ".join(w.lower() for w in words) or text[:24]


def person_subject(person: str) -> Subject:
    """A person's node: one per person ("The user", "Jonas"), named after them; a node past
    `digest_node_bytes` continues in parts. No facet is guessed from the words said."""
    return Subject(f"person:{slug(person)}", person[:1].upper() + person[1:], "personal")


UNPLACED = Subject("", "", "")  # `subject_of(..., placed_only=True)`: a statement with nothing to be about


def subject_of(text: str, who: str = "", antecedent: Subject | None = None, placed_only: bool = False) -> Subject:
    """The subject of one fact line (`who` is the speaker the note names, if any), named in the
    line's own words (never stems; a leading turn or session marker is not a subject, nor a
    short label before a colon: "Change of plan: grukdrux moves to port 56147" is about grukdrux).
    `antecedent`: the subject of the statement a pronoun opening this one points back to; taken
    when the line names nothing itself ("It only happens when ..." was a node `It only happens`).
    `placed_only`: a statement opening on such a pronoun that names nothing and has no
    antecedent is `UNPLACED` (no node can say what it is about), not a node named by its first
    words."""
    said = strip_label(strip_marker(ROLE_RE.sub("", text)))
    if is_procedure(said, who):  # steps open on their adverb: "Always drain the queue first"
        return _procedure(said)
    text = without_opener(said)
    if text is not said:
        if re.match(r"[a-z]", text) and _first_word(text) not in PRONOUNS | DETERMINERS:
            # what an opening adverb leaves opens on a verb in lower case ("Also raised the HPA
            # to 16", "Already paired"): a statement without a subject, the speaker's
            return person_subject(who or "the user")
        if is_procedure(text, who):
            return _procedure(text)
    han = han_share(text)
    if _FIRST_PERSON.search(text) or who or han > 0.5:
        # Chinese often leaves the speaker unsaid: a fact with no other subject is theirs
        return person_subject(who or "the user")
    label = subject_phrase(text)
    if len(label) == 1:
        # one letter is no name a person gives a thing ("k thanks" made a node `K`): a statement
        # about nothing placeable, as one opening on a pronoun with nothing before it
        return UNPLACED if placed_only else person_subject(who or "the user")
    if han and re.search(f"[{HAN}]", label):
        # a Chinese phrase cannot be cut into words here ("去掉了 moment" named a node "去掉",
        # "开了 R8" one "开"): a statement whose subject would be one is the speaker's, as one
        # in Chinese alone is
        return person_subject(who or "the user")
    if label and _named(label.split()[0]):  # what the sentence is about, in its words
        return Subject(f"topic:{slug(label)}", label[:1].upper() + label[1:], "wiki")
    proper = [m for m in _PROPER_RE.findall(text) if _named(m.split()[0])]
    if proper:
        # keyed as a subject named in the sentence's subject is ("We raised the Redis cache TTL
        # ..." goes to the node of "The Redis cache TTL is ...", not to a second "Redis")
        return Subject(f"topic:{slug(proper[0])}", proper[0], "wiki")
    label = subject_phrase(text)
    if not label and subject(text) in ("we", "us"):
        # "We run it on 6 pods": nothing named but us, the user among us (not a node "We run it")
        return person_subject("the user")
    if antecedent is not None and (not label or pronoun_led(text, contracted=True) or demonstrative_led(text)):
        return antecedent
    if placed_only and not label and (pronoun_led(text, contracted=True) or demonstrative_led(text)):
        # "It only happens when ...", "That is 40 euros" with nothing before it to point to: a
        # node named by its first words gathered unrelated statements, and in one node two such
        # statements about two things would read as one value replacing another
        return UNPLACED
    label = label or " ".join(text.split()[:3])
    if han and re.search(f"[{HAN}]", label):  # (as above)
        return person_subject(who or "the user")
    return Subject(f"topic:{slug(label)}", label[:1].upper() + label[1:], "wiki")


def same_fact(new: str, old: str) -> str | None:
    """How a new fact relates to an older one about the same subject (`change.relation`):
    "same" (the same statement again), "replaces" (the new statement shows that the value
    changed: one slot of the same frame holds a new value of the same kind, or it names the old
    value), or None (another fact, kept beside the old one)."""
    return relation(ROLE_RE.sub("", new), ROLE_RE.sub("", old))  # who said them is no part of either
