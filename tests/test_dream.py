import json
from datetime import date
from functools import partial

import pytest
import yaml
from helpers import run_cli

from memflow.schemas.dream import (
    Correct,
    Corroborate,
    Create,
    DecisionReply,
    Evidence,
    ExtractResult,
    Refine,
    Unit,
)
from memflow.tasks.capture.conversation import auto_memory
from memflow.tasks.dream import digest
from memflow.tasks.dream.dream_runs import RollbackConflict, list_runs, rollback
from memflow.tasks.dream.model_dream import decide_with_model, extract_with_model
from memflow.tasks.dream.nightly import catalog_path, proactive, run_dream
from memflow.tasks.index import run_index


def say(day, sid, *texts):
    return [{"id": f"{sid}-{n}", "role": "user", "timestamp": f"{day}T09:{n:02d}:00Z", "content": t}
            for n, t in enumerate(texts)]


# Labelled fixture: conversations whose units and expected actions are written down.
FIXTURE = [
    ("2026-04-01", "a", ["Our platform team has 5 engineers in Berlin.",
                         "The staging cluster runs Kubernetes 1.29 on three nodes."]),
    ("2026-04-02", "b", ["The staging cluster runs Kubernetes 1.29 on three nodes."]),
    ("2026-04-03", "c", ["The staging cluster also hosts the nightly load tests on three nodes with Kubernetes."]),
    ("2026-04-04", "d", ["Our platform team went from 5 to 7 engineers in Berlin."]),
]
EXPECTED = [("a", ["create", "create"]), ("b", ["corroborate"]), ("c", ["refine"]), ("d", ["correct"])]


def capture_fixture(settings, upto=None):
    for day, sid, texts in FIXTURE[:upto]:
        auto_memory(settings, say(day, sid, *texts), sid)


def digest_files(lay):
    return {p.relative_to(lay.root).as_posix(): p.read_bytes() for p in (lay.root / "digest").rglob("*.md")}


def test_offline_actions_match_the_labelled_fixture(settings, lay):
    for (day, sid, texts), (label, expected) in zip(FIXTURE, EXPECTED):
        auto_memory(settings, say(day, sid, *texts), sid)
        summary = run_dream(settings, date.fromisoformat(day), max_units=10)
        got = sorted(a for a, n in summary.actions.items() for _ in range(n))
        assert got == sorted(expected), (label, summary.actions)
    team = next(t for p, t in digest_files(lay).items() if b"engineers" in t).decode()
    lines = team.split("\n")
    now = next(i for i, line in enumerate(lines) if "7 engineers" in line and line.startswith("- "))
    assert lines[now].startswith("- 2026-04-04: Our platform team went from 5 to 7 engineers in Berlin. [[daily/2026-04-04/")
    assert lines[now + 1].startswith("  - until 2026-04-04: Our platform team has 5 engineers in Berlin. [[daily/2026-04-01/")
    assert team.count("5 engineers in") == 1 and "## Sources" not in team  # each fact once


def test_second_dream_adds_nothing_and_every_fact_links_to_a_daily_line(settings, lay):
    capture_fixture(settings)
    first = run_dream(settings, date(2026, 4, 4), max_units=10)
    assert first.notes_consumed == 4 and first.notes_left == 0
    before = digest_files(lay)
    second = run_dream(settings, date(2026, 4, 4), max_units=10)
    assert second.status == "no change" and digest_files(lay) == before
    for rel, data in before.items():
        facts = digest.facts_of(data.decode())
        assert facts, rel
        for fact in [f for top in facts for f in [top, *top.history]]:
            assert fact.links and all(l.startswith("daily/") and "#L" in l for l in fact.links)
            target, anchor = fact.links[0].split("#L")
            line = (lay.root / target).read_text().split("\n")[int(anchor) - 1]
            assert fact.text in line  # the fact line is the daily line it came from
        texts = [f.text for top in facts for f in [top, *top.history]]
        assert len(texts) == len(set(texts))  # no fact twice


def test_rerun_after_catalog_loss_is_idempotent(settings, lay):
    capture_fixture(settings)
    run_dream(settings, date(2026, 4, 4), max_units=10)
    before = digest_files(lay)
    catalog_path(lay).unlink()  # as if the run had died before finish
    again = run_dream(settings, date(2026, 4, 4), max_units=10)
    assert set(again.actions) <= {"none"} and digest_files(lay) == before


def test_rollback_restores_exact_bytes_and_refuses_after_later_changes(settings, lay):
    capture_fixture(settings, upto=2)
    run_dream(settings, date(2026, 4, 2), max_units=10)
    before = digest_files(lay)
    catalog_before = catalog_path(lay).read_bytes()
    auto_memory(settings, say("2026-04-04", "d", FIXTURE[3][2][0]), "d")
    run = run_dream(settings, date(2026, 4, 4), max_units=10)
    assert digest_files(lay) != before
    assert rollback(lay, run.run_id, catalog_path(lay)) and digest_files(lay) == before
    assert json.loads(catalog_path(lay).read_text()) == json.loads(catalog_before)
    assert "daily/2026-04-04/interests.yaml" not in [p.relative_to(lay.root).as_posix()
                                                    for p in lay.root.rglob("interests.yaml")]
    # the rolled-back night is taken again, then a person edits a node: rollback refuses
    run = run_dream(settings, date(2026, 4, 4), max_units=10)
    assert run.actions == {"correct": 1}, run.actions
    node = lay.root / run.files_written[0]
    node.write_text(node.read_text() + "\nmy edit\n")
    with pytest.raises(RollbackConflict, match="changed since the run"):
        rollback(lay, run.run_id, catalog_path(lay))
    rollback(lay, run.run_id, catalog_path(lay), force=True)
    assert digest_files(lay) == before
    assert {r["run_id"]: r["status"] for r in list_runs(lay)}[run.run_id] == "rolled back"
    assert list_runs(lay)[-1]["run_id"] == run.run_id  # listed oldest first


def test_missed_night_is_caught_up(settings, lay):
    capture_fixture(settings, upto=1)
    run_dream(settings, date(2026, 4, 1), max_units=10)
    capture_fixture(settings, upto=3)  # nights of 04-02 and 04-03 without a dream
    summary = run_dream(settings, date(2026, 4, 3), max_units=10)
    assert summary.notes_read == 2 and summary.notes_consumed == 2


def test_catalog_rules_max_notes_edits_and_deletions(settings, lay):
    capture_fixture(settings)
    first = run_dream(settings, date(2026, 4, 4), max_notes=2, max_units=10)
    assert (first.notes_read, first.notes_left) == (2, 2)
    assert run_dream(settings, date(2026, 4, 4), max_notes=2, max_units=10).notes_read == 2
    catalog = json.loads(catalog_path(lay).read_text())
    assert len(catalog) == 4 and not any(p.endswith(("interests.yaml", "04-01.md")) for p in catalog)
    edited = next(p for p in catalog if "2026-04-02/" in p)
    (lay.root / edited).write_text((lay.root / edited).read_text() + "\n- The staging cluster has an SLO.\n")
    gone = next(p for p in catalog if "2026-04-03/" in p)
    (lay.root / gone).unlink()
    summary = run_dream(settings, date(2026, 4, 4), max_units=10)
    assert summary.notes_read == 1
    assert gone not in json.loads(catalog_path(lay).read_text())


def test_budget_takes_whole_notes_and_reports_the_backlog(settings, lay):
    auto_memory(settings, say("2026-04-01", "m", "The boiler is serviced every March.",
                              "My bank is in Lisbon.", "The router password is on the fridge."), "m")
    auto_memory(settings, say("2026-04-02", "n", "The car insurance renews in June.",
                              "My dentist is Dr. Okafor.", "The spare key is in the blue drawer."), "n")
    first = run_dream(settings, date(2026, 4, 2), max_units=1)  # smaller than one note
    assert first.units > 1 and (first.notes_consumed, first.notes_left) == (1, 1)
    assert first.status == "partial"
    second = run_dream(settings, date(2026, 4, 2), max_units=4)
    assert (second.notes_consumed, second.notes_left, second.status) == (1, 0, "ok")
    assert run_dream(settings, date(2026, 4, 2)).status == "no change"
    events = [json.loads(line) for line in (lay.state_dir / "inbox.jsonl").read_text().splitlines()]
    dreams = [e for e in events if e["job"] == "auto_dream"]
    assert dreams[0]["summary"].endswith("backlog: 1 notes") and dreams[1]["summary"].endswith("backlog: 0 notes")


@pytest.mark.slow  # >10 s here (pytest --durations)
def test_a_busy_day_is_caught_up_in_one_run_with_the_defaults(settings, lay):
    """Hundreds of messages in a day: the nightly defaults consume them all in one run."""
    for session in range(12):
        texts = [f"Ticket {session}-{n}: the {w} service on host h{session}{n} needs a restart after 22:00."
                 for n, w in enumerate(["billing", "search", "gateway", "ledger", "inventory"] * 5)]
        auto_memory(settings, say("2026-04-05", f"busy{session}", *texts), f"busy{session}")
    summary = run_dream(settings, date(2026, 4, 5))
    assert summary.notes_consumed == 12 and summary.notes_left == 0 and summary.units == 300


def test_a_run_that_consumes_nothing_is_an_error_and_keeps_the_notes(settings, lay):
    from memflow.tasks.dream import DreamStalled

    capture_fixture(settings, upto=1)

    def broken(unit, candidates, new_path):
        raise ValueError("model unreachable")

    with pytest.raises(DreamStalled, match="consumed none of 1 note"):
        run_dream(settings, date(2026, 4, 1), decide=broken)
    assert not catalog_path(lay).exists() or json.loads(catalog_path(lay).read_text()) == {}
    assert list_runs(lay)[-1]["status"] == "stalled"
    assert run_dream(settings, date(2026, 4, 1)).notes_consumed == 1  # the next run catches up


def test_topics_skip_recent_titles_and_proactive_reads_them(settings, lay):
    capture_fixture(settings, upto=2)
    run_dream(settings, date(2026, 4, 2), max_units=10, topic_count=2)
    data = yaml.safe_load((lay.root / "daily/2026-04-02/interests.yaml").read_text())
    assert data["date"] == "2026-04-02" and data["topic_count"] == 2
    first_titles = {t["title"] for t in data["topics"]}
    assert first_titles and all(set(t) >= {"title", "reason", "evidence", "keywords", "paths"} for t in data["topics"])
    auto_memory(settings, say("2026-04-03", "e", "The staging cluster runs Kubernetes 1.29 on three nodes."), "e")
    run_dream(settings, date(2026, 4, 3), max_units=10, topic_count=2)
    later = yaml.safe_load((lay.root / "daily/2026-04-03/interests.yaml").read_text())
    assert not first_titles & {t["title"] for t in later["topics"]}
    assert proactive(settings, date(2026, 4, 2))["topics"] == data["topics"]
    assert proactive(settings, date(2026, 1, 1))["status"] == "skipped"


def test_dream_never_touches_daily_notes_or_logs(settings, lay):
    capture_fixture(settings)
    evidence = {p: p.read_bytes() for p in list((lay.root / "daily").rglob("*.md")) +
                list((lay.root / "session").rglob("*.jsonl"))}
    run_dream(settings, date(2026, 4, 4), max_units=10)
    assert {p: p.read_bytes() for p in evidence} == evidence


# ---- with the loopback model scripting each decision ---------------------------------------

def model_run(settings, fake_model, units, decision, day="2026-04-02"):
    fake_model.script.append({"content": ExtractResult(units=units).model_dump_json()})
    fake_model.script.append({"content": DecisionReply(decision=decision).model_dump_json()})
    return run_dream(settings, date.fromisoformat(day), max_units=5,
                     extract=partial(extract_with_model, settings),
                     decide=partial(decide_with_model, settings))


SEEDED = """---
name: Deploys
description: When we deploy.
subject: group:deploys
format: facts-1
---

# Deploys

- 2026-01-01: Deploys happen on Tuesdays. [[daily/2026-01-01/old.md#L3]]
- 2026-01-01: ERR_LEDGER_DRIFT: run ./scripts/reconcile.sh before a deploy. [[daily/2026-01-01/old.md#L4]]

Related: [[digest/wiki/other.md]]
"""


def seed_node(lay):
    (lay.root / "digest/wiki/deploys.md").write_text(SEEDED)


@pytest.fixture
def model_ws(model_settings, lay):
    offline = model_settings.model_copy(update={"embedding_model": ""})
    auto_memory(offline, say("2026-04-02", "x", "We now deploy on Wednesdays, not Tuesdays.",
                             "Deploys need a second reviewer."), "x")
    seed_node(lay)
    run_index(offline)
    note = next(p.relative_to(lay.root).as_posix() for p in (lay.root / "daily/2026-04-02").glob("*.md"))
    unit = Unit(name="Deploy day", bucket="wiki", summary="Deploys moved to Wednesdays.",
                paths=[note], evidence=[Evidence(path=note, lines=[13], text="We now deploy on Wednesdays, not Tuesdays.")])
    return offline, note, unit


UNTOUCHED = "- 2026-01-01: ERR_LEDGER_DRIFT: run ./scripts/reconcile.sh before a deploy. [[daily/2026-01-01/old.md#L4]]"


@pytest.mark.parametrize("decision,check", [
    (Create(path="digest/wiki/deploy-day.md", name="Deploy day", description="Wednesdays",
            claims=["Deploys happen on Wednesdays."], related=["digest/wiki/deploys.md"]),
     lambda t, lay: "[[digest/wiki/deploys.md]]" in (lay.root / "digest/wiki/deploy-day.md").read_text()
     and "- 2026-04-02: Deploys happen on Wednesdays. [[daily/2026-04-02/" in
     (lay.root / "digest/wiki/deploy-day.md").read_text()),
    (Corroborate(path="digest/wiki/deploys.md", fact="Deploys happen on Tuesdays.", reason="same"),
     lambda t, lay: "- 2026-01-01: Deploys happen on Tuesdays. [[daily/2026-01-01/old.md#L3]] [[daily/2026-04-02/" in t
     and t.count("Deploys happen on Tuesdays.") == 1),
    (Refine(path="digest/wiki/deploys.md", additions=["Deploys need a second reviewer."]),
     lambda t, lay: "- 2026-04-02: Deploys need a second reviewer. [[daily/2026-04-02/" in t),
    (Correct(path="digest/wiki/deploys.md", old="Deploys happen on Tuesdays.",
             new="Deploys happen on Wednesdays.", reason="moved"),
     lambda t, lay: "- 2026-04-02: Deploys happen on Wednesdays. [[daily/2026-04-02/" in t
     and "\n  - until 2026-04-02: Deploys happen on Tuesdays. [[daily/2026-01-01/old.md#L3]]" in t),
])
def test_model_decisions_change_files_as_expected(model_ws, lay, fake_model, decision, check):
    settings, note, unit = model_ws
    summary = model_run(settings, fake_model, [unit], decision)
    assert summary.actions == {decision.action: 1}, summary.failed_units
    text = (lay.root / "digest/wiki/deploys.md").read_text()
    assert check(text, lay)
    assert UNTOUCHED in text and "[[digest/wiki/other.md]]" in text  # kept byte for byte
    assert json.loads(catalog_path(lay).read_text())[note]


def test_model_reply_that_replaces_an_unrelated_fact_is_rejected(model_ws, lay, fake_model):
    """The reply names the ERR_LEDGER_DRIFT procedure as the fact to correct with a fact about
    something else: refused, the node unchanged, the note kept for the next run."""
    from memflow.tasks.dream import DreamStalled

    settings, note, unit = model_ws
    before = digest_files(lay)
    wrong = Correct(path="digest/wiki/deploys.md",
                    old="ERR_LEDGER_DRIFT: run ./scripts/reconcile.sh before a deploy.",
                    new="I've also gone vegetarian since April.", reason="newer")
    with pytest.raises(DreamStalled, match="CORRECT refused"):
        model_run(settings, fake_model, [unit], wrong)
    assert digest_files(lay) == before
    assert note not in json.loads(catalog_path(lay).read_text() if catalog_path(lay).exists() else "{}")


def test_node_edits_never_touch_another_line():
    text = SEEDED
    fact = digest.facts_of(text)[0]
    edited = digest.supersede(text, fact, "2026-04-02", "Deploys happen on Wednesdays.", ["daily/x.md#L1"])
    digest.check_only_changed(text, edited, fact)
    tampered = edited.replace("before a deploy", "after a deploy")
    with pytest.raises(digest.NodeEditError, match="changed or dropped a fact"):
        digest.check_only_changed(text, tampered, fact)
    with pytest.raises(digest.NodeEditError):
        digest.check_only_changed(text, text.replace(UNTOUCHED + "\n", ""))


def test_invalid_model_reply_leaves_notes_for_the_next_run(model_ws, lay, fake_model):
    from memflow.tasks.dream import DreamStalled

    settings, note, unit = model_ws
    fake_model.script.append({"content": ExtractResult(units=[unit]).model_dump_json()})
    fake_model.script.append({"content": '{"decision": {"action": "delete", "path": "x"}}'})
    before = digest_files(lay)
    with pytest.raises(DreamStalled):
        run_dream(settings, date(2026, 4, 2), extract=partial(extract_with_model, settings),
                  decide=partial(decide_with_model, settings))
    assert digest_files(lay) == before
    assert note not in json.loads(catalog_path(lay).read_text() if catalog_path(lay).exists() else "{}")


def test_model_decision_with_bad_path_is_rejected(model_ws, lay, fake_model):
    from memflow.tasks.dream import DreamStalled

    settings, note, unit = model_ws
    with pytest.raises(DreamStalled, match="needs an existing digest node"):
        model_run(settings, fake_model, [unit], Refine(path="daily/2026-04-02/x.md", additions=["x"]))


def test_cli_dream_runs_rollback(settings, lay):
    capture_fixture(settings, upto=2)
    ws = str(lay.root)
    res = run_cli("-w", ws, "dream", "--date", "2026-04-02", "--max-units", "10")
    assert res.returncode == 0, res.stderr
    assert "read 2 note(s)" in res.stdout and "wrote digest/" in res.stdout
    assert "backlog: 0 notes" in res.stdout
    res = run_cli("-w", ws, "dream", "runs")
    run_id = res.stdout.split()[0]
    res = run_cli("-w", ws, "dream", "rollback", run_id)
    # the run created its nodes: the rollback deletes them and says so (and in the inbox)
    assert res.returncode == 0 and "deleted digest/" in res.stdout and "restored digest/" not in res.stdout
    assert "rolled back" in run_cli("-w", ws, "inbox").stdout
    res = run_cli("-w", ws, "dream", "rollback", run_id)
    assert res.returncode == 1 and "already rolled back" in res.stderr
    res = run_cli("-w", ws, "proactive", "--date", "2026-04-02", "--json")
    assert json.loads(res.stdout)["status"] == "skipped"


def test_full_node_continues_in_a_part_of_the_same_subject(settings, lay):
    small = settings.model_copy(update={"digest_node_bytes": 200})
    capture_fixture(small, upto=1)
    run_dream(small, date(2026, 4, 1), max_units=10)
    before = digest_files(lay)
    auto_memory(small, say("2026-04-03", "c", FIXTURE[2][2][0]), "c")  # would REFINE the cluster node
    summary = run_dream(small, date(2026, 4, 3), max_units=10)
    assert summary.actions == {"create": 1}
    new = lay.root / next(p for p in summary.files_written if p.startswith("digest/"))
    parent = next(p for p in before if "cluster" in p)
    assert f"continues: {parent}" in new.read_text()  # the part names the full node
    meta = lambda rel: yaml.safe_load((lay.root / rel).read_text().split("---")[1])  # noqa: E731
    assert meta(new.relative_to(lay.root).as_posix())["subject"] == meta(parent)["subject"]
    assert {p: t for p, t in digest_files(lay).items() if p in before} == before  # not grown


def test_a_fact_in_another_language_stands_beside_it_dated(settings, lay):
    """Offline, a statement in another language names no old value in words the rule can align:
    both stand, dated, newest found first; nothing is replaced on a guess."""
    auto_memory(settings, say("2026-04-01", "en", "My cat Mochi is three years old."), "en")
    run_dream(settings, date(2026, 4, 1))
    auto_memory(settings, say("2026-04-02", "zh", "我的猫Mochi现在四岁了。"), "zh")
    assert run_dream(settings, date(2026, 4, 2)).actions == {"refine": 1}
    [node] = [t.decode() for t in digest_files(lay).values()]
    facts = digest.facts_of(node)
    assert [(f.date, f.text) for f in facts] == [("2026-04-01", "My cat Mochi is three years old."),
                                                 ("2026-04-02", "我的猫Mochi现在四岁了。")]
    assert not any(f.history for f in facts)


def test_what_is_not_memory_never_becomes_a_node(settings, lay):
    from memflow.tasks.dream.facts import is_memory

    chatter = ["Hi! Good morning.", "Thanks, that's great.", "Glad I could help!", "(read in part)",
               "name, age, city, email", "| id | owner | status |", "Noted: will do.", "好的，谢谢",
               "Let me know if you need anything else.", "---"]
    assert not [c for c in chatter if is_memory(c)]
    assert all(is_memory(f) for f in ["My bank is in Lisbon.", "我的女儿叫小米，今年七岁。",
                                      "Port 5432 is open.", "name, age and city are required fields."])
    note = lay.root / "daily/2026-04-01/chatter.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Chatter\n\n" + "".join(f"- {c} [[session/dialog/s.jsonl#L1]]\n" for c in chatter))
    summary = run_dream(settings, date(2026, 4, 1))
    assert summary.units == 0 and not digest_files(lay) and summary.notes_consumed == 1



def test_only_the_users_words_become_facts_about_the_user(settings, lay):
    """Questions are not facts; the assistant's words never land in a node about the user
    (its how-to steps may make a procedure); a named other speaker's words are theirs."""
    day = "2026-04-01"
    log = [{"id": f"m{n}", "role": role, "timestamp": f"{day}T09:0{n}:00Z", "content": text}
           for n, (role, text) in enumerate([
               ("user", "I live in Lisbon with my partner Jonas."),
               ("assistant", "I think you live near the river and you like quiet streets."),
               ("user", "How do I roll back a bad deploy of the billing service?"),
               ("assistant", "Run deploy/rollback.sh with the previous release tag, then watch the "
                             "error dashboard."),
           ], 1)]
    auto_memory(settings, log, "mine")
    named = [{"id": "n1", "role": "user", "name": "Caroline", "timestamp": f"{day}T10:00:00Z",
              "content": "I went to a support group yesterday."},
             {"id": "n2", "role": "assistant", "name": "Melanie", "timestamp": f"{day}T10:01:00Z",
              "content": "I painted a lake sunrise last year."}]
    auto_memory(settings, named, "named")
    run_dream(settings, date.fromisoformat(day))
    nodes = {path: text.decode() for path, text in digest_files(lay).items()}
    everything = "\n".join(nodes.values())
    assert "I live in Lisbon with my partner Jonas." in everything
    assert "near the river" not in everything and "roll back a bad deploy" not in everything
    rollback = [t for p, t in nodes.items() if p.startswith("digest/procedure/") and "rollback.sh" in t]
    # the procedure's line says who said it, as the daily line does (recall weighs an assistant's
    # words below the user's); the node's description is the words alone
    assert len(rollback) == 1 and ": Assistant: Run deploy/rollback.sh" in rollback[0]
    assert "description: Run deploy/rollback.sh" in rollback[0]
    melanie = [t for p, t in nodes.items() if "lake sunrise" in t]
    assert len(melanie) == 1 and "Melanie" in melanie[0].split("\n# ")[1].split("\n")[0]
    assert "Melanie" not in next(t for t in nodes.values() if "support group" in t).split("\n# ")[1].split("\n")[0]


LEGACY = """---
name: double, drink, espresso
description: I switched from espresso to green tea in the morning.
---

# double, drink, espresso

- I switched from espresso to green tea in the morning.
> note: contradicted by [[daily/2026-03-05/team.md#L13]] - was: I always drink a double espresso before my first meeting. (a later note says otherwise)
- I like oat milk.

Related: [[digest/wiki/photo-team.md]]

## Sources

- Derived from [[daily/2026-03-02/redis.md#L13]]: I always drink a double espresso before my first meeting.
- Corrected by [[daily/2026-03-05/team.md#L13]]: I switched from espresso to green tea in the morning.
- Refined by [[daily/2026-03-06/milk.md#L12]]: I like oat milk.
- Corroborated by [[daily/2026-03-07/again.md#L12]]: Green tea in the morning, I switched from espresso.
"""


def test_migrate_rewrites_earlier_nodes_into_fact_lines_reversibly(settings, lay):
    legacy = lay.root / "digest/personal/double-drink-espresso.md"
    legacy.write_text(LEGACY)
    res = run_cli("-w", str(lay.root), "dream", "migrate")
    assert res.returncode == 0 and "migrated 1 node(s)" in res.stdout, res.stderr
    text = legacy.read_text()
    assert "## Sources" not in text and digest.is_fact_node(text)
    facts = digest.facts_of(text)
    assert [(f.date, f.text) for f in facts] == [
        ("2026-03-05", "I switched from espresso to green tea in the morning."),
        ("2026-03-06", "I like oat milk.")]
    assert facts[0].links == ["daily/2026-03-05/team.md#L13", "daily/2026-03-07/again.md#L12"]
    [old] = facts[0].history
    assert (old.date, old.text, old.links) == ("2026-03-05", "I always drink a double espresso before "
                                               "my first meeting.", ["daily/2026-03-02/redis.md#L13"])
    assert "[[digest/wiki/photo-team.md]]" in text
    assert run_cli("-w", str(lay.root), "dream", "migrate").stdout.startswith("nothing to migrate")
    run_id = run_cli("-w", str(lay.root), "dream", "runs").stdout.split()[0]
    assert run_cli("-w", str(lay.root), "dream", "rollback", run_id).returncode == 0
    assert legacy.read_text() == LEGACY


def test_a_dream_never_writes_into_a_node_of_the_earlier_format(settings, lay):
    legacy = lay.root / "digest/personal/double-drink-espresso.md"
    legacy.write_text(LEGACY)
    auto_memory(settings, say("2026-04-01", "t", "I always drink green tea in the morning."), "t")
    run_dream(settings, date(2026, 4, 1))
    assert legacy.read_text() == LEGACY


def test_one_node_per_person_named_after_them_and_earlier_facet_nodes_linked(settings, lay):
    facet = lay.root / "digest/personal/the-user-work.md"  # a facet node an earlier version wrote
    facet.parent.mkdir(parents=True, exist_ok=True)
    facet.write_text("---\nname: The user – work\ndescription: Globex\nsubject: person:the-user:work\n"
                     "format: facts-1\n---\n\n# The user – work\n\n- 2026-03-01: I work at Globex as a data "
                     "engineer. [[daily/2026-03-01/globex.md#L3]]\n")
    auto_memory(settings, say("2026-04-01", "a", "I drink green tea every morning."), "a")
    run_dream(settings, date(2026, 4, 1))
    auto_memory(settings, say("2026-04-02", "b", "My sister Ana plays the cello in Porto."), "b")
    run_dream(settings, date(2026, 4, 2))
    nodes = {p: t.decode() for p, t in digest_files(lay).items()}
    user = "digest/personal/the-user.md"
    assert "name: The user" in nodes[user] and "green tea" in nodes[user] and "cello" in nodes[user]
    assert "[[digest/personal/the-user-work.md]]" in nodes[user]  # the person's other node, linked
    assert not any("–" in t.split("name:")[1].split("\n")[0] for p, t in nodes.items() if p != str(
        facet.relative_to(lay.root)))  # no facet guessed from the words said
