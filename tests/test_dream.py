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
from memflow.tasks.dream.digest import sources_of
from memflow.tasks.dream.dream_runs import RollbackConflict, list_runs, rollback
from memflow.tasks.dream.model_dream import decide_with_model, extract_with_model
from memflow.tasks.dream.nightly import catalog_path, proactive, run_dream
from memflow.tasks.ground.markdown import parse_links
from memflow.tasks.index.indexing import run_index


def say(day, sid, *texts):
    return [{"id": f"{sid}-{n}", "role": "user", "timestamp": f"{day}T09:0{n}:00Z", "content": t}
            for n, t in enumerate(texts)]


# Labelled fixture: conversations whose units and expected actions are written down.
FIXTURE = [
    ("2026-04-01", "a", ["Our platform team has 5 engineers in Berlin.",
                         "The staging cluster runs Kubernetes 1.29 on three nodes."]),
    ("2026-04-02", "b", ["The staging cluster runs Kubernetes 1.29 on three nodes."]),
    ("2026-04-03", "c", ["The staging cluster also hosts the nightly load tests on three nodes with Kubernetes."]),
    ("2026-04-04", "d", ["Our platform team has 7 engineers in Berlin now."]),
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
    assert "- Our platform team has 7 engineers in Berlin now." in team
    assert "> note: contradicted by [[daily/2026-04-04/" in team
    assert "was: Our platform team has 5 engineers in Berlin." in team


def test_second_dream_adds_nothing_and_every_claim_links_to_a_daily_note(settings, lay):
    capture_fixture(settings)
    first = run_dream(settings, date(2026, 4, 4), max_units=10)
    assert first.notes_consumed == 4
    before = digest_files(lay)
    second = run_dream(settings, date(2026, 4, 4), max_units=10)
    assert second.status == "no change" and digest_files(lay) == before
    for rel, data in before.items():
        text = data.decode()
        sources = [l.target for l in parse_links(text.split("## Sources")[1])]
        assert sources and all((lay.root / s).exists() and s.startswith("daily/") for s in sources)
        assert len(sources) == len(set(sources_of(text)))  # no source twice


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
    assert run.actions == {"correct": 1}
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


def test_max_units_leaves_the_rest_for_the_next_run(settings, lay):
    auto_memory(settings, say("2026-04-01", "m", "The boiler is serviced every March.",
                              "My bank is in Lisbon.", "The router password is on the fridge."), "m")
    first = run_dream(settings, date(2026, 4, 1), max_units=1)
    assert first.units == 1 and first.notes_consumed == 0
    second = run_dream(settings, date(2026, 4, 1), max_units=10)
    assert second.notes_consumed == 1


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


def seed_node(lay, text="- Deploys happen on Tuesdays.\n\nRelated: [[digest/wiki/other.md]]\n"):
    (lay.root / "digest/wiki/deploys.md").write_text(
        "---\nname: Deploys\ndescription: When we deploy.\n---\n\n# Deploys\n\n" + text +
        "\n## Sources\n\n- Derived from [[daily/2026-01-01/old.md#L3]]: Deploys happen on Tuesdays.\n")


@pytest.fixture
def model_ws(model_settings, lay):
    offline = model_settings.model_copy(update={"embedding_model": ""})
    auto_memory(offline, say("2026-04-02", "x", "We now deploy on Wednesdays, not Tuesdays.",
                             "Deploys need a second reviewer."), "x")
    seed_node(lay)
    run_index(offline)
    note = next(p.relative_to(lay.root).as_posix() for p in (lay.root / "daily/2026-04-02").glob("*.md"))
    unit = Unit(name="Deploy day", bucket="wiki", summary="Deploys moved to Wednesdays.",
                paths=[note], evidence=[Evidence(path=note, lines=[12], text="We now deploy on Wednesdays, not Tuesdays.")])
    return offline, note, unit


@pytest.mark.parametrize("decision,check", [
    (Create(path="digest/wiki/deploy-day.md", name="Deploy day", description="Wednesdays",
            claims=["Deploys happen on Wednesdays."], related=["digest/wiki/deploys.md"]),
     lambda t, lay: "[[digest/wiki/deploys.md]]" in (lay.root / "digest/wiki/deploy-day.md").read_text()),
    (Corroborate(path="digest/wiki/deploys.md", reason="same"),
     lambda t, lay: "- Corroborated by [[daily/2026-04-02/" in t and t.count("- Deploys happen on Tuesdays.") == 1),
    (Refine(path="digest/wiki/deploys.md", additions=["Deploys need a second reviewer."]),
     lambda t, lay: "- Deploys need a second reviewer." in t and "- Refined by [[daily/" in t),
    (Correct(path="digest/wiki/deploys.md", old="Deploys happen on Tuesdays.",
             new="Deploys happen on Wednesdays.", reason="moved"),
     lambda t, lay: "- Deploys happen on Wednesdays.\n> note: contradicted by [[daily/2026-04-02/" in t
     and "was: Deploys happen on Tuesdays. (moved)" in t),
])
def test_model_decisions_change_files_as_expected(model_ws, lay, fake_model, decision, check):
    settings, note, unit = model_ws
    summary = model_run(settings, fake_model, [unit], decision)
    assert summary.actions == {decision.action: 1}, summary.failed_units
    text = (lay.root / "digest/wiki/deploys.md").read_text()
    assert check(text, lay)
    assert "[[daily/2026-01-01/old.md#L3]]" in text and "[[digest/wiki/other.md]]" in text  # kept
    assert json.loads(catalog_path(lay).read_text())[note]


def test_invalid_model_reply_leaves_notes_for_the_next_run(model_ws, lay, fake_model):
    settings, note, unit = model_ws
    fake_model.script.append({"content": ExtractResult(units=[unit]).model_dump_json()})
    fake_model.script.append({"content": '{"decision": {"action": "delete", "path": "x"}}'})
    before = digest_files(lay)
    summary = run_dream(settings, date(2026, 4, 2), extract=partial(extract_with_model, settings),
                        decide=partial(decide_with_model, settings))
    assert summary.failed_units and summary.status == "partial"
    assert digest_files(lay) == before
    assert note not in json.loads(catalog_path(lay).read_text() if catalog_path(lay).exists() else "{}")


def test_model_decision_with_bad_path_is_rejected(model_ws, lay, fake_model):
    settings, note, unit = model_ws
    summary = model_run(settings, fake_model, [unit], Refine(path="daily/2026-04-02/x.md", additions=["x"]))
    assert "needs an existing digest node" in next(iter(summary.failed_units.values()))


def test_cli_dream_runs_rollback(settings, lay):
    capture_fixture(settings, upto=2)
    ws = str(lay.root)
    res = run_cli("-w", ws, "dream", "--date", "2026-04-02", "--max-units", "10")
    assert res.returncode == 0, res.stderr
    assert "read 2 note(s)" in res.stdout and "wrote digest/" in res.stdout
    res = run_cli("-w", ws, "dream", "runs")
    run_id = res.stdout.split()[0]
    res = run_cli("-w", ws, "dream", "rollback", run_id)
    assert res.returncode == 0 and "restored digest/" in res.stdout
    res = run_cli("-w", ws, "dream", "rollback", run_id)
    assert res.returncode == 1 and "already rolled back" in res.stderr
    res = run_cli("-w", ws, "proactive", "--date", "2026-04-02")
    assert json.loads(res.stdout)["status"] == "skipped"


def test_full_node_is_split_by_subject_not_grown(settings, lay):
    small = settings.model_copy(update={"digest_node_bytes": 200})
    capture_fixture(small, upto=1)
    run_dream(small, date(2026, 4, 1), max_units=10)
    before = digest_files(lay)
    auto_memory(small, say("2026-04-03", "c", FIXTURE[2][2][0]), "c")  # would REFINE the cluster node
    summary = run_dream(small, date(2026, 4, 3), max_units=10)
    assert summary.actions == {"create": 1}
    new = lay.root / next(p for p in summary.files_written if p.startswith("digest/"))
    assert any(f"[[{parent}]]" in new.read_text() for parent in before)  # linked to the full node
    assert {p: t for p, t in digest_files(lay).items() if p in before} == before  # not grown
