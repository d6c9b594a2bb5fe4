import json
from pathlib import Path

import polars as pl
import pytest
from helpers import run_cli

from memflow.tasks.evaluate.locomo_eval import run_evaluation

DATA = Path(__file__).parent / "data" / "two_conversations.json"
KS, BUDGETS = [1, 5], [30, 1000]


@pytest.fixture
def evaluated(settings, tmp_path):
    out = tmp_path / "ev"
    return out, run_evaluation(DATA, out, settings.model_copy(update={"workspace": out}), KS, BUDGETS)


def test_summary_shape_and_evidence_counting(evaluated):
    out, summary = evaluated
    for key in ("questions", "recall_any", "recall_all", "budget_recall_any", "budget_recall_all",
                "session_recall", "mrr", "ndcg@10", "per_category", "baseline", "run"):
        assert key in summary
    assert set(summary["recall_any"]) == {"1", "5"} and set(summary["budget_recall_any"]) == {"30", "1000"}
    assert set(summary["baseline"]["recall_any"]) == {"1", "5"}
    # "D7:1" dangles; "D1:1; D1:2" is malformed but both ids are kept
    assert summary["evidence"] == {"questions_total": 4, "without_valid_evidence": 1,
                                   "malformed_entries": 1, "dangling_ids": 1}
    assert summary["questions"] == 3
    assert summary["qa"]["status"].startswith("not run")
    assert summary["run"]["samples"] == ["t-1", "t-2"] and summary["run"]["seconds"] >= 0


def test_metric_values_on_the_hand_made_file(evaluated):
    out, summary = evaluated
    frame = pl.read_parquet(out / "questions.parquet")
    assert frame.height == 4
    kitten = frame.filter(pl.col("question") == "What is the name of Ben's kitten?").row(0, named=True)
    assert "D1:2" in kitten["covered"] and kitten["any@1"] == 1.0 and kitten["first_hit"] == 1
    cello = frame.filter(pl.col("question") == "When are Ana's cello lessons?").row(0, named=True)
    assert cello["all@5"] == 1.0  # both sessions' notes within the top 5
    # three scored questions, each found at rank 1 -> recall_any@1 = MRR = 1
    assert summary["recall_any"]["1"] == 1.0 and summary["mrr"] == 1.0
    assert summary["baseline"]["recall_any"]["5"] == 1.0
    # a 30-token budget holds less than one result: the cut result covers less
    assert summary["budget_recall_any"]["30"] <= summary["budget_recall_any"]["1000"]
    assert summary["per_category"]["4 single-hop"]["questions"] == 2
    # the transcript baseline: the same search and packing over the raw session transcripts
    assert summary["transcript"]["recall_any"]["5"] == 1.0
    assert (out / "workspaces" / "t-1-transcript" / "daily").is_dir()
    assert set(frame.filter(pl.col("transcript_first_hit").is_not_null())["transcript_first_hit"]) <= {1, 2, 3, 4, 5}


def test_cli_eval_writes_files(tmp_path):
    out = tmp_path / "cli-ev"
    res = run_cli("eval", "locomo", str(DATA), "--out", str(out), "--k", "1,5", "--budgets", "1000",
                  "--samples", "t-2")
    assert res.returncode == 0, res.stderr
    assert "recall_any@1" in res.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["samples"] == ["t-2"] and (out / "questions.parquet").exists()
    res = run_cli("eval", "locomo", str(DATA), "--out", str(out), "--samples", "nope")
    assert res.returncode == 1 and "samples not in" in res.stderr


def test_cli_eval_grid_counts_every_combinations_questions(tmp_path):
    """A grid of two values asks every question twice: the progress counts to its own total."""
    out = tmp_path / "grid-ev"
    res = run_cli("eval", "locomo", str(DATA), "--out", str(out), "--k", "1", "--budgets", "1000",
                  "--samples", "t-2", "--grid", "keyword_weight=0.9,0.5", env={"MEMFLOW_PROGRESS_SECONDS": "0"})
    assert res.returncode == 0, res.stderr
    questions = len(json.loads(DATA.read_text())[1]["qa"])
    assert f"done, {2 * questions}/{2 * questions} question(s) (100%)" in res.stderr


def test_qa_accuracy_with_the_loopback_model(model_settings, tmp_path, fake_model):
    out = tmp_path / "qa"
    settings = model_settings.model_copy(update={"workspace": out, "embedding_model": ""})

    def reply(messages):
        if "grade" in messages[0]["content"]:
            return json.dumps({"correct": "Lisbon" in messages[1]["content"].split("Answer:")[1]})
        if "Memory context" in messages[-1]["content"]:
            return "Lisbon"
        return json.dumps({"keep": True, "name": "Run", "description": "marathon",
                           "facts": [{"text": "The marathon in Lisbon starts at seven.", "lines": [1]}]})

    fake_model.default_chat = reply
    summary = run_evaluation(DATA, out, settings, KS, BUDGETS, samples=["t-2"])
    assert summary["qa"] == {"status": "ok", "questions": 1, "accuracy": 1.0,
                             "per_category": {"4 single-hop": 1.0}}



@pytest.mark.parametrize("seed", [3, 41, 977])
def test_the_evaluation_packs_a_dated_question_as_the_api_does(settings, tmp_path, seed):
    """The evaluation scores the context a caller gets: a question naming a month packs the
    lines of that month first (`recall.asked_window`) in `memflow eval` as in `api.search`, so
    asked for an older value by its month, that value is the "current" one the context states
    first."""
    import calendar
    import random

    from test_change_rule import vocabulary

    from memflow import api

    rng = random.Random(seed)
    words = vocabulary(rng, 500)
    thing, measure, unit = (rng.choice(words) for _ in range(3))
    months = sorted(rng.sample(range(1, 13), 3))
    values = rng.sample(range(10, 999), 3)
    conversation = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for n, (month, value) in enumerate(zip(months, values), start=1):
        conversation[f"session_{n}_date_time"] = f"10:00 am on 2 {calendar.month_name[month]}, 2025"
        conversation[f"session_{n}"] = [
            {"speaker": "Ana", "dia_id": f"D{n}:1", "text": f"The {measure} of {thing} is {value} {unit}."},
            {"speaker": "Ben", "dia_id": f"D{n}:2", "text": f"The {rng.choice(words)} of {rng.choice(words)} is {rng.randint(10, 999)}."}]
    asked = rng.randrange(2)  # an older one, by its month
    question = f"What was the {measure} of {thing} in {calendar.month_name[months[asked]]} 2025?"
    sample = {"sample_id": f"w-{seed}", "conversation": conversation,
              "qa": [{"question": question, "answer": str(values[asked]), "evidence": [f"D{asked + 1}:1"],
                      "category": 4, "previous": [str(v) for v in values if v != values[asked]]}]}
    data = tmp_path / "dated.json"
    data.write_text(json.dumps([sample]), encoding="utf-8")
    out = tmp_path / "ev"
    run_evaluation(data, out, settings.model_copy(update={"workspace": out}), [1], [300])
    row = pl.read_parquet(out / "questions.parquet").row(0, named=True)
    packed = api.search(question, out / "workspaces" / f"w-{seed}", budget_tokens=300).packed
    text = "\n".join(packed)
    assert str(values[asked]) in text
    stated = {v: text.index(f" {v} ") for v in values if f" {v} " in text}
    assert min(stated, key=stated.get) == values[asked], text  # the caller's context: the asked month first
    assert row["current_first@300"] == 1.0, text  # and the evaluation scored that context
