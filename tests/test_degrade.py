"""Search degrades, index stops cleanly: the embedding branch failing (endpoint down, timeout,
5xx, a malformed reply) answers from BM25 with a warning in the response (API, CLI stderr, MCP
structured output); a dimension change under the same model name is found before an index
run writes anything, with one line naming the model, both dimensions and `memflow reindex`."""

from __future__ import annotations

import os
import sys

import anyio
import pytest
from fakemodel import hashed_embedding
from helpers import run_cli
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from test_recall import build_corpus

from memflow.tasks.index import vectors
from memflow.tasks.index import run_index, run_reindex
from memflow.tasks.index.vectors import EmbeddingDimensionError
from memflow.tasks.recall.hybrid import search
from memflow.tasks.stores import keyword
from memflow.tasks.stores.lance import IndexStore

QUERY = "ECONNREFUSED port"


def keyword_only(settings, query=QUERY):
    return search(settings.model_copy(update={"embedding_model": ""}), query, limit=5)


@pytest.fixture
def indexed(model_settings, lay):
    build_corpus(lay)
    run_index(model_settings)
    vectors._QUERY_CACHE.clear()  # every search below asks the model for its query vector
    return model_settings


FAULTS = {
    "endpoint down": ({"model_api_base": "http://127.0.0.1:9/v1"}, []),
    "status 503": ({}, [{"status": 503}] * 6),
    "timeout": ({"model_timeout": 0.5}, [{"hang": 3}] * 6),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_failing_embedding_model_degrades_search_to_bm25_with_a_warning(indexed, fake_model, fault):
    update, script = FAULTS[fault]
    fake_model.script.extend(script)
    response = search(indexed.model_copy(update=update), QUERY, limit=5)
    fake_model.script.clear()
    assert response.vector_hits == 0 and response.keyword_hits > 0
    assert [r.path for r in response.results] == [r.path for r in keyword_only(indexed).results]
    assert len(response.warnings) == 1
    assert response.warnings[0].startswith("keyword (BM25) results only: the embedding model failed")
    assert "openai/test-embed" in response.warnings[0]
    healthy = search(indexed, QUERY, limit=5)  # the endpoint back: both branches, no warning
    assert healthy.vector_hits > 0 and healthy.warnings == []


def test_a_malformed_embeddings_reply_degrades_too(indexed, fake_model):
    fake_model.embed_fn = lambda text: "not a vector"
    response = search(indexed, QUERY, limit=5)
    assert response.vector_hits == 0 and response.results
    assert "malformed" in response.warnings[0]


def layout_root(settings):
    from memflow.tasks.ground.workspace import layout

    return layout(settings).root


def _toml(settings, **extra) -> None:
    values = {"embedding_model": settings.embedding_model, "model_api_base": settings.model_api_base,
              "model_api_key": "x", "model_timeout": settings.model_timeout, **extra}
    (layout_root(settings) / "memflow.toml").write_text(
        "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in values.items()))


@pytest.mark.slow  # >10 s here (pytest --durations)
def test_cli_and_mcp_search_say_they_answer_from_bm25(indexed, lay):
    _toml(indexed, model_api_base="http://127.0.0.1:9/v1")
    res = run_cli("-w", str(lay.root), "search", QUERY)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert "daily/2026-02-03/server.md" in res.stdout
    warned = [line for line in res.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warned) == 1 and "keyword (BM25) results only" in warned[0], res.stderr
    params = StdioServerParameters(command=sys.executable, args=["-m", "memflow.cli", "-w", str(lay.root), "serve"],
                                   env={"PREFECT_API_URL": "", "PATH": os.environ.get("PATH", "")})

    async def session():
        async with Client(stdio_client(params, errlog=open(os.devnull, "w"))) as client:  # noqa: SIM115
            hits = await client.call_tool("search", {"query": QUERY, "limit": 3})
            assert not hits.is_error
            assert hits.structured_content["results"][0]["path"] == "daily/2026-02-03/server.md"
            assert "keyword (BM25) results only" in hits.structured_content["warnings"][0]
            assert "(warning: keyword (BM25) results only" in hits.content[0].text

    anyio.run(session)


def _generation(lay, settings) -> str:
    folder = next((lay.index_dir / "keyword").iterdir())
    return keyword.current_dir(folder).name


@pytest.mark.slow  # >10 s here (pytest --durations)
def test_a_dimension_change_is_found_before_index_writes_anything(indexed, lay, fake_model):
    """The endpoint now returns 128-dim vectors where the index holds 64-dim ones of the same
    model name: `index` stops before any write with one line saying what to do; search answers
    from BM25 with a warning; `memflow reindex` embeds everything again at the new dimension."""
    store = IndexStore(lay.index_dir / "lance")
    chunks, generation = store.count_chunks(), _generation(lay, indexed)
    fake_model.embed_fn = lambda text: hashed_embedding(text, 128)
    (lay.root / "daily/2026-02-04").mkdir(parents=True, exist_ok=True)
    (lay.root / "daily/2026-02-04/new.md").write_text("# New\n\nThe deploy key rotates monthly.\n")
    with pytest.raises(EmbeddingDimensionError) as caught:
        run_index(indexed)
    message = str(caught.value)
    assert "\n" not in message and "openai/test-embed" in message
    assert "128-dim" in message and "64-dim" in message and "memflow reindex" in message
    assert IndexStore(lay.index_dir / "lance").count_chunks() == chunks  # nothing written
    assert not (lay.index_dir / "DIRTY").exists() and _generation(lay, indexed) == generation
    _toml(indexed)
    res = run_cli("-w", str(lay.root), "index")
    assert res.returncode == 1 and "Traceback" not in res.stderr
    errors = [line for line in res.stderr.splitlines() if line.strip()]
    assert errors[-1].startswith("error: embedding model openai/test-embed now returns 128-dim"), res.stderr

    response = search(indexed, QUERY, limit=5)
    assert response.vector_hits == 0 and response.results
    assert "128-dim" in response.warnings[0] and "memflow reindex" in response.warnings[0]

    summary = run_reindex(indexed)
    assert summary.vectors == summary.total_chunks
    healed = search(indexed, QUERY, limit=5)
    assert healed.vector_hits > 0 and healed.warnings == []


def test_status_deep_says_an_embedding_model_of_another_dimension_is_not_ok(model_settings, lay, fake_model):
    """Issue 57: the index was built with 64-dim vectors and the settings now ask for 128: the
    model answers, but search cannot use what it returns. `status --deep` said "ok"; now it
    says failed, both dimensions and `memflow reindex`, and warns; after the reindex it is ok."""
    from memflow.tasks.check import workspace_status

    built = model_settings.model_copy(update={"embedding_model": "openai/text-embedding-3-small",
                                              "embedding_dimensions": 64})
    build_corpus(lay)
    run_index(built)
    assert workspace_status(built, deep=True)["models"]["embedding"]["health"].startswith("ok")
    fake_model.embed_fn = lambda text: hashed_embedding(text, 128)
    now = built.model_copy(update={"embedding_dimensions": 128})
    report = workspace_status(now, deep=True)
    health = report["models"]["embedding"]["health"]
    assert health.startswith("failed") and "128-dim" in health and "64-dim" in health, health
    assert "memflow reindex" in health
    assert any("embedding model" in w and "memflow reindex" in w for w in report["warnings"])
    run_reindex(now)
    assert workspace_status(now, deep=True)["models"]["embedding"]["health"].startswith("ok")
