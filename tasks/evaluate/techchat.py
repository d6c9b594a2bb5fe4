"""A generated long-technical-chat evaluation set (pure, seeded, deterministic), in LoCoMo's
shape so `run_evaluation` scores it the same way (same scorer, same baselines).

Each conversation is a user and an assistant working over many sessions on several projects
whose vocabulary overlaps: the projects share component and library names, the same attribute
(a port, a pinned version, a timeout, a chosen store, a preference) has different values in
different projects, and messages mention an attribute without its value. The user states
decisions inside long pasted code and logs; the assistant answers in long Markdown with code.
Questions are paraphrased (they name the project and the subject, not the evidence's wording):

- category 1: a user statement; 2: an assistant statement (its advice);
- 3: two statements in different sessions of one project;
- 4: a knowledge update: the value changed in a later session, the question asks for the current
  one and only the later statement is evidence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memflow.tasks.evaluate.techchat_text import Pools, Writer, make_pools

CATEGORIES = {1: "user statement", 2: "assistant statement", 3: "across sessions", 4: "knowledge update"}


@dataclass(frozen=True)
class Attribute:
    """One kind of fact: how a value is made, said by the user, advised by the assistant,
    changed later, mentioned without a value, and asked about ({p} project, {s} subject, {v})."""

    name: str
    subject: str  # "component" or "library"
    value: str  # "port", "version", "seconds", "count", "megabytes", "product", "person"
    said: tuple[str, ...]
    advised: tuple[str, ...]
    changed: tuple[str, ...]
    mentioned: tuple[str, ...]
    asked: tuple[str, ...]


ATTRIBUTES = (
    Attribute("port", "component", "port",
              ("Decision: the {s} listener binds port {v} from now on.", "We settled on {v} as the {s} port."),
              ("I'd bind {s} to port {v}; it is outside the range the sidecar grabs.",),
              ("Change of plan: {s} moves to port {v}.", "We switched the {s} listener over to {v}."),
              ("The {s} port clashes with something again.", "Which port {s} should use is still open."),
              ("Which port number does the {s} service of {p} listen on?", "On what port is {p}'s {s} reachable?")),
    Attribute("pin", "library", "version",
              ("We pinned {s} to {v} in the lock file.", "I froze {s} at version {v} for the release."),
              ("Pin {s} to {v}; later builds changed the wire format.",),
              ("We bumped {s} to {v} after the audit.", "The lock file now has {s} at {v}."),
              ("The {s} version in the lock file keeps drifting.", "Not sure the {s} pin is right."),
              ("What release of {s} is {p} locked to?", "Which {s} version does {p} depend on?")),
    Attribute("timeout", "component", "seconds",
              ("The {s} timeout is {v} seconds now.", "I set the {s} deadline to {v}s."),
              ("Give {s} a {v}-second timeout so slow replicas fail fast.",),
              ("We raised the {s} timeout to {v} seconds.", "The {s} deadline is {v}s after the incident."),
              ("The {s} timeout fires too early.", "Timeouts on {s} again."),
              ("How long does {p}'s {s} wait before giving up?", "After how many seconds does the {s} of {p} abort a call?")),
    Attribute("batch", "component", "count",
              ("{s} processes {v} records per batch.", "Batches in {s} are {v} rows each."),
              ("Use batches of {v} in {s}; larger ones blow the memory limit.",),
              ("We cut the {s} batches down to {v} rows.", "{s} batches are {v} records now."),
              ("The {s} batch size needs tuning.", "Batching in {s} is uneven."),
              ("How many records go into each chunk that {p}'s {s} handles?", "What is the group size {s} works through at once in {p}?")),
    Attribute("store", "component", "product",
              ("We decided to go with {v} as the store behind {s}.", "{s} keeps its state in {v}."),
              ("For {s} I'd pick {v} as the backing store; it handles the write bursts.",),
              ("We migrated the {s} state from the old store to {v}.", "{s} now persists into {v}."),
              ("The store behind {s} is slow on cold reads.", "We keep arguing about where {s} keeps its state."),
              ("Which database did the team choose for the {s} of {p}?", "Where does {p}'s {s} persist its data?")),
    Attribute("memory", "component", "megabytes",
              ("The {s} container is capped at {v} MiB.", "I limited {s} to {v} MiB of memory."),
              ("Cap {s} at {v} MiB; the allocator behaves below that.",),
              ("We lifted the {s} memory cap to {v} MiB.", "{s} may use {v} MiB now."),
              ("The {s} container gets OOM-killed.", "Memory of {s} keeps climbing."),
              ("How much RAM may the {s} of {p} use?", "What memory limit applies to {p}'s {s} container?")),
    Attribute("owner", "component", "person",
              ("{v} owns {s} from this sprint on.", "{v} is the one on call for {s}."),
              ("Ask {v} to own {s}; the reviews there already go through them.",),
              ("{v} took over {s}.", "Ownership of {s} moved to {v}."),
              ("Nobody really owns {s}.", "Who reviews {s} changes is unclear."),
              ("Who is responsible for {s} in {p}?", "Which teammate looks after the {s} of {p}?")),
    Attribute("retries", "component", "count",
              ("{s} retries {v} times before it dead-letters.", "I set {s} to {v} attempts."),
              ("Let {s} retry {v} times with jitter.",),
              ("We dropped {s} to {v} attempts.", "{s} now gives up after {v} tries."),
              ("The {s} retry policy floods the queue.", "Retries in {s} hide the real error."),
              ("How many attempts does {p}'s {s} make before it gives up on a message?",
               "What is the retry count of the {s} in {p}?")),
)


WHO_SAID = {"user": (", as the user decided?", ", going by what the user said?"),
            "assistant": (", as the assistant advised?", ", going by the assistant's answer?")}


@dataclass
class Fact:
    project: str
    subject: str
    attribute: Attribute
    values: list[str]  # first stated value, then each change
    speaker: str  # "user" or "assistant": who states the first value
    sessions: list[int] = field(default_factory=list)  # session of each value
    turns: list[str] = field(default_factory=list)  # dia id of each value's statement

    @property
    def key(self) -> str:
        return f"{self.project}/{self.subject}/{self.attribute.name}"


def make_value(rng: random.Random, kind: str, pools: Pools) -> str:
    match kind:
        case "port":
            return str(rng.randint(1025, 65000))
        case "version":
            return f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}"
        case "seconds":
            return str(rng.choice((3, 5, 8, 10, 12, 15, 20, 30, 45, 60, 90, 120)))
        case "count":
            return str(rng.randint(2, 5000))
        case "megabytes":
            return str(rng.choice((128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)))
        case "product":
            return rng.choice(pools.products)
        case _:
            return rng.choice(pools.people)


def plan_facts(rng: random.Random, pools: Pools, per_project: int) -> list[Fact]:
    """Facts of every project; (subject, attribute) pairs come from a small shared pool, so the
    same attribute of the same component has other values in other projects."""
    pairs = [(a, s) for a in ATTRIBUTES
             for s in rng.sample(pools.libraries if a.subject == "library" else pools.components, 2)]
    facts = []
    for project in pools.projects:
        for attribute, subject in rng.sample(pairs, per_project):
            values = [make_value(rng, attribute.value, pools)]
            while rng.random() < 0.35 and len(values) < 3:
                new = make_value(rng, attribute.value, pools)
                if all(new not in v and v not in new for v in values):
                    values.append(new)
            speaker = "assistant" if rng.random() < 0.3 and len(values) == 1 else "user"
            facts.append(Fact(project, subject, attribute, values, speaker))
    return facts


def schedule(rng: random.Random, facts: list[Fact], projects: list[str], sessions: int) -> dict[int, list[tuple[Fact, int]]]:
    """Session number -> (fact, value index) stated in it: every project has sessions of its
    own, a fact's values go to increasing sessions of its project."""
    own = {p: [] for p in projects}
    for number in range(1, sessions + 1):
        own[projects[(number - 1) % len(projects)]].append(number)
    plan: dict[int, list[tuple[Fact, int]]] = {n: [] for n in range(1, sessions + 1)}
    for fact in facts:
        mine = own[fact.project]
        if len(mine) < len(fact.values):
            fact.values = fact.values[:len(mine)]
        chosen = sorted(rng.sample(mine, len(fact.values)))
        fact.sessions = chosen
        for index, number in enumerate(chosen):
            plan[number].append((fact, index))
    return plan


def statement(rng: random.Random, fact: Fact, index: int) -> str:
    a = fact.attribute
    forms = a.changed if index else (a.advised if fact.speaker == "assistant" else a.said)
    text = rng.choice(forms).format(s=fact.subject, v=fact.values[index], p=fact.project)
    return text[0].upper() + text[1:]


def session_turns(rng: random.Random, writer: Writer, number: int, project: str,
                  stated: list[tuple[Fact, int]], facts: list[Fact], length: int) -> list[dict]:
    """One session's turns (user and assistant alternating), each fact statement placed in a
    message of its speaker; the other messages discuss the project's subjects and mention
    attributes without their values (distractors)."""
    mine = [f for f in facts if f.project == project]
    length = max(length, 2 * len(stated) + 2)
    user_slots = list(range(0, length, 2))
    assistant_slots = list(range(1, length, 2))
    placed: dict[int, tuple[Fact, int]] = {}
    for fact, index in stated:
        speaker = "assistant" if fact.speaker == "assistant" and index == 0 else "user"
        free = [s for s in (assistant_slots if speaker == "assistant" else user_slots[1:]) if s not in placed]
        placed[rng.choice(free)] = (fact, index)
    turns = []
    for slot in range(length):
        topic = placed.get(slot)
        fact = topic[0] if topic else rng.choice(mine)
        subject = fact.subject
        said = statement(rng, *topic) if topic else ""
        if not said and rng.random() < 0.5:
            said = rng.choice(fact.attribute.mentioned).format(s=subject, p=project)
            said = said[0].upper() + said[1:]
        if slot % 2 == 0:
            opening = (f"Back on {project} today; the {subject} part again." if slot == 0 else "")
            text = writer.paste(project, subject, said, opening)
        else:
            text = writer.reply(project, subject, said)
        turns.append({"speaker": "user" if slot % 2 == 0 else "assistant",
                      "dia_id": f"D{number}:{slot + 1}", "text": text})
        if topic:  # the sentence a question rests on (what the scorer looks for in a context)
            turns[-1]["statement"], turns[-1]["fact"] = said, topic[0].key
            topic[0].turns.append(turns[-1]["dia_id"])
    return turns


def questions(rng: random.Random, facts: list[Fact], multi: int) -> list[dict]:
    """One question per fact (category 1, 2 or 4) and `multi` questions over two facts of one
    project stated in different sessions (category 3)."""
    out = []
    for fact in facts:
        if not fact.turns:
            continue
        asked = rng.choice(fact.attribute.asked).format(s=fact.subject, p=fact.project)
        previous = fact.values[:len(fact.turns) - 1]
        if len(fact.values) > 1:
            category, asked = 4, asked.rstrip("?") + " these days?"
        else:
            category = 2 if fact.speaker == "assistant" else 1
        if rng.random() < 0.4:  # who said it, as people ask: the speaker named in the question
            asked = asked.rstrip("?") + rng.choice(WHO_SAID[fact.speaker if category != 4 else "user"])
        out.append({"question": asked, "answer": fact.values[-1], "evidence": [fact.turns[-1]],
                    "category": category, "category_name": CATEGORIES[category], "facts": [fact.key]}
                   | ({"previous": previous} if previous else {}))
    by_project: dict[str, list[Fact]] = {}
    for fact in facts:
        if fact.turns:
            by_project.setdefault(fact.project, []).append(fact)
    pairs = [(a, b) for group in by_project.values() for i, a in enumerate(group) for b in group[i + 1:]
             if a.sessions[-1] != b.sessions[-1] and a.subject != b.subject]
    for a, b in rng.sample(pairs, min(multi, len(pairs))):
        first = rng.choice(a.attribute.asked).format(s=a.subject, p=a.project).rstrip("?")
        second = rng.choice(b.attribute.asked).format(s=b.subject, p=b.project)
        out.append({"question": f"{first}, and {second[0].lower()}{second[1:]}",
                    "answer": f"{a.values[-1]}; {b.values[-1]}",
                    "evidence": [a.turns[-1], b.turns[-1]], "category": 3,
                    "category_name": CATEGORIES[3], "facts": [a.key, b.key]})
    return out


def conversation(seed: int, number: int, sessions: int = 14, projects: int = 6,
                 per_project: int = 5, length: int = 10, multi: int = 6) -> dict:
    """One generated sample (LoCoMo's shape: `conversation` with `session_N` turn lists and
    their date times, `qa` with evidence dia ids)."""
    rng = random.Random(f"techchat:{seed}:{number}")
    pools = make_pools(rng, projects, components=max(6, projects + 2), libraries=max(4, projects))
    writer = Writer(rng, pools)
    facts = plan_facts(rng, pools, per_project)
    plan = schedule(rng, facts, pools.projects, sessions)
    talk: dict = {"speaker_a": "user", "speaker_b": "assistant"}
    start = datetime(2026, 1, 5, 9, 30) + timedelta(days=rng.randint(0, 60))
    for n in range(1, sessions + 1):
        project = pools.projects[(n - 1) % len(pools.projects)]
        talk[f"session_{n}"] = session_turns(rng, writer, n, project, plan[n], facts, length)
        stamp = start + timedelta(days=2 * (n - 1), minutes=rng.randint(0, 400))
        talk[f"session_{n}_date_time"] = stamp.strftime("%I:%M %p on %d %B, %Y")
    return {"sample_id": f"techchat-{seed}-{number}", "conversation": talk,
            "qa": questions(rng, facts, multi)}


def techchat(seed: int = 0, conversations: int = 3, sessions: int = 14, projects: int = 6,
             per_project: int = 5, length: int = 10) -> list[dict]:
    """The whole set: `conversations` independent samples from one seed."""
    return [conversation(seed, n, sessions, projects, per_project, length)
            for n in range(1, conversations + 1)]
