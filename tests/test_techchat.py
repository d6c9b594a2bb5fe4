"""The generated long-technical-chat evaluation: seeded, labelled, hard for plain BM25, and run
by `memflow eval techchat` like LoCoMo."""

import json
import os

import polars as pl
import pytest

from helpers import run_cli
from memflow.tasks.evaluate.locomo import parse_evidence, session_numbers
from memflow.tasks.evaluate.locomo_eval import Baseline, statements
from memflow.tasks.evaluate.techchat import CATEGORIES, techchat
from memflow.tasks.ground.tokens import count_tokens

SEEDS = [int(x) for x in os.environ.get("MEMFLOW_SEEDS", "1,2,3").split(",")]  # MEMFLOW_SEEDS=...: others


def turns_of(sample: dict) -> dict[str, dict]:
    talk = sample["conversation"]
    return {t["dia_id"]: t for n in session_numbers(talk) for t in talk[f"session_{n}"]}


@pytest.mark.parametrize("seed", SEEDS)
def test_the_same_seed_gives_the_same_set_and_another_seed_another(seed):
    assert techchat(seed, 1, 6, 3) == techchat(seed, 1, 6, 3)
    assert techchat(seed, 1, 6, 3) != techchat(seed + 1, 1, 6, 3)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_question_rests_on_labelled_statements_that_hold_its_answer(seed):
    [sample] = techchat(seed, 1)
    turns = turns_of(sample)
    categories = set()
    for q in sample["qa"]:
        ids, malformed = parse_evidence(q["evidence"])
        assert not malformed and all(i in turns for i in ids)
        for i, answer in zip(ids, q["answer"].split("; ")):
            assert answer in turns[i]["statement"] and turns[i]["statement"] in turns[i]["text"]
        if q["category"] == 2:
            assert turns[ids[0]]["speaker"] == "assistant"
        if q["category"] == 3:
            assert len({i.split(":")[0] for i in ids}) == 2  # two sessions
        assert q["category_name"] == CATEGORIES[q["category"]]
        categories.add(q["category"])
    assert categories == set(CATEGORIES)


@pytest.mark.parametrize("seed", SEEDS)
def test_an_update_question_asks_for_the_newest_of_several_stated_values(seed):
    [sample] = techchat(seed, 1)
    turns = turns_of(sample)
    updates = [q for q in sample["qa"] if q["category"] == 4]
    assert updates
    for q in updates:
        [newest], [fact] = q["evidence"], q["facts"]
        stated = sorted((i for i, t in turns.items() if t.get("fact") == fact),
                        key=lambda i: tuple(int(x) for x in i[1:].split(":")))
        assert stated[-1] == newest and len(stated) > 1
        values = [turns[i]["statement"] for i in stated]
        assert q["answer"] in values[-1] and all(q["answer"] not in v for v in values[:-1])
        assert len(q["previous"]) == len(values) - 1  # what it replaced, for `current_first`
        assert all(old in v for old, v in zip(q["previous"], values))
        assert len({i.split(":")[0] for i in stated}) == len(stated)  # each value in a later session
    assert not [q for q in sample["qa"] if q["category"] != 4 and "previous" in q]


def test_long_messages_and_overlap_make_it_hard_for_plain_bm25():
    data = techchat(7, 2)
    sizes = [count_tokens(t["text"]) for s in data for t in turns_of(s).values() if t["speaker"] == "assistant"]
    assert 300 <= sorted(sizes)[len(sizes) // 2] <= 800  # long Markdown replies
    found, total = 0, 0
    for sample in data:
        baseline = Baseline(sample)
        for q in sample["qa"]:
            top = {baseline.ids[i] for i in baseline.search(q["question"], 5)}
            found += bool(top & set(q["evidence"]))
            total += 1
    assert found / total < 0.95  # a set raw-message BM25 solves says nothing


def test_cli_eval_techchat_runs_like_locomo(tmp_path):
    out = tmp_path / "ev"
    res = run_cli("eval", "techchat", "--out", str(out), "--seed", "3", "--conversations", "1",
                  "--sessions", "2", "--projects", "1", "--k", "1,5")
    assert res.returncode == 0, res.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["budget_recall_any"]) == ["250", "500", "1000", "2000", "4000"]
    assert set(summary["baseline"]["budget_recall_any"]) == set(summary["transcript"]["budget_recall_any"])
    assert all(key.split(" ", 1)[1] in CATEGORIES.values() for key in summary["per_category"])
    rows = pl.read_parquet(out / "questions.parquet")
    data = json.loads((out / "techchat.json").read_text())
    assert rows.height == sum(len(s["qa"]) for s in data) and summary["evidence"]["dangling_ids"] == 0
    assert statements(data[0])  # the scorer looks for each labelled statement
    updates = sum(q["category"] == 4 for s in data for q in s["qa"])
    assert summary.get("updates", 0) == updates  # current_first is scored on every update question
    if updates:
        assert set(summary["current_first"]) == set(summary["baseline"]["current_first"]) == set(summary["budget_recall_any"])
