"""`memflow serve` driven by the MCP SDK's own client, over stdio and streamable HTTP."""

import json
import os
import socket
import subprocess
import sys
import time

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from memflow import api
from memflow.tasks.ground.lock import workspace_lock

TALK = [{"role": "user", "timestamp": "2026-05-01T09:00:00Z",
         "content": "I moved from Berlin to Lisbon and I keep bees on the roof."}]


def stdio_params(ws):
    return StdioServerParameters(
        command=sys.executable, args=["-m", "memflow.cli", "-w", str(ws), "serve"],
        env={"MEMFLOW_LOCK_WAIT": "0.5", "PREFECT_API_URL": "", "PATH": os.environ.get("PATH", "")})


def text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


def run(coro):
    return anyio.run(coro)


def test_stdio_tools_search_read_write_context_capture_status(settings, lay):
    ws = lay.root
    api.write("digest/wiki/apiary.md", "# Apiary\n\nThe hives stand on the garage roof.\n"
              "See [[digest/wiki/honey.md]].\n", "Apiary", "Where the bees live", None, ws)
    api.write("digest/wiki/honey.md", "# Honey\n\nHarvest in August.\n", "Honey", "When", None, ws)
    api.index(ws)

    async def session():
        async with Client(stdio_client(stdio_params(ws), errlog=open(os.devnull, "w"))) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names >= {"search", "read", "write", "edit", "move", "delete", "frontmatter_get",
                             "frontmatter_set", "recent", "context", "capture", "dream_runs", "status"}
            hits = await client.call_tool("search", {"query": "garage roof hives", "limit": 3})
            assert not hits.is_error, text(hits)
            assert hits.structured_content["results"][0]["path"] == "digest/wiki/apiary.md"
            assert "digest/wiki/apiary.md" in text(hits)
            part = await client.call_tool("read", {"path": "digest/wiki/apiary.md", "start_line": 6, "end_line": 7})
            assert part.structured_content["text"] == ("# Apiary\n\n")
            made = await client.call_tool("write", {"path": "digest/wiki/wax.md", "content": "# Wax\n\nCandles from beeswax.\n"})
            assert not made.is_error and made.structured_content["path"] == "digest/wiki/wax.md"
            api.index(ws)  # (an index run, as the nightly deployment or `memflow index` would)
            found = await client.call_tool("search", {"query": "beeswax candles"})
            assert found.structured_content["results"][0]["path"] == "digest/wiki/wax.md"  # reloaded snapshot
            ctx = await client.call_tool("context", {"path": "digest/wiki/apiary.md", "depth": 1})
            assert [r["path"] for r in ctx.structured_content["related"]] == ["digest/wiki/honey.md"]
            got = await client.call_tool("capture", {"session_id": "chat-1", "messages": TALK})
            assert not got.is_error and got.structured_content["new_messages"] == 1
            bad = await client.call_tool("capture", {"session_id": "chat-1", "messages": [{"content": "x"}]})
            assert bad.is_error and "role" in text(bad)
            status = await client.call_tool("status", {})
            assert status.structured_content["status"]["dream"]["backlog"] == 1
            api.forget(ws, match="bees on the roof")  # a later message that says it is stopped, and says so
            again = await client.call_tool("capture", {"session_id": "chat-2", "messages": [
                {**TALK[0], "content": "Bees on the roof again!"}]})
            assert (again.structured_content["new_messages"], again.structured_content["stopped"]) == (0, 1)
            assert "forget" in again.structured_content["stopped_reason"]
            refused = await client.call_tool("write", {"path": "metadata/state/lock.json", "content": "{}"})
            assert refused.is_error and "refused: metadata/state/lock.json is under metadata/" in text(refused)
            with workspace_lock(lay.state_dir, "dream"):
                busy = await client.call_tool("write", {"path": "digest/wiki/x.md", "content": "x"})
            assert busy.is_error and "busy: dream holds the workspace since" in text(busy)
            note = await client.read_resource("memory://digest/wiki/honey.md")
            assert "Harvest in August" in note.contents[0].text
            prompt = await client.get_prompt("recall_before_answering", {"question": "Where are the hives?"})
            assert "search" in prompt.messages[0].content.text

    run(session)
    assert not (lay.state_dir / "lock.json").exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http(ws, host, port, token=None):
    args = [sys.executable, "-m", "memflow.cli", "-w", str(ws), "serve", "--transport", "http",
            "--host", host, "--port", str(port)] + (["--token", token] if token else [])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "MEMFLOW_MCP_TOKEN": ""})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc
        except OSError:
            if proc.poll() is not None:
                raise AssertionError(proc.stderr.read().decode())
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("server did not start")


async def http_search(url, token=None):
    import httpx2

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            return await client.call_tool("search", {"query": "garage roof"})


def test_http_requires_the_token_beyond_loopback(settings, lay):
    ws = lay.root
    api.write("digest/wiki/apiary.md", "# Apiary\n\nThe hives stand on the garage roof.\n", None, None, None, ws)
    api.index(ws)
    refused = subprocess.run([sys.executable, "-m", "memflow.cli", "-w", str(ws), "serve", "--transport",
                              "http", "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "MEMFLOW_MCP_TOKEN": ""})
    assert refused.returncode == 1 and "without a bearer token" in refused.stderr
    port = free_port()
    proc = start_http(ws, "0.0.0.0", port, token="s3cret")
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        result = run(lambda: http_search(url, "s3cret"))
        assert result.structured_content["results"][0]["path"] == "digest/wiki/apiary.md"
        with pytest.raises(BaseException):  # noqa: B017 - the SDK wraps the 401 in exception groups
            run(lambda: http_search(url))
        with pytest.raises(BaseException):  # noqa: B017
            run(lambda: http_search(url, "wrong"))
        import httpx2

        raw = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert raw.status_code == 401
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_http_on_loopback_without_a_token(settings, lay):
    ws = lay.root
    api.write("digest/wiki/apiary.md", "# Apiary\n\nThe hives stand on the garage roof.\n", None, None, None, ws)
    api.index(ws)
    port = free_port()
    proc = start_http(ws, "127.0.0.1", port)
    try:
        result = run(lambda: http_search(f"http://127.0.0.1:{port}/mcp"))
        assert json.dumps(result.structured_content).count("apiary") >= 1
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_stdio_search_packs_to_a_budget_and_answers_as_of_a_day(settings, lay):
    """The MCP `search` tool with `budget_tokens` (the packed context is the answer, the hits
    packed are the structured results) and with `as_of` (what was known that day)."""
    from datetime import date

    from memflow.tasks.capture.conversation import auto_memory
    from memflow.tasks.dream import run_dream
    from memflow.tasks.ground.tokens import count_tokens

    ws = lay.root
    for day, sid, said in (("2026-06-01", "h1", "I live in Berlin, near the Tiergarten."),
                           ("2026-06-09", "h2", "I moved from Berlin to Lisbon last week.")):
        auto_memory(settings, [{"id": f"{sid}-0", "role": "user", "timestamp": f"{day}T09:00:00Z",
                                "content": said}], sid)
        run_dream(settings, date.fromisoformat(day))
    for n in range(12):
        api.write(f"daily/2026-05-{n + 1:02d}/walk{n}.md", f"# Walk {n}\n\nA long walk in Berlin, part {n}, "
                  + "with many words about streets and parks " * 6 + "\n", f"Walk {n}", "walks", None, ws)
    api.index(ws)

    async def session():
        async with Client(stdio_client(stdio_params(ws), errlog=open(os.devnull, "w"))) as client:
            packed = await client.call_tool("search", {"query": "where do I live Berlin", "budget_tokens": 120})
            assert not packed.is_error, text(packed)
            blocks = packed.structured_content["packed"]
            assert blocks and count_tokens("\n\n".join(blocks)) <= 120 and text(packed) == "\n\n".join(blocks)
            assert [r["path"] for r in packed.structured_content["results"]] == \
                [b[1:].split(":L")[0] for b in blocks]  # the hits packed, block for block
            then = await client.call_tool("search", {"query": "where do I live", "as_of": "2026-06-05",
                                                     "layer": "digest"})
            assert not then.is_error and "Berlin" in text(then) and "Lisbon" not in text(then)
            now = await client.call_tool("search", {"query": "where do I live", "layer": "digest"})
            assert "Lisbon" in now.structured_content["results"][0]["text"]
    run(session)
