"""`memflow demo` and `memflow.demo()`: the whole loop on the shipped sample conversations, offline.

capture (five sessions over four days, English and Chinese, a preference that changes)
-> index -> dream -> a few searches, printing what each stage wrote and found. Without a folder
it works in a temporary one and removes it at the end, unless asked to keep it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from importlib import resources
from pathlib import Path


DEMO_BUDGET = 200  # tokens: a context an agent can afford on every turn


def sample() -> dict:
    return json.loads(resources.files("memflow.samples").joinpath("conversations.json").read_text("utf-8"))


def demo(workspace: str | Path | None = None, keep: bool = False, out=print) -> Path | None:
    """The whole loop (capture -> index -> dream -> recall) on the shipped sample conversations,
    offline, printing what each stage wrote and found through `out`. In `workspace` (a new or
    empty folder, kept), or in a temporary folder removed at the end unless `keep`. Returns the
    workspace folder, or None when it was removed. Public as `memflow.demo`."""
    if workspace is not None:
        root = Path(workspace).expanduser()
        if root.exists() and any(root.iterdir()):
            raise FileExistsError(f"demo folder is not empty: {root} (give a new folder)")
        _run(root, out)
        out(_explore(root))
        return root
    root = Path(tempfile.mkdtemp(prefix="memflow-demo-"))
    try:
        _run(root, out)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    if keep:
        out(_explore(root))
        return root
    out(f"   removed the temporary workspace {root} (keep one: `memflow demo DIR` or --keep)")
    return None


def _run(root: Path, out) -> Path:
    from memflow import api
    from memflow.tasks.recall import expand

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
)
    out(f"\n== 3. dream: {dream.notes_read} notes, {dream.units} units, actions {dream.actions}, "
        f"backlog: {dream.notes_left} notes")
    for rel in dream.files_written:
        out(f"  wrote {rel}")
    out(f"\n== 4. recall: what an agent gets in {DEMO_BUDGET} tokens (the lines that answer, newest first)")
    for query in data["searches"]:
        response = api.search(query, settings, budget_tokens=DEMO_BUDGET)
        out(f"\n>>> memflow search {query!r} --budget {DEMO_BUDGET}   ({response.packed_tokens} tokens)")
        out("\n\n".join(expand(block) for block in response.packed) or "(nothing found)")
    out(f"\n== done in {time.perf_counter() - started:.1f}s")
    return root


def _explore(root: Path) -> str:
    return (f"   explore: memflow -w {root} search \"...\"; memflow -w {root} dream runs; "
            f"memflow -w {root} inbox")
