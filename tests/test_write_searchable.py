"""A write is searchable when the call returns (issue #27): through the MCP client, `write` then
`search` finds the note every time with `index_stale` false, edits, moves and deletes show at
once, and the `index` tool indexes a file another program wrote."""

from __future__ import annotations

import os
import random
import string
import time

import anyio
from mcp import Client
from mcp.client.stdio import stdio_client
from test_mcp import stdio_params, text

from memflow import api


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
            done = await client.call_tool("index", {"paths": ["daily/2026-03-01/outside.md"]})
            assert not done.is_error, text(done)  # added=1, or 0 when the server's watcher was first
            assert done.structured_content["added"] in (0, 1)
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


def test_a_running_server_indexes_an_outside_edit_and_says_stale_until_then(settings, lay):
    ws = lay.root
    api.write("daily/2026-05-01/keep.md", "# Keep\n\n- a first note\n", None, None, None, ws)

    async def found(client, query: str, path: str) -> tuple[bool, bool]:
        hits = await client.call_tool("search", {"query": query})
        paths = [r["path"] for r in hits.structured_content["results"]]
        return path in paths, hits.structured_content["index_stale"]

    async def session():
        async with Client(stdio_client(stdio_params(ws), errlog=open(os.devnull, "w"))) as client:
            await client.call_tool("status", {})  # the server (and its watcher) is up
            for n, (path, body) in enumerate([("daily/2026-05-01/new.md", "- zqxjvw a new file"),
                                              ("daily/2026-05-01/keep.md", "- kwyjibo edited in place")]):
                (ws / path).write_text(f"# Outside {n}\n\n{body}\n", encoding="utf-8")  # another program
                query = body.split()[1]
                deadline = time.monotonic() + 10  # ~0.2 s when the machine is quiet
                hit, stale = await found(client, query, path)
                while not (hit and stale is False) and time.monotonic() < deadline:
                    # (the watcher sees a write a moment after it, and the snapshot is published
                    # a moment before the watermark records it: poll until both are true)
                    await anyio.sleep(0.05)
                    hit, stale = await found(client, query, path)
                assert hit, f"{path} not found within 10 s"
                assert stale is False

    anyio.run(session)


def test_cli_search_sees_files_added_by_others_and_says_what_it_cannot_see(settings, lay):
    ws = lay.root
    api.write("daily/2026-06-01/a.md", "# A\n\n- the first words\n", None, None, None, ws)
    api.index(ws)
    assert api.search("first", ws).watermark["stale"] is False
    (ws / "daily/2026-06-01/b.md").write_text("# B\n\n- added by another program\n", encoding="utf-8")
    mark = api.search("first", ws).watermark
    assert mark["stale"] is True and mark["checked"] == "journal and folders"
    api.index(ws)
    (ws / "daily/2026-06-01/b.md").write_text("# B\n\n- edited in place by another program\n", encoding="utf-8")
    mark = api.search("first", ws).watermark  # b.md is no hit: its folder did not change
    assert mark["stale"] is False and "in place" in mark["unseen"]  # cannot know: says so
    assert api.status(ws)["index"]["stale"] is True  # status walks every file
    (ws / "daily/2026-06-01/a.md").write_text("# A\n\n- the first words, edited in place\n", encoding="utf-8")
    assert api.search("first", ws).watermark["stale"] is True  # a hit is checked itself


def test_a_resident_watcher_leaves_this_process_writes_to_them(settings, lay, monkeypatch):
    """Writes through the API in a process whose watcher runs are indexed by the write itself:
    the watcher neither indexes them again nor takes the lock while they run (it waited on
    every write's lock and then held it, delaying the next call); an outside edit it indexes."""
    import threading

    import memflow.tasks.index.incremental as incremental
    from memflow.tasks.index import Watcher

    api.write("daily/2026-05-01/seed.md", "# Seed\n\n- a first note\n", None, None, None, settings)
    runs: list[tuple[str, list[str]]] = []
    index_paths = incremental.index_paths

    def recorded(s, paths):
        runs.append((threading.current_thread().name, list(paths)))
        return index_paths(s, paths)
    monkeypatch.setattr(incremental, "index_paths", recorded)
    watcher = Watcher(settings).start()
    try:
        rng = random.Random(5)
        for n in range(12):
            api.write(f"daily/2026-05-0{1 + n % 3}/w{n}.md", f"# W {n}\n\n- {word(rng)} {word(rng)}\n",
                      None, None, None, settings)
            time.sleep(rng.uniform(0, 0.08))  # writes inside and across the watcher's ticks
        time.sleep(1.0)
        assert [r for r in runs if r[0] == "memflow-watch"] == []
        assert api.search("first note", settings).watermark["stale"] is False
        (lay.root / "daily/2026-05-01/outside.md").write_text("# O\n\n- zyzzyvaq outside\n", encoding="utf-8")
        deadline = time.monotonic() + 10
        while not any(r[0] == "memflow-watch" for r in runs) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ("memflow-watch", ["daily/2026-05-01/outside.md"]) in runs
    finally:
        watcher.stop()


def test_after_a_dream_search_and_status_agree_the_index_is_current(settings, lay):
    """The dream indexes what it wrote, then journals its event: the journal's paths were
    indexed by that full run, so search (journal and folders) must not call them changed while
    status (every file stat'ed) says nothing changed; a file written after it still counts."""
    ws = lay.root
    api.capture([{"role": "user", "timestamp": "2026-04-02T09:00:00Z", "content": "The heron colony has 40 nests."},
                 {"role": "user", "timestamp": "2026-04-02T09:01:00Z", "content": "Our boat is moored at pier 7."}],
                "chat-h", ws)
    api.dream(ws, date="2026-04-03")
    mark = api.search("heron nests", ws).watermark
    assert mark["stale"] is False and mark["changed_since"] == 0, mark
    assert api.status(ws)["index"]["stale"] is False
    api.write("daily/2026-04-04/b.md", "# B\n\n- the egrets came back\n", None, None, None, ws)
    (ws / "daily/2026-04-04/c.md").write_text("# C\n\n- written by another program\n", encoding="utf-8")
    assert api.search("egrets", ws).watermark["stale"] is True
