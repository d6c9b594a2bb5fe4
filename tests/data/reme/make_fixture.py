"""Make the ReMe fixture: a small QwenPaw-style workspace written by ReMe 0.4.2 itself.

Rerun (from the repository root; ReMe lives in its own virtualenv, outside the repo):

    python3 -m venv /tmp/reme-venv && /tmp/reme-venv/bin/pip install 'reme-ai[as]==0.4.2.0'
    /tmp/reme-venv/bin/python tests/data/reme/make_fixture.py

ReMe talks to tests/fakemodel.py (started here on 127.0.0.1): embeddings are its hashed bags of
words (64 dims, model name `fake-embed`), and the chat model is a small script below that plays
ReMe's agents: it writes a resource's note with ReMe's own `write` tool, and the dream's
extractor answers `{"units": []}` ("nothing worth a digest node"), so ReMe's dream checkpoints
the notes it read without writing digest nodes (its integrate step needs a model that edits
nodes with tools over several turns; not scripted here). Daily notes are written with ReMe's
`daily_write` job, the index by ReMe's own `index_update` job with an embedding store.

Steps: notes for 2026-11-20/21 and two resources -> auto_resource -> index -> auto_dream (for
2026-11-21, two days) -> one more note (2026-11-22, indexed, never dreamt) -> index -> the
search queries below, whose top results are recorded in `expected.json`.

Writes `tests/data/reme/workspace/` (ReMe's files minus its agent scratch sessions under
`mem_session/agentscope/`) and `tests/data/reme/expected.json` (the model, the files' mtimes -
git does not keep them and ReMe's catalogs key on them - and the recorded search results).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # tests/, for fakemodel
from fakemodel import DIMS, FakeModel  # noqa: E402

MODEL = "fake-embed"
QUERIES = ["espresso morning cycling", "bike chain ceramic wax", "Ingrid Tromsø marine biology",
           "garlic tulip raised beds", "Overstory Powers reading list", "dentist Okafor Thursday",
           "cardamom buns dough"]
NOTES = [
    ("2026-11-20", "coffee", "coffee habits",
     "# Coffee\n\nI drink a double espresso every morning at seven before cycling to work.\n\n"
     "rel:: [[memory/2026-11-20/bike]]\n"),
    ("2026-11-20", "bike", "bike repair",
     "# Bike repair\n\nThe bike chain was replaced at Velo Repair on Harbour Street.\n"
     "The mechanic recommended a ceramic wax lubricant every 300 km.\n"),
    ("2026-11-21", "sister", "family news",
     "# Ingrid\n\nMy sister Ingrid moves to Tromsø in January; she will teach marine biology "
     "at the university.\n\n## Plans\n\n- visit her at Easter\n- bring her the old sea charts\n"),
    ("2026-11-21", "garden", "garden work",
     "# Garden\n\nPlanted garlic cloves and tulip bulbs in the raised beds behind the shed.\n"),
]
LATE_NOTE = ("2026-11-22", "dentist", "appointment",
             "# Dentist\n\nThe dentist appointment moved to Thursday 3 December at 14:00 with Dr. Okafor.\n")
RESOURCES = {
    "resource/2026-11-21/reading-list.md": "# Reading list\n\n- The Overstory by Richard Powers\n"
                                           "- Braiding Sweetgrass by Robin Wall Kimmerer\n",
    "resource/2026-11-21/recipes.txt": "Cardamom buns: knead the dough with crushed cardamom, "
                                       "butter and sugar; bake 12 minutes at 220 C.\n",
}


def play_agent(messages: list[dict]) -> str | dict:
    """The chat model: write a resource's note with ReMe's `write` tool, then stop; tell the
    dream's extractor there is nothing to consolidate."""
    if messages[-1].get("role") == "tool":
        return "Done."
    prompt = "\n".join(text_of(m.get("content")) for m in messages if m.get("role") == "user")
    target = re.search(r"Target note path: (\S+)", prompt)
    if target:
        source = re.search(r"Source resource link: (\[\[.+?\]\])", prompt).group(1)
        body = prompt.split("# Resource File Content", 1)[1].split("# Your Task", 1)[0].strip()
        name = Path(target.group(1)).stem
        args = {"path": target.group(1), "name": name, "description": f"resource {name}",
                "content": f"# {name}\n\n{body}\n", "metadata": {"source_resource": source}}
        return {"tool_calls": [{"id": f"call-{name}", "type": "function",
                                "function": {"name": "write", "arguments": json.dumps(args)}}]}
    return json.dumps({"units": []})


def text_of(content) -> str:
    if isinstance(content, list):  # content blocks
        return "\n".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return str(content or "")


def reme_config(root: Path, api_base: str) -> dict:
    import reme
    import yaml
    from reme.config import resolve_app_config

    credential = {"api_key": "x", "base_url": api_base}
    components = {
        "as_embedding": {"default": {"backend": "openai", "model": MODEL, "dimensions": DIMS,
                                     "credential": credential, "parameters": {}}},
        "embedding_store": {"default": {"backend": "local", "as_embedding": "default"}},
        "file_store": {"default": {"embedding_store": "default"}},
        "as_llm": {"default": {"backend": "openai", "model": "fake-chat", "stream": False,
                               "credential": credential}},
    }
    config = resolve_app_config(log_config=False, workspace_dir=str(root), enable_logo=False,
                                log_to_console=False, log_to_file=False, metadata_dir="mem_metadata",
                                daily_dir="memory", timezone="UTC", components=components)
    jobs = config["jobs"]
    # ReMe's resource watcher, once and in the foreground: its first step scans resource/, updates
    # the resource catalog and has the agent write a note per new file.
    watcher = jobs["resource_watch_loop"]
    jobs["resource_scan"] = {**watcher, "backend": "base", "steps": watcher["steps"][:1]}
    for name in [n for n, job in jobs.items() if job.get("backend") in ("background", "cron")]:
        del jobs[name]  # no watchers or crons: each step is run here, in order
    preset = yaml.safe_load((Path(reme.__file__).parent / "config" / "benchmark.yaml").read_text())
    jobs["index_update"] = preset["jobs"]["index_update"]
    return config


async def make(root: Path, fake: FakeModel) -> list[dict]:
    from reme.reme import ReMe

    for rel, text in RESOURCES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    async with ReMe(**reme_config(root, fake.api_base)) as app:
        for day, name, description, content in NOTES:
            await check(app.run_job("daily_write", name=name, description=description, session_id="s1",
                                    content=content, date=day))
        await check(app.run_job("resource_scan"))
        await check(app.run_job("index_update"))
        await check(app.run_job("auto_dream", date="2026-11-21", scan_days=2))
        day, name, description, content = LATE_NOTE
        await check(app.run_job("daily_write", name=name, description=description, session_id="s2",
                                content=content, date=day))
        await check(app.run_job("index_update"))
        found = []
        for query in QUERIES:
            response = await check(app.run_job("search", query=query, limit=3))
            found.append({"query": query, "results": [
                {"path": r["path"], "start_line": r["start_line"], "end_line": r["end_line"]}
                for r in response.metadata["results"]]})
    return found


async def check(pending):
    response = await pending
    if not response.success:
        raise SystemExit(f"ReMe job failed: {response.answer}")
    return response


def main() -> None:
    logging.disable(logging.CRITICAL)
    fake = FakeModel()
    fake.default_chat = play_agent
    root = Path(tempfile.mkdtemp(prefix="reme-fixture-"))
    api_base = fake.api_base  # in ReMe's name for its embedding cache (vector-space id)
    try:
        searches = asyncio.run(make(root, fake))
    finally:
        fake.close()
    shutil.rmtree(root / "mem_session" / "agentscope", ignore_errors=True)
    out = HERE / "workspace"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(root, out, copy_function=shutil.copy2)
    mtimes = {p.relative_to(out).as_posix(): p.stat().st_mtime_ns
              for p in sorted(out.rglob("*")) if p.is_file()}
    import reme

    expected = {"reme_version": reme.__version__ if hasattr(reme, "__version__") else "0.4.2",
                "embedding_model": MODEL, "dimensions": DIMS, "backend": "openai", "api_base": api_base,
                "mtime_ns": mtimes, "searches": searches}
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    shutil.rmtree(root)
    print(f"wrote {out} ({sum(os.path.getsize(out / p) for p in mtimes):,} bytes) and expected.json")


if __name__ == "__main__":
    main()
