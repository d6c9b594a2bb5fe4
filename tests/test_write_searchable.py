"""A write is searchable when the call returns (issue #27): through the MCP client, `write` then
`search` finds the note every time with `index_stale` false, edits, moves and deletes show at
once, and the `index` tool indexes a file another program wrote."""

from __future__ import annotations

import os
import random
import string

import anyio
from mcp import Client
from mcp.client.stdio import stdio_client

from memflow import api
from test_mcp import stdio_params, text


def word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 10)))


def test_mcp_write_then_search_finds_the_note_100_of_100(settings, lay):
    ws = lay.root
    rng = random.Random(27)
    for n in range(20):
        api.write(f"daily/2026-03-0{1 + n % 9}/seed-{n}.md",
                  f"# {word(rng)}\n\n- {' '.join(word(rng) for _ in range(12))}\n", None, None, None, ws)

    async def session():
        async with Client(stdio_client(stdio_params(ws), errlog=open(os.devnull, "w"))) as client:
            found = 0
            for n in range(100):
                words = [word(rng) for _ in range(3)]
                path = f"digest/wiki/{words[0]}-{n}.md"
                made = await client.call_tool("write", {"path": path, "content": f"# {words[1]}\n\n{' '.join(words)} here.\n"})
                assert not made.is_error, text(made)
                hits = await client.call_tool("search", {"query": " ".join(words), "limit": 3})
                assert not hits.is_error, text(hits)
                assert hits.structured_content["index_stale"] is False
                found += hits.structured_content["results"][0]["path"] == path
            assert found == 100
            gone = await client.call_tool("delete", {"path": path})
            assert not gone.is_error, text(gone)
            hits = await client.call_tool("search", {"query": " ".join(words)})
            assert path not in [r["path"] for r in hits.structured_content["results"]]
            (ws / "daily/2026-03-01/outside.md").write_text("# Outside\n\n- qqzzxxyy from a plain write\n",
                                                            encoding="utf-8")
            hits = await client.call_tool("search", {"query": "qqzzxxyy"})
            assert hits.structured_content["index_stale"] is True  # another program's file, seen by the stat walk
            done = await client.call_tool("index", {"paths": ["daily/2026-03-01/outside.md"]})
            assert not done.is_error and done.structured_content["added"] == 1, text(done)
            hits = await client.call_tool("search", {"query": "qqzzxxyy"})
            assert hits.structured_content["results"][0]["path"] == "daily/2026-03-01/outside.md"
            assert hits.structured_content["index_stale"] is False

    anyio.run(session)


def test_api_edit_move_and_capture_are_searchable_on_return(settings, lay):
    ws = lay.root
    api.write("daily/2026-04-01/a.md", "# A\n\n- the plover nests early\n", None, None, None, ws)
    assert api.search("plover", ws).results[0].path == "daily/2026-04-01/a.md"
    api.edit("daily/2026-04-01/a.md", "plover", "avocet", ws)
    assert api.search("avocet", ws).results[0].path == "daily/2026-04-01/a.md"
    assert not api.search("plover", ws).results
    api.move("daily/2026-04-01/a.md", "digest/wiki/birds.md", ws)
    response = api.search("avocet", ws)
    assert [r.path for r in response.results] == ["digest/wiki/birds.md"]
    assert not response.watermark["stale"]
    api.capture([{"role": "user", "timestamp": "2026-04-02T09:00:00Z",
                  "content": "I started keeping quail in the yard."}], "chat-q", ws)
    paths = {r.path for r in api.search("quail yard", ws, limit=10).results}
    assert any(p.startswith("session/") for p in paths) and any(p.startswith("daily/") for p in paths)
    assert not api.search("quail", ws).watermark["stale"]
