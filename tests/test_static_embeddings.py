"""The static embedding model (`local/static-all-MiniLM-L6-v2`): distilled once per user into
the per-user cache, atomically, then read from it; unit vectors; deterministic; a hybrid search
with it finds a paraphrase BM25 misses. The fast tests give the distillation a tiny stand-in
model (a ten-word vocabulary, 8 dimensions, saved in model2vec's folder layout); the slow ones
distill the real one (~30-80 s here)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("model2vec")

from memflow.tasks.ground import local_embeddings, static_embeddings  # noqa: E402
from memflow.tasks.ground.static_embeddings import RECORD, distill_into, is_distilled, model_dir  # noqa: E402

NAME = "static-all-MiniLM-L6-v2"
WORDS = ["car", "automobile", "bought", "purchase", "dog", "puppy", "coffee", "tea", "red", "spring"]


def tiny_model(out: Path, pca_dims: int = 8) -> dict:
    """A stand-in for `_distill`: model2vec's files (config.json, model.safetensors,
    tokenizer.json) of a ten-word vocabulary with seeded vectors."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    vocab = {word: i for i, word in enumerate(["[PAD]", "[UNK]", *WORDS])}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.save(str(out / "tokenizer.json"))
    vectors = np.random.default_rng(7).normal(size=(len(vocab), pca_dims)).astype(np.float16)
    save_file({"embeddings": vectors}, str(out / "model.safetensors"))
    (out / "config.json").write_text(json.dumps({"model_type": "model2vec", "normalize": True,
                                                 "hidden_dim": pca_dims, "max_length": 512}))
    return {"source": "tiny test model", "pca_dims": pca_dims}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty per-user cache; no model of this name loaded in the process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delitem(local_embeddings._LOADED, NAME, raising=False)
    yield tmp_path / "cache" / "memflow" / "models"
    local_embeddings._LOADED.pop(NAME, None)


def test_the_first_use_distills_into_the_cache_and_says_so(cache, monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(static_embeddings, "_distill", lambda source, out, dims: calls.append(out) or tiny_model(out))
    vectors = np.array(local_embeddings.embed_local(NAME, ["the red car", "a puppy drinks tea"]))
    assert len(calls) == 1 and model_dir(NAME).parent == cache
    assert "distilling the static embedding model" in capsys.readouterr().err
    assert (model_dir(NAME) / RECORD).is_file() and is_distilled(NAME)
    assert [p.name for p in cache.iterdir()] == [model_dir(NAME).name]  # no temporary folder left
    assert vectors.shape == (2, 8)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_a_distilled_model_is_read_from_the_cache_without_distilling_again(cache, monkeypatch, capsys):
    monkeypatch.setattr(static_embeddings, "_distill", lambda source, out, dims: tiny_model(out))
    first = local_embeddings.embed_local(NAME, ["bought a red automobile"])
    capsys.readouterr()
    local_embeddings._LOADED.pop(NAME)  # as a new process

    def refuse(*args):
        raise AssertionError("distilled again")

    monkeypatch.setattr(static_embeddings, "_distill", refuse)
    assert local_embeddings.loads_quickly(NAME)
    again = local_embeddings.embed_local(NAME, ["bought a red automobile"])
    assert np.array_equal(again, first)  # the same vectors, from the cache
    assert "distilling" not in capsys.readouterr().err


def test_a_failed_distillation_leaves_nothing_in_the_cache(cache, monkeypatch):
    def half(source, out, dims):
        (out / "model.safetensors").write_bytes(b"partial")
        raise RuntimeError("killed halfway")

    monkeypatch.setattr(static_embeddings, "_distill", half)
    with pytest.raises(RuntimeError, match="killed halfway"):
        local_embeddings.embed_local(NAME, ["car"])
    assert not is_distilled(NAME) and list(cache.iterdir()) == []


def test_a_folder_another_process_finished_first_is_kept(cache, monkeypatch):
    """Two processes distilling at once: the second rename fails, the first one's folder stays
    and the second one's temporary folder goes."""
    def race(source, out, dims):
        tiny_model(out)
        winner = model_dir(NAME)
        winner.mkdir(parents=True)
        (winner / RECORD).write_text('{"by": "the other process"}')
        (winner / "marker").write_text("x")
        return {"source": "this process"}

    monkeypatch.setattr(static_embeddings, "_distill", race)
    distill_into(model_dir(NAME))
    assert (model_dir(NAME) / "marker").is_file()
    assert json.loads((model_dir(NAME) / RECORD).read_text()) == {"by": "the other process"}
    assert [p.name for p in cache.iterdir()] == [model_dir(NAME).name]


def test_the_cache_folder_names_the_recipe_and_follows_xdg(cache):
    folder = model_dir(NAME)
    assert folder.parent == cache
    assert folder.name == f"static-all-minilm-l6-v2-{static_embeddings.STATIC_MODELS['static-all-minilm-l6-v2']}"
    assert static_embeddings.is_static("Static-All-MiniLM-L6-v2")
    assert not static_embeddings.is_static("all-MiniLM-L6-v2")


# --- the real distillation (slow: ~30-80 s of CPU each on these cores) ---

@pytest.fixture(scope="module")
def real_cache(tmp_path_factory):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("skeletoken")
    folder = tmp_path_factory.mktemp("static-cache")
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    local_embeddings._LOADED.pop(NAME, None)
    try:
        local_embeddings.embed_local(NAME, ["warm up"])  # distills into the folder
        yield folder
    finally:
        local_embeddings._LOADED.pop(NAME, None)
        if before is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = before


@pytest.mark.slow
def test_the_real_distillation_is_deterministic_and_its_vectors_unit_length(real_cache, tmp_path):
    record = json.loads((model_dir(NAME) / RECORD).read_text())
    again = distill_into(tmp_path / "again")  # a second distillation, from scratch
    digest = hashlib.sha256((again / "model.safetensors").read_bytes()).hexdigest()
    assert digest == record["model_safetensors_sha256"]
    texts = ["They bought a red car last spring.", "我每天早上骑自行车去公司上班", "word " * 600]
    vectors = np.array(local_embeddings.embed_local(NAME, texts))
    assert vectors.shape == (3, 256)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors, np.array(local_embeddings.embed_local(NAME, texts)))
    # a text of word pieces the vocabulary lacks (most CJK characters; a 3,000-letter "word")
    # has no vector to average: zero, which matches nothing (BM25 still finds it)
    unknown = np.array(local_embeddings.embed_local(NAME, ["缓存 服务器", "x" * 3000]))
    assert not unknown.any()


PARAPHRASES = [("What automobile did they purchase?", "They bought a red car last spring."),
               ("Where is the puppy sleeping?", "The dog naps in a basket by the fireplace."),
               ("Which airline carried them overseas?", "They flew abroad on a Lufthansa plane.")]


@pytest.mark.slow
def test_hybrid_search_with_the_static_model_finds_a_paraphrase_bm25_misses(real_cache, settings, lay):
    from test_recall import DISTRACTORS

    from memflow.tasks.ground.fileops import write_file

    from memflow.tasks.index import run_index
    from memflow.tasks.recall.hybrid import search

    for i, sentence in enumerate(DISTRACTORS):
        write_file(lay, f"daily/2026-02-{i % 9 + 1:02d}/d{i}.md", f"# Log {i}\n\n{sentence}\n",
                   name=f"Log {i}", description="notes")
    for i, (_, target) in enumerate(PARAPHRASES):
        write_file(lay, f"daily/2026-03-0{i + 1}/target{i}.md", f"# Entry\n\n{target}\n",
                   name="Entry", description="notes")
    static = settings.model_copy(update={"embedding_model": f"local/{NAME}"})
    run_index(static)
    for i, (query, _) in enumerate(PARAPHRASES):
        note = f"daily/2026-03-0{i + 1}/target{i}.md"
        keyword_only = [r.path for r in search(settings, query, limit=3).results]
        hybrid = [r.path for r in search(static, query, limit=3).results]
        assert note not in keyword_only
        assert hybrid[0] == note, (query, hybrid)


def test_a_distilled_static_model_is_not_announced_as_a_slow_load(cache, monkeypatch, settings, caplog):
    """A fresh process's first query with a distilled static model loads it in a fraction of a
    second: no "loading the embedding model" warning; before the distillation there is one."""
    import logging

    from memflow.tasks.index.vectors import say_model_cost

    static = settings.model_copy(update={"embedding_model": f"local/{NAME}"})
    with caplog.at_level(logging.WARNING, logger="memflow.vectors"):
        say_model_cost(static)
    assert "loading the embedding model" in caplog.text
    caplog.clear()
    monkeypatch.setattr(static_embeddings, "_distill", lambda source, out, dims: tiny_model(out))
    distill_into(model_dir(NAME))
    with caplog.at_level(logging.WARNING, logger="memflow.vectors"):
        say_model_cost(static)
    assert caplog.text == ""
