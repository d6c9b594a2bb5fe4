import pytest

from memflow.tasks.recall.fusion import active_weights, rrf


def test_weighted_rrf_matches_hand_computed_table():
    # vector: a(1) b(2) c(3); keyword: c(1) a(2) d(3); w_v=0.7, w_k=0.3, k=60
    fused = rrf({"vector": [("a", .9), ("b", .8), ("c", .7)],
                 "keyword": [("c", 5.0), ("a", 4.0), ("d", 1.0)]},
                {"vector": 0.7, "keyword": 0.3}, k=60)
    expected = {
        "a": 0.7 / 61 + 0.3 / 62,  # 0.016314...
        "c": 0.7 / 63 + 0.3 / 61,  # 0.016029...
        "b": 0.7 / 62,             # 0.011290...
        "d": 0.3 / 63,             # 0.004761...
    }
    assert [f.id for f in fused] == ["a", "c", "b", "d"]
    for f in fused:
        assert f.score == pytest.approx(expected[f.id], abs=1e-12)
    a = fused[0]
    assert a.ranks == {"vector": 1, "keyword": 2} and a.raw == {"vector": .9, "keyword": 4.0}
    assert a.parts["vector"] == pytest.approx(0.7 / 61)
    assert round(fused[0].score, 4) == 0.0163


def test_duplicates_count_once_at_their_best_rank():
    fused = rrf({"keyword": [("x", 3.0), ("x", 2.0), ("y", 1.0)]}, {"keyword": 1.0}, k=60)
    assert [(f.id, f.ranks["keyword"]) for f in fused] == [("x", 1), ("y", 2)]
    assert fused[1].score == pytest.approx(1 / 62)


def test_ties_break_by_id_and_k_changes_scores():
    fused = rrf({"vector": [("b", 1.0)], "keyword": [("a", 1.0)]},
                {"vector": 0.5, "keyword": 0.5}, k=1)
    assert [f.id for f in fused] == ["a", "b"] and fused[0].score == pytest.approx(0.25)


def test_keyword_only_carries_full_weight():
    assert active_weights(0.7, 0.3, vectors_on=False) == {"keyword": 1.0}
    assert active_weights(0.7, 0.3, vectors_on=True) == {"vector": 0.7, "keyword": 0.3}
