"""The inbox: one JSON line per job that changed files, in `metadata/state/inbox.jsonl`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timezone

from memflow.tasks.ground import durability
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores.files import append_line

TITLES = {"auto_memory": "Auto-memory result", "auto_resource": "Auto-resource result",
          "auto_dream": "Auto-dream result"}


_CHANGED: ContextVar[set[str] | None] = ContextVar("memflow_changed_paths", default=None)


@contextmanager
def recording_changes() -> Iterator[set[str]]:
    """Collect the paths every event inside the block names (what a write changed), so the
    caller can index just those before it returns."""
    changed: set[str] = set()
    token = _CHANGED.set(changed)
    try:
        yield changed
    finally:
        _CHANGED.reset(token)


JOURNAL = "changes.jsonl"  # under metadata/index/: derived, emptied by every full index run


def record_change(lay: Layout, paths: list[str]) -> None:
    """Journal one writer's changed paths for the index's freshness check (index.freshness);
    nothing before the first index run (the index is stale anyway, its folder stays empty).
    Not fsynced once this boot's index writes may skip it (a crash then rebuilds the index)."""
    if not (lay.index_dir / "watermark.json").exists():
        return
    append_line(lay.index_dir / JOURNAL, json.dumps({"time_ns": time.time_ns(), "paths": sorted(set(paths))},
                                                    ensure_ascii=False), durable=not durability.lazy(lay.index_dir))


def note_changed(paths: list[str]) -> None:
    """Name files a write changed that its event does not list (a session log)."""
    recorder = _CHANGED.get()
    if recorder is not None:
        recorder.update(paths)


def append_event(lay: Layout, job: str, paths: list[str], summary: str) -> dict | None:
    """Record an event; nothing is written when no path changed."""
    if not paths:
        return None
    note_changed(paths)
    if job != "index":
        record_change(lay, paths)
    event = {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), "job": job,
             "title": TITLES.get(job, job), "paths": sorted(set(paths)), "summary": summary}
    append_line(lay.state_dir / "inbox.jsonl", json.dumps(event, ensure_ascii=False))
    return event


def read_events(lay: Layout, since: str | None = None) -> list[dict]:
    path = lay.state_dir / "inbox.jsonl"
    if not path.exists():
        return []
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if since:
        cutoff = _parse_time(since)
        events = [e for e in events if _parse_time(e["time"]) >= cutoff]
    return events


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
