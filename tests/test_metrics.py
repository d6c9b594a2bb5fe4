import pytest

from memflow.tasks.evaluate.locomo import parse_evidence
from memflow.tasks.evaluate.metrics import (
    budget_cut,
    covered_turns,
    first_hit,
    link_turns,
    ndcg_at,
    recall_at,
)

LOG = {"session/dialog/c-s1.jsonl": ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5"]}
TURNS = {"D1:1": "I adopted a cat named Miso.", "D1:2": "Nice!", "D1:3": "We went to Kyoto in May.",
         "D1:4": "Miso likes tuna.", "D1:5": "See you."}


def test_link_citing_at_most_three_turns_covers_them():
    assert link_turns("L1-L3", LOG["session/dialog/c-s1.jsonl"]) == ["D1:1", "D1:2", "D1:3"]
    assert link_turns("L1,L4", LOG["session/dialog/c-s1.jsonl"]) == ["D1:1", "D1:4"]


def test_link_citing_too_many_turns_covers_none():
    assert link_turns("L1-L4", LOG["session/dialog/c-s1.jsonl"]) == []
    text = "- summary [[session/dialog/c-s1.jsonl#L1-L5]]"
    assert covered_turns(text, {}, LOG) == set()


def test_containment_with_normalised_whitespace():
    text = "notes:\n  We went   to Kyoto\nin May. and more"
    assert covered_turns(text, TURNS, LOG) == {"D1:3"}


def test_links_and_followed_note_lines_cover_turns():
    note = {("daily/2026-05-01/n.md", "L7"): "- Miso likes tuna. [[session/dialog/c-s1.jsonl#L4]]"}
    text = "digest claim\n- Derived from [[daily/2026-05-01/n.md#L7]]: Miso"
    got = covered_turns(text, {}, LOG, lambda p, a: note.get((p, a), ""))
    assert got == {"D1:4"}
    assert covered_turns("[[session/dialog/c-s1.jsonl#L2]]", {}, LOG) == {"D1:2"}
    assert covered_turns("[[session/dialog/other.jsonl#L2]]", {}, LOG) == set()


def test_recall_mrr_ndcg_hand_computed():
    ranked = [{"D1:2"}, set(), {"D1:3", "D1:4"}, {"D1:1"}]
    evidence = {"D1:3", "D1:1"}
    assert recall_at(ranked, evidence, 1) == (0.0, 0.0)
    assert recall_at(ranked, evidence, 3) == (1.0, 0.0)
    assert recall_at(ranked, evidence, 4) == (1.0, 1.0)
    assert first_hit(ranked, evidence) == 3
    # DCG = 1/log2(4) + 1/log2(5) = 0.5 + 0.430677; IDCG = 1 + 1/log2(3) = 1.630930
    assert ndcg_at(ranked, evidence, 10) == pytest.approx((0.5 + 0.4306765581) / 1.6309297536)
    assert ndcg_at([set()], evidence) == 0.0
    # a second result covering the same turn adds nothing: nDCG never exceeds 1
    assert ndcg_at([{"D1:3"}, {"D1:3"}, {"D1:1"}], evidence) == pytest.approx((1 + 0.5) / 1.6309297536)
    assert ndcg_at([{"D1:3"}, {"D1:3"}], {"D1:3"}) == 1.0


def test_budget_cut_keeps_rank_order_and_cuts_the_last():
    words = lambda t: len(t.split())  # noqa: E731
    cut = lambda t, n: " ".join(t.split()[:n])  # noqa: E731
    kept, used = budget_cut(["a b c", "d e f g", "h i"], 5, words, cut)
    assert kept == ["a b c", "d e"] and used == 5
    kept, used = budget_cut(["a b"], 10, words, cut)
    assert kept == ["a b"] and used == 2


def test_malformed_and_dangling_evidence_are_parsed_defensively():
    ids, malformed = parse_evidence(["D1:3", "D8:6; D9:17", "D:x", "", "D2:1"])
    assert ids == ["D1:3", "D8:6", "D9:17", "D2:1"]
    assert malformed == 3


def test_current_first_wants_the_current_value_before_every_earlier_one():
    from memflow.tasks.evaluate.metrics import current_first

    assert current_first("port 8080 now; it was 80 before", "8080", ["80"]) == 1.0
    assert current_first("it was 80 before; port 8080 now", "8080", ["80"]) == 0.0
    assert current_first("only 80 here", "8080", ["80"]) == 0.0          # the current value is missing
    assert current_first("port 8080", "8080", ["80", "443"]) == 1.0      # no earlier value shown
    assert current_first("v1.80 then 80", "80", ["1.8"]) == 1.0          # a value is a whole token
    assert current_first("Ana took over from Jo; Jo owned it", "Ana", ["Jo"]) == 1.0
    assert current_first("Jo owned it; Ana took over", "Ana", ["Jo"]) == 0.0
