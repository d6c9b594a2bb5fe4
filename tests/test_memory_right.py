"""Issue 25's generated suite in one loop: memory that is right through captures, long technical
sessions, forgets, hand edits and nightly dreams.

Everything a statement is made of (subjects, predicates, qualifiers, values) is drawn from
pseudo-word vocabularies of 400 words a slot (`test_change_rule.vocabulary`), English and
Chinese, so no word list in the code can cover it; `MEMFLOW_SEEDS=...` runs other seeds. The days
hold chains of values A -> B -> C with and without cue words, qualifier pairs that must coexist,
co-stated facts, short statements, and numeric and version updates stated inside long technical
messages (pasted logs, code and YAML, answered by assistant replies in Markdown with code).
Between dreams a statement is forgotten, a note is edited through the API and another by hand
(then `check --repair`). After every dream no digest fact changed that the new evidence did not
address; at the end every chain's current value comes first (digest and `--budget 300`), its
replaced values are history in date order, every statement kept is found by default search,
the forgotten one nowhere, every anchor points at its text and `check` is clean."""

from __future__ import annotations

import os
import re
from datetime import date, timedelta

import pytest
from helpers import anchor_failures, digest_failures
from test_change_rule import check_life, current_and_history, generated_life, make_vocab, pick
from test_dream_property import check_run, lines_of, raw

from memflow import api
from memflow.tasks.capture.conversation import auto_memory
from memflow.tasks.dream.consolidation import extract_units
from memflow.tasks.dream.nightly import pending_notes, run_dream
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.recall import search

SEEDS = [int(x) for x in os.environ.get("MEMFLOW_SEEDS", "17,53").split(",")]


@pytest.fixture(params=SEEDS)
def vocab(request):
    return make_vocab(request.param)


def technical(rng, v, day: date, sid: str, statements: list[str]) -> list[dict]:
    """A long user message per statement (the statement between a pasted log and a YAML
    config), each answered by a long assistant reply in Markdown with code that states no value."""
    out = []
    for n, said in enumerate(statements):
        log = "\n".join(f"{day.isoformat()} 10:{i:02d}:07 WARN {pick(rng, v, 'filler')}.{pick(rng, v, 'filler')} "
                        f"retry={i} took={rng.randint(10, 900)}ms" for i in range(8))
        conf = "\n".join(f"  {pick(rng, v, 'filler')}: {rng.randint(1, 99)}" for _ in range(5))
        user = (f"Seeing this on the {pick(rng, v, 'filler')} box:\n\n```\n{log}\n```\n\n{said}\n\n"
                f"The config:\n\n```yaml\n{pick(rng, v, 'filler')}:\n{conf}\n```")
        code = "\n".join(f"{pick(rng, v, 'filler')}_{i} = load({pick(rng, v, 'filler')!r}, limit={i})"
                         for i in range(10))
        prose = " ".join(f"The {pick(rng, v, 'filler')} {pick(rng, v, 'filler')} {pick(rng, v, 'filler')}s before "
                         f"the {pick(rng, v, 'filler')} step." for _ in range(6))
        reply = (f"## What to check\n\n1. Compare the {pick(rng, v, 'filler')} and {pick(rng, v, 'filler')} "
                 f"counters.\n2. Re-run the {pick(rng, v, 'filler')} job with tracing on.\n\n```python\n{code}\n```\n\n"
                 f"{prose}")
        out += [{"id": f"{sid}-u{n}", "role": "user", "timestamp": f"{day.isoformat()}T10:{2 * n:02d}:00Z",
                 "content": user},
                {"id": f"{sid}-a{n}", "role": "assistant", "timestamp": f"{day.isoformat()}T10:{2 * n + 1:02d}:00Z",
                 "content": reply}]
    return out


def technical_facts(rng, v) -> tuple[list[list[str]], list[dict]]:
    """Three days of technical statements: a measured value changing A -> B (naming the old
    one) -> C (restated with "now"), a version pinned again with another value, and a value of
    another component that must stay."""
    adj, noun, metric, unit = pick(rng, v, "adj"), pick(rng, v, "noun"), pick(rng, v, "object"), pick(rng, v, "unit")
    n1, n2, n3 = (str(n) for n in rng.sample(range(100, 9999), 3))
    lib, pinned_in = pick(rng, v, "object"), pick(rng, v, "noun")
    v1, v2 = (f"{rng.randint(1, 9)}.{rng.randint(0, 40)}.{i}" for i in range(2))
    other, size = pick(rng, v, "noun"), str(rng.randint(2, 99))
    days = [[f"The {adj} {noun} {metric} is {n1} {unit}.", f"We pinned {lib} to {v1} in the {pinned_in} file.",
             f"The {other} {metric} is {size} {unit}."],
            [f"The {adj} {noun} {metric} went from {n1} {unit} down to {n2} {unit}."],
            [f"The {adj} {noun} {metric} is now {n3} {unit}.", f"We pinned {lib} to {v2} in the {pinned_in} file."]]
    checks = [{"kind": "chain", "query": f"{adj} {noun} {metric}", "values": [n3, n2, n1], "about": noun},
              {"kind": "chain", "query": f"{lib} pinned {pinned_in}", "values": [v2, v1], "about": lib},
              {"kind": "beside", "lines": [f"The {other} {metric} is {size} {unit}."]}]
    return days, checks


def note_of(lay, session: str):
    [note] = [p for p in (lay.root / "daily").glob("*/*.md") if f"session_id: {session}\n" in p.read_text()]
    return note


def dream_checked(settings, lay, day: date) -> None:
    """A nightly dream, after which no digest fact changed that its new evidence did not address."""
    pending, _ = pending_notes(lay, day)
    notes = [parse_note(rel, (lay.root / rel).read_text()) for rel, _ in pending]
    evidence = [(unit.subject, unit.summary) for unit, _ in extract_units(notes)]
    before = lines_of(lay)
    before_raw = {rel: raw(lay, rel) for rel in before}
    run_dream(settings, day)
    check_run(lay, before, before_raw, evidence)


def test_memory_stays_right_through_technical_sessions_forgets_edits_and_dreams(settings, lay, vocab):
    rng, v = vocab
    days, checks = generated_life(rng, v)
    tech_days, tech_checks = technical_facts(rng, v)
    secret = pick(rng, v, "name") + pick(rng, v, "name")
    forgotten = f"My {pick(rng, v, 'noun')} {pick(rng, v, 'object')} is {secret}."
    hand, by_api = f"I {pick(rng, v, 'verb')} the {pick(rng, v, 'object')} every {pick(rng, v, 'qualifier')}.", \
        f"I {pick(rng, v, 'verb')} my {pick(rng, v, 'object')} with {pick(rng, v, 'name')}."
    ws = settings.workspace
    for n, (day, texts) in enumerate(days):
        rng.shuffle(texts)
        said = texts + ([forgotten] if n == 0 else [])
        auto_memory(settings, [{"id": f"life-{n}-{k}", "role": "user", "timestamp": f"{day.isoformat()}T09:{k:02d}:00Z",
                                "content": t} for k, t in enumerate(said)], f"life-{n}")
        auto_memory(settings, technical(rng, v, day + timedelta(days=1), f"tech-{n}", tech_days[n]), f"tech-{n}")
        dream_checked(settings, lay, day + timedelta(days=1))
        assert anchor_failures(ws) == [] and digest_failures(ws) == [], n
        if n == 0:  # between dreams: a forget, an edit through the API, an edit by hand
            assert any(secret in p.read_text() for p in (lay.root / "digest").rglob("*.md"))
            api.forget(ws, match=secret)
            note = note_of(lay, "life-0").relative_to(lay.root).as_posix()
            api.edit(note, "<!-- memory:auto -->", f"{by_api}\n\n<!-- memory:auto -->", ws)
            tech = note_of(lay, "tech-0")
            tech.write_text(tech.read_text().replace("<!-- memory:auto -->", f"{hand}\n\n<!-- memory:auto -->", 1))
            api.check(ws, repair=True)
            assert anchor_failures(ws) == [], "after the edits"
    api.index(ws)
    every = [t for _, texts in days for t in texts if "```" not in t] + [t for d in tech_days for t in d] + [hand, by_api]
    check_life(settings, lay, checks + tech_checks, every)
    assert anchor_failures(ws) == [] and digest_failures(ws) == []
    assert [f for f in api.check(ws).findings if f.area in ("anchors", "links")] == []
    # knowledge worth a node: no fact that only introduces a pasted block, no node named after one
    assert not [t for t in current_and_history(lay) if t.rstrip().endswith((":", "："))]
    assert not [p for p in (lay.root / "digest").rglob("*.md") if "lines" in p.stem.split("-")]
    for folder in ("session", "daily", "digest"):  # forgotten: nowhere, not even by a part of it
        assert not [p for p in (lay.root / folder).rglob("*") if p.is_file() and secret in p.read_text()]
    shown = "\n".join(h.text for h in search(settings, secret, limit=10).results)
    assert not re.search(secret, shown, re.I)
