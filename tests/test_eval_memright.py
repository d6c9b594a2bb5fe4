"""`memflow eval memright`: a real run on a scenario of the memory-right data set (outside the
repository; skipped when absent), and oracle tests of its scoring rule and baseline packing on
hand-written contexts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_cli

from memflow.tasks.evaluate.memright import (
    SYSTEMS,
    baseline_contexts,
    baseline_searcher,
    message_documents,
    pack_documents,
    score_context,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "memory-right"
SCENARIO = "life-01"  # every kind of question, and a profile
BUDGETS = ("200", "500", "1000")


def words(text: str) -> int:
    """A counter to hand-compute with: one token per word (separators count nothing)."""
    return len(text.split())


@pytest.fixture(scope="module")
def questions() -> list[dict]:
    if not (DATA / SCENARIO / "questions.json").is_file():
        pytest.skip(f"memory-right data not found at {DATA / SCENARIO} (kept outside the repository)")
    return json.loads((DATA / SCENARIO / "questions.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def run(questions, tmp_path_factory):
    out = tmp_path_factory.mktemp("memright") / "out"
    res = run_cli("eval", "memright", str(DATA), "--out", str(out), "--scenarios", SCENARIO)
    assert res.returncode == 0, res.stderr
    return out, res.stdout


def test_summary_counts_every_question_per_system_kind_and_budget(run, questions):
    out, _ = run
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert set(summary["systems"]) == set(SYSTEMS) and summary["questions"] == len(questions)
    kinds = {q["kind"] for q in questions}
    assert kinds == {"update", "chain", "coexist", "not_a_change", "stable", "past"}
    for system in SYSTEMS:
        assert set(summary["systems"][system]) == kinds | {"all"}
        for kind, per_budget in summary["systems"][system].items():
            asked = sum(1 for q in questions if kind in ("all", q["kind"]))
            assert set(per_budget) == set(BUDGETS)
            for cell in per_budget.values():
                assert cell["questions"] == asked
                assert 0.0 <= cell["current_first"] <= cell["found"] <= 1.0
    assert summary["run"]["scenarios"] == [SCENARIO] and summary["run"]["budgets"] == [200, 500, 1000]
    assert (out / "workspaces" / SCENARIO).is_dir()


def test_parquet_has_a_row_per_question_budget_and_system(run, questions):
    import polars as pl

    out, _ = run
    rows = pl.read_parquet(out / "questions.parquet")
    assert rows.height == len(questions) * len(BUDGETS) * len(SYSTEMS)
    assert set(rows["system"]) == set(SYSTEMS) and set(rows["budget"]) == {200, 500, 1000}
    assert rows.filter(pl.col("current_first") & ~pl.col("found")).height == 0
    assert rows.filter(pl.col("tokens") > pl.col("budget")).height == 0


def test_profile_is_scored_for_a_life_scenario(run, questions):
    out, stdout = run
    profile = json.loads((out / "summary.json").read_text(encoding="utf-8"))["profile"]
    asked = sum(1 for q in questions if q["kind"] in ("update", "chain", "stable"))
    mine = profile["scenarios"][SCENARIO]
    assert mine["questions"] == asked and 0 <= mine["met"] <= asked and profile["questions"] == asked
    assert "profile@300" in stdout
    assert all(name in stdout for name in SYSTEMS)


def test_memflow_rows_score_what_api_search_packs(run, questions):
    import polars as pl

    from memflow import api

    out, _ = run
    rows = pl.read_parquet(out / "questions.parquet").filter(pl.col("system") == "memflow")
    settings = api.settings_for(out / "workspaces" / SCENARIO)
    for q in questions[:4] + [q for q in questions if q["as_of"]][:2]:
        for budget in (200, 1000):
            response = api.search(q["question"], settings, budget_tokens=budget, as_of=q["as_of"])
            row = rows.filter((pl.col("id") == q["id"]) & (pl.col("budget") == budget)).row(0, named=True)
            context = "\n\n".join(response.packed)
            assert (row["found"], row["current_first"]) == score_context(context, q["current"], q["stale"])
            assert row["tokens"] == response.packed_tokens


def test_unknown_scenario_is_an_error(questions, tmp_path):
    res = run_cli("eval", "memright", str(DATA), "--out", str(tmp_path / "o"), "--scenarios", "nope")
    assert res.returncode == 1 and "scenarios not in" in res.stderr


# -- the scoring rule (oracle) ----------------------------------------------------------------

def test_current_value_first_is_found_and_first():
    context = "- 2026-04-06 Pri lives in Porto\n\n- 2026-03-02 Pri lives in Lisbon"
    assert score_context(context, ["Porto"], ["Lisbon"]) == (True, True)


def test_a_stale_line_before_the_current_one_is_not_current_first():
    context = "- 2026-03-02 Pri lives in Lisbon\n- 2026-04-06 Pri lives in Porto"
    assert score_context(context, ["Porto"], ["Lisbon"]) == (True, False)


def test_a_line_holding_both_values_is_not_a_stale_line():
    context = "moved from Lisbon to Porto\nLisbon was nice"
    assert score_context(context, ["Porto"], ["Lisbon"]) == (True, True)


def test_a_current_line_labelled_replaced_is_not_current_first():
    context = "- Pri lives in Porto (replaced 2026-01-01)\n- Pri's rent is €890"
    assert score_context(context, ["Porto"], ["Lisbon"]) == (True, False)


def test_a_missing_current_string_is_not_found():
    context = "Pri lives in Porto\nPri pays €1,150"
    assert score_context(context, ["Porto", "€890"], ["€1,150"]) == (False, False)


def test_only_stale_lines_before_the_first_current_line_count():
    context = "\n\nsomething else\n\nRent is €890\n\nRent was €1,150"
    assert score_context(context, ["€890"], ["€1,150"]) == (True, True)


# -- the baselines (oracle) -------------------------------------------------------------------

def test_packing_stops_at_the_first_document_that_does_not_fit():
    assert pack_documents(["a b", "c d e f", "g"], 3, words) == "a b"
    assert pack_documents(["a b", "g", "c d e f"], 3, words) == "a b\n\ng"
    assert pack_documents(["a b c d"], 3, words) == ""


def test_the_newest_first_baseline_packs_the_same_documents_newest_first():
    docs = [("2026-01-01T09:00:00Z", "A one"), ("2026-03-01T09:00:00Z", "B two"),
            ("2026-02-01T09:00:00Z", "C three"), ("2026-04-01T09:00:00Z", "D four")]
    contexts = baseline_contexts([0, 1, 2], docs, 100, words)
    assert contexts == {"bm25": "A one\n\nB two\n\nC three", "bm25-newest": "B two\n\nC three\n\nA one"}
    assert baseline_contexts([0, 1, 2], docs, 4, words) == {"bm25": "A one\n\nB two",
                                                           "bm25-newest": "B two\n\nC three"}


def test_messages_are_dated_documents_up_to_as_of():
    sessions = [("s1", [{"id": "m1", "role": "user", "timestamp": "2026-03-02T09:00:00Z", "content": "hi"},
                        {"id": "m2", "role": "assistant", "name": "Bot", "timestamp": "2026-03-02T09:01:00Z",
                         "content": "hello"}]),
                ("s2", [{"id": "m1", "role": "user", "timestamp": "2026-03-05T09:00:00Z", "content": "later"}])]
    assert [t for _, t in message_documents(sessions, None)] == [
        "2026-03-02 user: hi", "2026-03-02 Bot: hello", "2026-03-05 user: later"]
    assert [t for _, t in message_documents(sessions, "2026-03-04")] == [
        "2026-03-02 user: hi", "2026-03-02 Bot: hello"]


def test_the_baseline_ranks_twenty_documents_that_match_and_no_other():
    messages = [{"id": f"m{i}", "role": "user", "content": f"kayak trip number {i} on the river",
                 "timestamp": f"2026-03-{1 + i % 28:02d}T09:{i:02d}:00Z"} for i in range(30)]
    messages += [{"id": f"x{i}", "role": "user", "timestamp": "2026-03-01T10:00:00Z",
                  "content": f"the weather was grey, day {i}"} for i in range(5)]
    ranked, docs = baseline_searcher([("s1", messages)])("Which kayak trip?", None)
    assert len(ranked) == 20 and all("kayak" in docs[i][1] for i in ranked)
    contexts = baseline_contexts(ranked, docs, 100_000)
    assert all(context.count("kayak") == 20 and "weather" not in context for context in contexts.values())
    none, _ = baseline_searcher([("s1", messages[30:])])("Which kayak trip?", None)
    assert none == []
