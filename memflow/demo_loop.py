"""`memflow demo`: the whole loop on the shipped sample conversations, offline.

capture (five sessions over four days, English and Chinese, a preference that changes)
-> index -> dream -> a few searches, printing what each stage wrote and found.
"""

from __future__ import annotations

import json
import tempfile
import time
from importlib import resources
from pathlib import Path


def sample() -> dict:
    return json.loads(resources.files("memflow").joinpath("samples/conversations.json").read_text("utf-8"))


def run_demo(target: str | None, out=print) -> Path:
    from memflow import api
    from memflow.tasks.presenting import render_result

    root = Path(target) if target else Path(tempfile.mkdtemp(prefix="memflow-demo-"))
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"demo folder is not empty: {root} (give a new folder)")
    started = time.perf_counter()
    api.init(root)
    settings = api.settings_for(root, chat_model="", embedding_model="")
    data = sample()
    out(f"== workspace {root}\n\n== 1. capture: {len(data['sessions'])} conversations -> daily notes")
    for session in data["sessions"]:
        result = api.capture(session["messages"], session["session_id"], settings)
        for note in result.notes:
            out(f"  {session['session_id']}: +{result.new_messages} msg -> {note.path}")
    summary = api.index(settings)
    out(f"\n== 2. index\n  {summary.line()}")
    dream = api.dream(settings, date=max(n["messages"][0]["timestamp"][:10] for n in data["sessions"]),
                      max_units=50)
    out(f"\n== 3. dream: {dream.notes_read} notes, {dream.units} units, actions {dream.actions}")
    for rel in dream.files_written:
        out(f"  wrote {rel}")
    out("\n== 4. recall")
    for query in data["searches"]:
        response = api.search(query, settings, limit=2)
        out(f"\n>>> memflow search {query!r}   (vector_hits={response.vector_hits} "
            f"keyword_hits={response.keyword_hits})")
        for result in response.results:
            out(render_result(result))
    out(f"\n== done in {time.perf_counter() - started:.1f}s. Explore: memflow -w {root} search \"...\"; "
        f"memflow -w {root} dream runs; memflow -w {root} inbox")
    return root
