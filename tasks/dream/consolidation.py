"""The offline consolidator (pure): daily-note facts -> units -> one decision per unit, and
interest topics. Deterministic, so a labelled fixture can pin its actions.

One unit per fact line worth remembering (`facts.is_memory`), about one subject
(`facts.subject_of`). A line stating several facts is split first (`statements.clauses`). A decision
compares a unit with the facts of that subject's node (`change.relation`): the same statement ->
CORROBORATE (its source is added to the line), evidence that a value changed (one slot of the
same frame, or the old value named) -> CORRECT (the new value first, the old one kept as dated
history), anything else -> REFINE (a new line beside the others); no node for the subject ->
CREATE.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from memflow.schemas.dream import (
    Correct,
    Corroborate,
    Create,
    Decision,
    Evidence,
    Refine,
    Topic,
    Unit,
)
from memflow.schemas.notes import Note
from memflow.tasks.capture import salient_terms, section_kind
from memflow.tasks.ground.secrets import MARK
from memflow.tasks.dream.change import names_old_value, other_context
from memflow.tasks.dream.statements import WHO_PREFIX_RE, clauses, is_clause, split_outside, strip_label
from memflow.tasks.dream.words import strip_marker
from memflow.tasks.dream.digest import ROLE_RE, FactLine, described, facts_of, plain
from memflow.tasks.dream.facts import UNPLACED, Subject, is_memory, same_fact, similarity, slug, subject_of
from memflow.tasks.ground.markdown import NOT_AN_ABBREVIATION
from memflow.tasks.ground.speakers import OTHERS_TITLE
from memflow.tasks.ground.workspace import date_of

_BULLET_RE = re.compile(r"^\s*[-*+]\s+(.*\S)\s*$")
# `- Caroline: I went to ...`: a label shaped as a name before the fact (not `ERR_X:`); whether
# it names a speaker or the line's own label (`Correction:`) the note's structure says
# (`speakers_in`)
_WHO_RE = re.compile(r"^([A-Z][a-z]+(?: [A-Z][a-z]+)?|[\u4e00-\u9fff]{2,4}): (?=\S)")
# the roles of a chat (a closed class): who a line is said by, never a person's name
_ROLES = frozenset({"user", "assistant", "the assistant", "tool", "system"})

def note_facts(note: Note, procedures: bool = True) -> list[Evidence]:
    """Facts of a daily note worth remembering: its bullet lines (provenance links stripped).

    Who said it counts: questions and requests are not facts; in a section of another speaker's
    words a named speaker's line is a fact about them, and the assistant's words are kept only
    as how-to knowledge (a procedure), never as a fact about the user (`procedures=False`: not
    at all)."""
    facts = []
    kind = "own"
    for offset, line in enumerate(note.body.split("\n")):
        if line.startswith("## "):
            kind = section_kind(line[3:])
        elif line.startswith("# "):
            kind = "own"
        match = _BULLET_RE.match(line)
        if not match or kind == "questions":
            continue
        text = plain(match.group(1))
        role = ROLE_RE.match(text) if kind == "others" else None
        # an assistant's line is kept with its role ("Assistant: Lower BATCH_SIZE to 200"): a
        # node line says who said it as its daily line does, so recall weighs it as theirs
        said = text[role.end():] if role else speaker(text)[1]
        if role and (not procedures or subject_of(said).bucket != "procedure"):
            continue
        if len(text) >= 3 and is_memory(said):
            facts.append(Evidence(path=note.path, lines=[note.body_start + offset], text=text))
    return facts


def speaker(text: str, speakers: frozenset[str] | None = None) -> tuple[str, str]:
    """(speaker the line names, the rest) or ("", text). `speakers`: the names the line's note
    gives its speakers (`speakers_in`): a label is one of them or none (`Note:` opening one line
    of a note is the line's own label, however it is spelled). Without them (a digest line, read
    out of its note) a label shaped as a name is its speaker, unless it is a chat role (`User:`,
    `Assistant:`) or a word before a clause in lower case ("Decision: the X listener binds port N")."""
    match = _WHO_RE.match(text)
    if not match:
        return "", text
    who = match.group(1)
    if speakers is not None:
        named = who in speakers
    else:
        named = who.lower() not in _ROLES and not text[match.end():match.end() + 1].islower()
    return (who, text[match.end():]) if named else ("", text)


def worth_a_node(unit: Unit) -> bool:
    """Is a unit knowledge a node should hold? Not a statement holding a masked secret (its node
    would hold only the mask), nor a fragment that says nothing of anything ("Back on Fiontour
    today", "the grorvear part again": `statements.is_clause`). Such a statement stays in its daily
    note, searchable; a line the digest already cites still follows a person's edit of it."""
    said = speaker(unit.summary)[1]
    return MARK not in said and is_clause(strip_label(strip_marker(said)))


def make_unit(fact: Evidence, before: Unit | None = None, speakers: frozenset[str] | None = None) -> Unit | None:
    """One fact -> one unit. In a node about the speaker the fact is kept without the speaker's
    name in front (the node's name says whose it is). `before`: the unit of the same speaker's
    statement just before this one in its note; a statement opening on a pronoun that points
    back and naming nothing else is about what that one was about. None for a pronoun with
    nothing to point to. `speakers`: those its note names (`speakers_in`)."""
    who, said = speaker(fact.text, speakers)
    antecedent = None
    if before is not None and before.bucket != "procedure" and _points_back(strip_label(strip_marker(said))):
        antecedent = Subject(before.subject, before.name, before.bucket)
    subject = subject_of(said, who, antecedent, placed_only=True)
    if subject is UNPLACED:
        return None  # a pronoun with nothing to point to: left in the daily note
    day = date_of(fact.path)
    own = bool(who) and subject.key.split(":")[:2] == ["person", slug(who)]
    return Unit(name=subject.name, bucket=subject.bucket, summary=said if own else fact.text,
                paths=[fact.path], evidence=[fact], subject=subject.key,
                date=day.isoformat() if day else "")


_CODE_RE = re.compile(r"```.*?```|`[^`\n]{40,}`|\[code(?:: [\w+#.-]+)?, \d+ lines\]", re.DOTALL)
_SENTENCE_RE = re.compile(rf"(?<=[.!?:]){NOT_AN_ABBREVIATION}\s+(?=[A-Z\u4e00-\u9fff])|(?<=[。！？：])|\n")
# what a chat appends to a message it sends with something ("... for it? [image: a photo of ...]")
_ATTACHMENT = r"\[[^\[\]\n]*\]"
# a sentence that ends with what was sent with it ("... for it? [image: ...] Great!") ends after it
_ENDS_ATTACHED_RE = re.compile(rf"([.!?:。！？：](?:\s*{_ATTACHMENT})+)\s*(?=[A-Z\u4e00-\u9fff])")
# a statement without what was sent with it, as its last character tells a question
_ATTACHED_RE = re.compile(rf"(?:\s*{_ATTACHMENT})+\s*$|\s+$")


def split_fact(fact: Evidence, people: frozenset[str] = frozenset(),
               speakers: frozenset[str] | None = None) -> list[Evidence]:
    """A line stating several facts -> one evidence per statement (same line, same speaker),
    so a later change of one leaves the others current. Pasted code in the line is not a
    statement (it stays in the daily note and the log); a question in it is not a fact (one
    with an attachment after it neither), nor a sentence ending in a colon, which only
    introduces what follows ("Seeing this on the X box:"); in a conversation between `people`
    (`people_in`): nor a statement about the one spoken to (`to_listener`), nor a reaction to
    what they said or sent (`reaction`). `speakers`: those the line's note names (`speakers_in`;
    by default the `people`, if any)."""
    who, said = speaker(fact.text, speakers if speakers is not None else (people or None))
    if subject_of(said, who).bucket == "procedure" and "```" not in said:
        return [fact]  # the steps of a procedure are one thing to know, in their order
    sentences = split_outside(_SENTENCE_RE, sentences_of(said))[0]
    parts = with_antecedents([part for sentence in sentences if sentence.strip()
                              for part in clauses(sentence.strip())
                              if not _ATTACHED_RE.sub("", part).endswith(("?", "？", ":", "："))
                              and is_memory(part) and not (people and to_listener(part, people))])
    if people and parts and reaction(parts[0]):
        parts = parts[1:]
    if len(parts) < 2 and parts == [said]:
        return [fact]
    if not parts:
        return []
    prefix = f"{who}: " if who else ""
    return [fact.model_copy(update={"text": prefix + part}) for part in parts]


def sentences_of(said: str) -> str:
    """A statement's text as its sentences are split: pasted code out, a sentence ending with
    an attachment ended after it (a line break, which `_SENTENCE_RE` splits at)."""
    return _ENDS_ATTACHED_RE.sub(lambda m: m.group(1) + "\n", _CODE_RE.sub(" ", said).replace("\n", " "))


# persons of a statement, closed classes of pronouns (English, Chinese), not a list of topics
_YOU_RE = re.compile(r"\b(?:you|your|yours|yourself|yourselves)\b|[你您]", re.IGNORECASE)
_ME_RE = re.compile(r"\b(?:I|me|my|mine|myself|we|us|our|ours|ourselves)\b|[我咱]", re.IGNORECASE)
# a name set off as the one spoken to: ending the statement after a comma ("Glad to help,
# Nate."), first or after one opening word before a comma, "!" or a dash ("Hey Caroline,",
# "Wow Mel, ...", "Thanks Melanie - ..."), or between commas ("Wow, Caroline, that's gorgeous!")
_CALLED_RES = (re.compile(r"[,，]\s*([A-Z][a-z]+(?: [A-Z][a-z]+)?)[\s!.?~…]*$"),
               re.compile(r"^(?:[A-Za-z']+[\s,]+)?([A-Z][a-z]+)(?:\s*[,，!！]|\s+[-–—]\s)"),
               re.compile(r"[,，]\s*([A-Z][a-z]+)\s*[,，!！]"))


def to_listener(statement: str, people: frozenset[str] = frozenset()) -> bool:
    """A statement about the one spoken to and not about the speaker: it names the listener
    (you, your; 你, 您; or calls one of the `people` talking by name: "Way to go, Nate!", "Wow
    Mel, that painting's amazing!", `called`) and never the speaker (I, my, we; 我). Between
    people, "You did an amazing job", "Your store looks great", "Thanks for the recommendation,
    Nate." are the listener's praise or news as the speaker put it, not facts about the speaker,
    whose node they would join (they stay in the daily note and the log, found by search). Said
    to an assistant, the same form is an instruction about the user ("You should always answer
    in French"): kept (no `people`)."""
    if _ME_RE.search(statement):
        return False
    return bool(_YOU_RE.search(statement)) or called(statement, people)


def reaction(statement: str) -> bool:
    """A statement that opens on a pronoun pointing back ("That looks amazing!", "It's like
    fate.", "That cup is so cute", 这个真好看) with nothing of the speaker's own before it in the
    turn and no first person in it: between people, what it points to is what the other one
    said or sent, and the line is the speaker's reaction to it, not a fact about the speaker (it
    stays in the daily note and the log, found by search). "It was my birthday" is kept."""
    return bool(_ANAPHOR_RE.match(statement)) and not _ME_RE.search(statement)


def called(statement: str, people: frozenset[str]) -> bool:
    """Does the statement call one of the `people` by name (`_CALLED_RES`), in full or by the
    start of it ("Mel" for Melanie, three letters or more)?"""
    names = {m.group(1) for pattern in _CALLED_RES for m in pattern.finditer(statement)}
    return any(name in people or (len(name) >= 3 and any(p.startswith(name) for p in people))
               for name in names)


def speakers_and_people(note: Note) -> tuple[frozenset[str], frozenset[str]]:
    """(speakers, people) of a note, read once, from its structure, never from the label's
    word. Speakers: the names its `Said by` sections name, a label opening two bullet lines or
    more (capture writes a named speaker's name on each of their lines), and, in a conversation between
    people (a `Said by` section names someone other than the assistant), the label of each line
    of the speaker's own sections (every line there opens on its speaker); a label opening one
    line of a note otherwise is that line's own (`Correction:`, `Reminder:`), not a speaker.
    People: who the conversation is between, the speakers, when both sides are named people (a
    line of the speaker's own sections opens on a speaker's name and a `Said by` section names
    someone other than the assistant); else none: a conversation with the assistant (named or
    not: the user's lines carry no name there), or no conversation."""
    others, labels = _said_by(note), _labels(note)
    times = Counter(label for _, label in labels)
    own = {label for kind, label in labels if kind != "others"} if others else set()
    speakers = frozenset(others | {label for label, n in times.items() if n >= 2} | own)
    own_named = any(kind != "others" and label in speakers for kind, label in labels)
    return speakers, (speakers if others and own_named else frozenset())


def speakers_in(note: Note) -> frozenset[str]:
    """The names a note gives its speakers (`speakers_and_people`)."""
    return speakers_and_people(note)[0]


def people_in(note: Note) -> frozenset[str]:
    """The people a note's conversation is between, or none (`speakers_and_people`)."""
    return speakers_and_people(note)[1]


def _labels(note: Note) -> list[tuple[str, str]]:
    """(section kind, label) of each bullet line of a note opening on a label shaped as a name
    (not a chat role)."""
    out, kind = [], "own"
    for line in note.body.split("\n"):
        if line.startswith("## "):
            kind = section_kind(line[3:])
        elif line.startswith("# "):
            kind = "own"
        match = _BULLET_RE.match(line)
        named = _WHO_RE.match(plain(match.group(1))) if match else None
        if named and named.group(1).lower() not in _ROLES:
            out.append((kind, named.group(1)))
    return out


def _said_by(note: Note) -> set[str]:
    """The people a note's `Said by` headings name (not the assistant)."""
    names: set[str] = set()
    for line in note.body.split("\n"):
        if line.startswith("## ") and section_kind(line[3:]) == "others":
            heading = re.split(r",\s*|\s+and\s+", line[3:].strip()[len(OTHERS_TITLE):].strip())
            names.update(n.strip() for n in heading if n.strip() and n.strip().lower() not in _ROLES)
    return names


# a statement that opens on a pronoun pointing back (it, this, that, these, those; 它, 这, 那) is
# about what was said before it: a closed class of words, not a list of topics
_ANAPHOR_RE = re.compile(r"^(?:(?:it|this|that|these|those)(?:['’](?:s|ll|d|re|ve))?\b|[它这那])", re.IGNORECASE)
_CJK_END_RE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]$")
# a statement whose subject is someone or something named before it in the same line: the
# pointing pronouns above, and the third person's (closed classes, English and Chinese)
_POINTS_BACK_RE = re.compile(r"^(?:(?:he|she|they)(?:['’](?:s|ll|d|re|ve))?\b|[他她]们?)", re.IGNORECASE)


# a short adverbial before such a pronoun, by shape: an adverb in -ly ("Currently they ..."), or
# a deictic time word (a closed class), alone or after one word ("Now it ...", "Right now it runs
# on 3 VMs"); the pronoun then has a word after it (the clause's verb: "Love that!" is no lead)
_LEAD_RE = re.compile(r"^(?:[A-Z][a-z]+ly|(?:[A-Z][a-z]+ )?(?:[Nn]ow|[Tt]hen|[Tt]oday|[Tt]onight|[Ll]ately|[Rr]ecently|"
                      r"[Nn]owadays|[Tt]hese days)),?\s+(?=(?:it|this|that|these|those|he|she|they)(?:['’][a-z]+)?\s+[A-Za-z'])")


def _points_back(part: str) -> bool:
    lead = _LEAD_RE.match(part)
    rest = part[lead.end():] if lead else part
    return bool(_ANAPHOR_RE.match(rest) or _POINTS_BACK_RE.match(rest))


def with_antecedents(parts: list[str]) -> list[str]:
    """Each part that opens on a pronoun pointing back, joined to the part before it: on its
    own ("It's gonna be a big step.", "It went alright.", "She is great with kids." after "My
    dentist is Dr. Lee.") it says nothing a reader of the digest could place (a node named "She
    is great"), and a change of what it points to should take it along. A short adverbial may
    come first ("Right now it runs on 3 VMs" had made a node "Right")."""
    out: list[str] = []
    for part in parts:
        if out and _points_back(part):
            if _CJK_END_RE.search(out[-1]):  # Chinese: no space
                out[-1] = out[-1] + ("" if out[-1].endswith(("。", "！", "…")) else "。") + part
            else:
                out[-1] = out[-1] + (" " if out[-1].endswith((".", "!", "…")) else ". ") + part
        else:
            out.append(part)
    return out


def unit_links(unit: Unit) -> list[str]:
    """The note lines a unit cites (`path#Ln` / `path#La-Lb`), as its digest line will."""
    return [f"{f.path}#L{f.lines[0]}" if len(f.lines) == 1 else f"{f.path}#L{f.lines[0]}-L{f.lines[-1]}"
            for f in unit.evidence] or list(unit.paths)


def extract_units(notes: list[Note]) -> list[tuple[Unit, str]]:
    """One unit per statement, oldest note first; each with the note it came from. The units of
    a split line are marked (`split`), so each is consolidated on its own."""
    out = []
    for note in notes:
        speakers, people = speakers_and_people(note)
        before: tuple[str, Unit] | None = None  # the last statement's speaker and unit
        for fact in note_facts(note):
            parts = split_fact(fact, people, speakers)
            who = _speaker_label(fact.text)
            for part in parts:
                unit = make_unit(part, before[1] if before and before[0] == who else None, speakers)
                before = (who, unit) if unit is not None else None
                if unit is not None:
                    out.append((unit.model_copy(update={"split": len(parts) > 1}), note.path))
    return out


def _speaker_label(text: str) -> str:
    """Who a note line names as its speaker, a role ("user") included; "" for none."""
    match = WHO_PREFIX_RE.match(text)
    return match.group(0).strip() if match else ""


def relation_to(said: str, known: FactLine) -> str | None:
    """`same_fact` of a statement and a digest fact line, where a statement that changes a value
    the line replaced (its history) changes the line too: the line answers the same question
    ("X went from 2117 down to 1153 ms" replaced "X is 2117 ms"; "X is now 900 ms" changes it)."""
    relation = same_fact(said, speaker(known.text)[1])
    if relation is None and any(same_fact(said, speaker(h.text)[1]) == "replaces" for h in known.history):
        return "replaces"
    return relation


def decide_offline(unit: Unit, candidates: dict[str, str], new_path: str,
                   context_of: Callable[[list[str]], tuple[str, str]] | None = None,
                   elsewhere: dict[str, str] | None = None) -> Decision:
    """Unit + the nodes of its subject (path -> text) -> one decision. The same statement again
    anywhere in them corroborates it; else a current fact it shows to have changed, or whose
    replaced value it shows to have changed (`relation_to`; the closest, when several), is
    corrected, unless the two were said about different things (`change.other_context` of their
    sources: `context_of(links)` reads the cited lines and their note); else it is a new line
    beside the others. `elsewhere`: other nodes that name the unit's subject ("Rex is 4 years
    old now" and the user's node saying "My dog Rex is 3 years old"; "The backup job ..." and
    the node `Nightly backup job`), searched for the same statement or one it changes, never
    added to."""
    fact = unit.summary
    _, said = speaker(fact)
    own_context = context_of(unit_links(unit)) if context_of else ("", "")
    replaced = []
    for path, text in {**candidates, **(elsewhere or {})}.items():
        for known in facts_of(text):
            relation = relation_to(said, known)
            if relation == "same":
                return Corroborate(path=path, fact=known.text, reason="the same fact again")
            # a statement naming the line's own value as the old one says what it changes; a
            # turn of polarity or a value met again is checked against what each was said about
            if relation == "replaces" and context_of and not names_old_value(said, known.text) and \
                    other_context(said, own_context, speaker(known.text)[1], context_of(known.links)):
                continue
            if relation == "replaces":
                replaced.append((similarity(said, speaker(known.text)[1]), path, known.text))
    if replaced:
        _, path, old = max(replaced, key=lambda r: r[0])
        return Correct(path=path, old=old, new=fact, reason="the same statement with a new value")
    if candidates:
        return Refine(path=list(candidates)[-1], additions=[fact])
    return Create(path=new_path, name=unit.name, description=described(fact), claims=[fact])


def choose_topics(facts: list[Evidence], count: int, recent: set[str]) -> list[Topic]:
    """Recurring salient terms of recent facts, skipping titles chosen lately."""
    by_term: dict[str, list[Evidence]] = {}
    for fact in facts:
        for term in salient_terms([fact.text], n=4):
            by_term.setdefault(term.lower(), []).append(fact)
    ranked = sorted(by_term.items(), key=lambda kv: (-len({f.path for f in kv[1]}), -len(kv[1]), kv[0]))
    topics = []
    for term, evidence in ranked:
        if term in recent or len(topics) >= count:
            continue
        paths = sorted({f.path for f in evidence})
        topics.append(Topic(
            title=term, reason=f"came up {len(evidence)} time(s) in {len(paths)} note(s)",
            evidence=[f.text for f in evidence[:3]],
            keywords=salient_terms([f.text for f in evidence], n=5), paths=paths))
    return topics
