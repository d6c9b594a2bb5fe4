"""Property: random sequences of captures, edits of daily notes and dreams never change a digest
fact line that the run's new evidence did not address. A line may only be replaced (moved under the
new value as history) by a fact of the same subject that shows the value changed
(`change.relation` says "replaces", of the line or of a value it replaced), or gain source links
from one saying the same; history lines never change."""

from __future__ import annotations

import random
import re
from datetime import date, timedelta

import pytest

from memflow.schemas.notes import Note
from memflow.tasks.capture.conversation import auto_memory
from memflow.tasks.dream import digest
from memflow.tasks.dream.consolidation import extract_units, speaker
from memflow.tasks.dream.facts import slug
from memflow.tasks.dream.nightly import pending_notes, run_dream
from memflow.tasks.ground.notes import parse_note

# Facts with values to vary; some share subjects and attributes, some only subjects.
TEMPLATES = [
    "I live in {city}.", "I moved to {city} last month.", "My manager is {person}.",
    "My cat Mochi is {n} years old.", "我的猫Mochi{zh}岁了。", "I drink {drink} every morning.",
    "I go to the gym on {day} at 7:00.", "Our payments team has {n} engineers.",
    "We use {db} for the billing database.", "The billing database is backed up nightly to {city}.",
    "To fix ERR_{code}, run ./scripts/fix_{code_lower}.sh on the {city} host.",
    "My sister {person} works as a nurse in {city}.", "The staging cluster runs on {n} nodes.",
    "Hi! Good morning.", "Thanks, that worked.",
]
VALUES = {"city": ["Berlin", "Lisbon", "Porto", "Osaka"], "person": ["Priya", "Tomás", "Ana", "Kenji"],
          "n": ["3", "4", "6", "8"], "zh": ["三", "四", "五"], "drink": ["green tea", "black coffee"],
          "day": ["Mondays", "Wednesdays", "Fridays"], "db": ["MySQL", "Postgres"],
          "code": ["LEDGER", "QUEUE", "CACHE"]}


def fact(rng: random.Random) -> str:
    template = rng.choice(TEMPLATES)
    code = rng.choice(VALUES["code"])
    return template.format(**{k: rng.choice(v) for k, v in VALUES.items()}, code_lower=code.lower())


def lines_of(lay) -> dict[str, list[digest.FactLine]]:
    return {p.relative_to(lay.root).as_posix(): digest.facts_of(p.read_text())
            for p in (lay.root / "digest").rglob("*.md")}


def raw(lay, rel: str) -> list[str]:
    return (lay.root / rel).read_text().split("\n")


def check_run(lay, before: dict, before_raw: dict, evidence: list[tuple[str, str]]) -> None:
    """Every fact line of `before` survives byte for byte unless the run's evidence had a fact
    of the same subject that may replace or confirm it."""
    from memflow.tasks.dream.consolidation import relation_to

    for rel, facts in before.items():
        after_lines = raw(lay, rel)
        for fact_line in facts:
            for history in fact_line.history:
                assert before_raw[rel][history.line] in after_lines, (rel, history.text)
            if before_raw[rel][fact_line.line] in after_lines:
                continue
            subject = parse_note(rel, "\n".join(before_raw[rel])).metadata["subject"]
            # the same subject: the node's, or for a person's node a thing it names ("Rex is 4
            # years old now", a statement about Rex, for "My dog Rex is 3 years old")
            named = {slug(word) for word in re.findall(r"[A-Z][a-z]+", fact_line.text)} \
                if subject.startswith("person:") else set()
            allowed = [text for key, text in evidence
                       if (key == subject or key.removeprefix("topic:") in named)
                       and relation_to(speaker(text)[1], fact_line) in ("replaces", "same")]
            assert allowed, f"{rel}: {fact_line.text!r} changed without evidence about it"
            assert any(fact_line.text in line for line in after_lines), "its text is kept"


@pytest.mark.parametrize("seed", range(8))
def test_dreams_never_change_a_fact_they_were_not_told_about(settings, lay, seed):
    rng = random.Random(seed)
    day = date(2026, 6, 1)
    for step in range(10):
        op = rng.choice(["capture", "capture", "edit", "dream", "dream"])
        if op == "capture":
            sid = f"s{rng.randrange(4)}"
            texts = [fact(rng) for _ in range(rng.randint(1, 4))]
            auto_memory(settings, [{"id": f"{seed}-{step}-{n}", "role": "user",
                                    "timestamp": f"{day.isoformat()}T10:{n:02d}:00Z", "content": t}
                                   for n, t in enumerate(texts)], sid)
        elif op == "edit":
            notes = sorted((lay.root / "daily").glob("*/*.md"))
            if notes:
                note = rng.choice(notes)
                note.write_text(note.read_text() + f"\n- {fact(rng)} [[session/dialog/s0.jsonl#L1]]\n")
        else:
            pending, _ = pending_notes(lay, day)
            notes: list[Note] = [parse_note(rel, (lay.root / rel).read_text()) for rel, _ in pending]
            evidence = [(unit.subject, unit.summary) for unit, _ in extract_units(notes)]
            before = lines_of(lay)
            before_raw = {rel: raw(lay, rel) for rel in before}
            run_dream(settings, day)
            check_run(lay, before, before_raw, evidence)
        day += timedelta(days=rng.randint(0, 1))
