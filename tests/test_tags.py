"""Frontmatter tags searchable and filterable; name/description/tags rank above the body."""

import json
import os
import random

import pytest
import yaml

from memflow import api
from helpers import run_cli

SEEDS = [int(x) for x in os.environ.get("MEMFLOW_SEEDS", "1,2,3").split(",")]  # MEMFLOW_SEEDS=...: others
SYLLABLES = [a + b for a in "bdfgklmnprstvz" for b in ("a", "e", "i", "o", "u", "ai", "or", "en")]


def words(rng: random.Random, count: int) -> list[str]:
    out: set[str] = set()
    while len(out) < count:
        out.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(out)


def test_cli_write_meta_lists_and_booleans_then_search_by_tag(tmp_path):
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    done = run_cli("-w", str(ws), "write", "digest/wiki/a.md", "--content", "# A\n\nbody of a\n",
                   "--meta", "tags=plants, Home", "urgent=true", "kind_of=[x, y]")
    assert done.returncode == 0, done.stderr
    meta = yaml.safe_load((ws / "digest/wiki/a.md").read_text().split("---")[1])
    assert meta == {"tags": ["plants", "Home"], "urgent": True, "kind_of": ["x", "y"]}
    run_cli("-w", str(ws), "write", "digest/wiki/b.md", "--content", "# B\n\nbody of b\n", "--meta", "tags=work")
    assert run_cli("-w", str(ws), "index").returncode == 0
    found = run_cli("-w", str(ws), "search", "body", "--tag", "#home", "--json")
    assert [r["path"] for r in json.loads(found.stdout)["results"]] == ["digest/wiki/a.md"]
    assert json.loads(found.stdout)["results"][0]["tags"] == ["plants", "home"]
    both = run_cli("-w", str(ws), "search", "body", "--tag", "home", "--tag", "work", "--json")
    assert json.loads(both.stdout)["results"] == []
    by_word = run_cli("-w", str(ws), "search", "plants", "--json")  # a tag is a searchable word
    assert [r["path"] for r in json.loads(by_word.stdout)["results"]] == ["digest/wiki/a.md"]


@pytest.mark.parametrize("seed", SEEDS)
def test_tag_filter_returns_exactly_the_notes_carrying_every_tag(settings, seed):
    rng = random.Random(seed)
    vocab = words(rng, 400)
    tags, common = vocab[:12], vocab[12]
    notes = {}
    for n in range(40):
        own = rng.sample(tags, rng.randint(0, 4))
        body = " ".join(rng.sample(vocab[13:], 20) + [common])
        style = rng.choice(["list", "string"])
        meta = {"tags": own if style == "list" else ", ".join(t.upper() for t in own)}
        api.write(f"digest/wiki/n{n}.md", f"# N{n}\n\n{body}\n", meta=meta, workspace=settings)
        notes[f"digest/wiki/n{n}.md"] = set(own)
    api.index(settings)
    for _ in range(6):
        wanted = rng.sample(tags, rng.randint(1, 2))
        got = {r.path for r in api.search(common, settings, limit=100, tags=wanted).results}
        assert got == {p for p, own in notes.items() if set(wanted) <= own}


@pytest.mark.parametrize("seed", SEEDS)
def test_a_word_in_the_name_or_description_ranks_above_the_same_word_in_a_body(settings, seed):
    rng = random.Random(seed)
    vocab = words(rng, 300)
    for n in range(8):
        target = vocab[n]
        filler = rng.sample(vocab[20:], 30)
        field = rng.choice(["name", "description"])
        api.write(f"digest/wiki/field{n}.md", f"# t\n\n{' '.join(filler)}\n",
                  **{field: f"{target} {vocab[10 + n]}"}, workspace=settings)
        api.write(f"digest/wiki/body{n}.md",
                  f"# t\n\n{' '.join(filler[:15] + [target] + filler[15:])}\n", workspace=settings)
    api.index(settings)
    for n in range(8):
        ranked = [r.path for r in api.search(vocab[n], settings, limit=2).results]
        assert ranked[0] == f"digest/wiki/field{n}.md", ranked


def test_mcp_write_with_tags_then_search_by_tag(settings, lay):
    import os

    import anyio
    from mcp import Client
    from mcp.client.stdio import stdio_client
    from test_mcp import stdio_params

    api.write("digest/wiki/other.md", "# Other\n\nthe kiln fires at noon\n", workspace=settings)

    async def session():
        async with Client(stdio_client(stdio_params(lay.root), errlog=open(os.devnull, "w"))) as client:
            made = await client.call_tool("write", {"path": "digest/wiki/kiln.md", "tags": ["pottery", "Home"],
                                                    "content": "# Kiln\n\nthe kiln fires at dusk\n"})
            assert not made.is_error
            api.index(settings)
            hits = await client.call_tool("search", {"query": "kiln fires", "tags": ["home"]})
            assert [r["path"] for r in hits.structured_content["results"]] == ["digest/wiki/kiln.md"]
            assert hits.structured_content["results"][0]["tags"] == ["pottery", "home"]
            everything = await client.call_tool("search", {"query": "kiln fires"})
            assert len(everything.structured_content["results"]) == 2

    anyio.run(session)


def test_an_index_from_before_tags_is_rebuilt_by_the_next_index_run(settings, lay):
    import lancedb

    from memflow.tasks.index import keyword_dir
    from memflow.tasks.stores import keyword

    api.write("digest/wiki/t.md", "# T\n\nthe loom hums\n", meta={"tags": ["craft"]}, workspace=settings)
    api.index(settings)
    db = lancedb.connect(str(lay.index_dir / "lance"))
    db.open_table("chunks").drop_columns(["tags"])  # the table as the version before wrote it,
    gen = keyword.current_dir(keyword_dir(lay, settings))  # and its snapshot, from tables of that shape
    meta = json.loads((gen / "meta.json").read_text(encoding="utf-8"))
    (gen / "meta.json").write_text(json.dumps({**meta, "tables": "before-tags"}), encoding="utf-8")
    summary = api.index(settings)
    assert summary.added == 1  # every file is indexed again, nothing lost
    assert [r.path for r in api.search("loom", settings, tags=["craft"]).results] == ["digest/wiki/t.md"]
