"""Chinese/English regression: a tokenizer change that hurts Chinese recall fails CI."""

import pytest

from memflow.tasks.evaluate.regression_data import generate, write_notes
from memflow.tasks.index import run_index
from memflow.tasks.recall.hybrid import search


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import init_workspace, layout

    settings = load_settings(tmp_path_factory.mktemp("zh-en") / "ws")
    lay = layout(settings)
    init_workspace(lay)
    notes, cases = generate()
    write_notes(lay.root, notes)
    run_index(settings)
    return settings, notes, cases


def hit_at_5(settings, cases, lang):
    chosen = [c for c in cases if c.lang == lang]
    hits = sum(c.path in [r.path for r in search(settings, c.query, limit=5, link_limit=0).results]
               for c in chosen)
    return hits / len(chosen)


def test_generated_set_has_the_promised_shape(suite):
    _, notes, cases = suite
    assert sum("-d-" in p for p in notes) >= 400
    for lang in ("en", "zh"):
        mine = [c for c in cases if c.lang == lang]
        assert sum(not c.shares_words for c in mine) / len(mine) <= 0.10
    assert all(" " not in c.query for c in cases if c.lang == "zh")


def test_chinese_recall_matches_english(suite):
    settings, _, cases = suite
    zh, en = hit_at_5(settings, cases, "zh"), hit_at_5(settings, cases, "en")
    assert zh >= 0.9, f"Chinese hit@5 {zh:.2f}"
    assert abs(zh - en) <= 0.05, f"Chinese {zh:.2f} vs English {en:.2f}"
