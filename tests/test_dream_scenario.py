"""A generated multi-day scenario, offline and with the loopback model deciding: facts that
change (home, manager, a pet's age, a drink, a database, a team size; English and Chinese), new
statements that show no evidence of a change (a schedule restated with other days and times),
stable procedures with identifiers, and small talk. After a few nightly dreams with the default
settings the current value of every changed fact answers a question about it before the old
one; offline, the old value is history only where the new statement named it ("from Berlin to
Lisbon"), else both stand, dated; with the model, every change it decides is applied; every
procedure is found verbatim in digest/, small talk made no node, a re-run changes nothing and
the backlog is empty."""

from __future__ import annotations

import json
import random
import re
from datetime import date, timedelta

import pytest

from memflow import api
from memflow.schemas.dream import DecisionReply, Unit
from memflow.tasks.capture.conversation import auto_memory
from memflow.tasks.dream import digest
from memflow.tasks.dream.consolidation import decide_offline
from memflow.tasks.dream.nightly import catalog_path, run_dream
from memflow.tasks.recall import search

pytestmark = pytest.mark.slow  # several nightly dreams

SMALL_TALK = ["Hi! Good morning.", "Thanks, that worked.", "Sounds good.", "好的，谢谢", "Hello again."]
PROCEDURES = [
    "To fix ERR_LEDGER_DRIFT, run ./scripts/reconcile.sh --ledger main and then check the drift dashboard.",
    "To roll back the billing service, run deploy/rollback.sh with the previous release tag.",
    "When the search index is stale, run `memflow reindex` on the search host.",
]
# (first statement, later statement, question, words the current value must show); the first
# three name the old value (the offline rule's evidence), the others do not
CHANGES = [
    ("I live in Berlin, in a flat near the Tiergarten.", "I moved from Berlin to Lisbon last week.",
     "Where does Jonas live?", ["Lisbon"]),
    ("I always drink a double espresso before my first meeting.",
     "I switched from espresso to green tea in the morning.", "What do I drink in the morning?",
     ["green tea"]),
    ("We use MySQL for the billing database.", "We moved the billing database from MySQL to Postgres 16.",
     "Which database does billing use?", ["Postgres"]),
    ("My manager is Priya Raman.", "My new manager is Tomás Silva.", "Who is my manager?", ["Tomás"]),
    ("My cat Mochi is three years old.", "我的猫Mochi现在四岁了。", "How old is the cat Mochi?", ["四岁"]),
    ("Our payments team has 6 engineers.", "Our payments team has 8 engineers now.",
     "How many engineers are on the payments team?", ["8 engineers"]),
]
NAMED = 3
# Two slots of a schedule restated (days and times), or a sentence of another shape: no evidence
# that the old one stopped being true (one may go to the gym on Mondays and on Wednesdays), so
# the new line stands beside the old one, both current.
BESIDE = [
    ("I go to the gym on Mondays at 7:00.", "I now go to the gym on Wednesdays at 18:30."),
    ("我每周六上午九点去游泳。", "游泳现在改到周日下午三点了。"),
]


def scenario(seed: int) -> list[tuple[str, str, list[str]]]:
    """Days of conversations: first statements, procedures and small talk shuffled over the
    first days, then the changes, small talk everywhere."""
    rng = random.Random(seed)
    first = [c[0] for c in CHANGES] + [b[0] for b in BESIDE] + PROCEDURES
    rng.shuffle(first)
    later = [c[1] for c in CHANGES] + [b[1] for b in BESIDE]
    rng.shuffle(later)
    start = date(2026, 5, 4)
    days = []
    for n, chunk in enumerate([first[:6], first[6:], later[:4], later[4:]]):
        texts = chunk + rng.sample(SMALL_TALK, 2)
        rng.shuffle(texts)
        days.append(((start + timedelta(days=2 * n)).isoformat(), f"jonas-{n}", texts))
    return days


def say(day: str, sid: str, texts: list[str]) -> list[dict]:
    return [{"id": f"{sid}-{n}", "role": "user", "timestamp": f"{day}T09:{n:02d}:00Z", "content": t}
            for n, t in enumerate(texts)]


def digest_texts(lay) -> dict[str, str]:
    return {p.relative_to(lay.root).as_posix(): p.read_text() for p in (lay.root / "digest").rglob("*.md")}


def live_through(settings, lay, days, decide=None) -> list:
    summaries = []
    for day, sid, texts in days:
        auto_memory(settings, say(day, sid, texts), sid)
        summaries.append(run_dream(settings, date.fromisoformat(day), decide=decide))
    return summaries


def check_outcome(settings, lay, last_day: str, replaced: int = NAMED) -> None:
    """`replaced`: how many of CHANGES (the first ones) the digest keeps as history."""
    for n, (first, later, question, current) in enumerate(CHANGES):
        # the packed context states the new statement before the old one (labelled or history)
        packed = "\n".join(api.search(question, settings.workspace, limit=5, budget_tokens=400).packed)
        new_at = packed.find(later.rstrip(".。"))
        assert new_at >= 0 and all(word in packed for word in current), (question, packed)
        old_at = packed.find(first.rstrip(".。"))
        other_language = bool(re.search("[\u4e00-\u9fff]", first)) != bool(re.search("[\u4e00-\u9fff]", later))
        if n < replaced or not other_language:  # offline, a question in English ranks the English
            assert old_at < 0 or new_at < old_at, (question, packed)  # line first: both are shown
        facts = [f for node in digest_texts(lay).values() for f in digest.facts_of(node)]
        stated = next(f for f in facts if all(word in f.text for word in current))
        if n < replaced:
            assert stated.history, f"the replaced value of {question!r} is kept as history"
        else:  # no evidence of a change: both stand, dated
            assert not stated.history and any(first.rstrip(".") in f.text for f in facts), question
    current_lines = {f.text: f for node in digest_texts(lay).values() for f in digest.facts_of(node)}
    for old, new in BESIDE:
        assert old in current_lines and new in current_lines, (old, new)
        assert not current_lines[new].history
    nodes = digest_texts(lay)
    for procedure in PROCEDURES:
        assert any(procedure in text for text in nodes.values()), procedure
        top = search(settings, procedure, limit=1).results[0]
        assert procedure in top.text  # verbatim, wherever it ranks first (transcript or digest)
    every_line = "\n".join(nodes.values())
    assert not [t for t in SMALL_TALK if t in every_line]
    before = digest_texts(lay)
    again = run_dream(settings, date.fromisoformat(last_day))
    assert again.status == "no change" and digest_texts(lay) == before
    assert not [rel for rel, sha in json.loads(catalog_path(lay).read_text()).items()
                if not (lay.root / rel).exists()]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_nightly_dreams_keep_memory_current_offline(settings, lay, seed):
    days = scenario(seed)
    summaries = live_through(settings, lay, days)
    assert [s.notes_left for s in summaries] == [0] * len(days)
    assert sum(s.actions.get("correct", 0) for s in summaries) == NAMED
    check_outcome(settings, lay, days[-1][0])


def model_decisions(fake, lay, sabotage: list[str]):
    """The loopback model decides like the offline consolidator (its candidates come from the
    request it got), and, as a model reads meaning, also corrects the old statement of a change
    that names no old value (applied: the checks are structural), except for units whose text is
    in `sabotage`: there its reply puts a made-up procedure in the place of an unrelated
    procedure line (refused: not grounded in the lines the unit cites)."""

    def reply(messages):
        prompt = messages[-1]["content"]
        unit = Unit.model_validate_json(prompt.split("Unit:\n", 1)[1].split("\n\nCandidate nodes:", 1)[0])
        shown = prompt.split("\n\nCandidate nodes:\n", 1)[1].rsplit("\n\nIf you create a node", 1)[0]
        new_path = re.search(r"its path is (\S+)\.$", prompt).group(1)
        nodes, others = {}, {}
        for block in shown.split("=== ")[1:]:
            path, _, text = block.partition("\n")
            (nodes if f"subject: {unit.subject}\n" in text else others)[path] = text.rstrip("\n") + "\n"
        if unit.summary in sabotage:
            sabotage.remove(unit.summary)
            rel, text = next((rel, text) for rel, text in digest_texts(lay).items()
                             if "/procedure/" in rel)
            return json.dumps({"decision": {"action": "correct", "path": rel,
                                            "old": digest.facts_of(text)[0].text,
                                            "new": "Run ./scripts/purge.sh --all every night.", "reason": "newer"}})
        for first, later, _, _ in CHANGES[NAMED:]:
            if unit.summary == later:
                rel, text = next((rel, text) for rel, text in digest_texts(lay).items() if first in text)
                old = next(f.text for f in digest.facts_of(text) if f.text.endswith(first))
                return json.dumps({"decision": {"action": "correct", "path": rel, "old": old,
                                                "new": later, "reason": "the same question, a new answer"}})
        return DecisionReply(decision=decide_offline(unit, nodes, new_path, elsewhere=others)).model_dump_json()

    fake.default_chat = reply


def test_the_same_scenario_with_the_model_deciding_and_one_bad_reply(model_settings, lay, fake_model):
    from functools import partial

    from memflow.tasks.dream import DreamStalled, decide_with_model

    settings = model_settings.model_copy(update={"embedding_model": ""})
    days = scenario(4)
    sabotage = [next(text for text in days[2][2] if text not in SMALL_TALK)]
    model_decisions(fake_model, lay, sabotage)
    decide = partial(decide_with_model, settings)
    outcomes = []
    for day, sid, texts in days:
        auto_memory(settings, say(day, sid, texts), sid)
        procedures = {rel: text for rel, text in digest_texts(lay).items() if "/procedure/" in rel}
        try:
            outcomes.append(run_dream(settings, date.fromisoformat(day), decide=decide))
        except DreamStalled as exc:  # the night's only note had the refused unit
            outcomes.append(str(exc))
        assert {rel: digest_texts(lay)[rel] for rel in procedures} == procedures  # never altered
    assert not sabotage, "the bad reply was sent"
    refused = [o for o in outcomes if isinstance(o, str) or o.failed_units]
    assert len(refused) == 1 and "CORRECT refused" in str(refused[0] if isinstance(refused[0], str)
                                                           else refused[0].failed_units)
    assert outcomes[-1].notes_left == 0 and outcomes[-1].notes_consumed == 2  # caught up next night
    check_outcome(settings, lay, days[-1][0], replaced=len(CHANGES))
