"""Tombstones: what `memflow forget` removed, so later captures do not bring it back.

`metadata/state/tombstones.json` holds the keys of forgotten messages (id or content hash, as
the session log de-duplicates them: no content), the texts forgotten by a match (the text
itself: how a later capture recognises it), and the (session, date) daily notes forgotten. It is state, not index: it cannot be derived from the files, since the
files no longer hold what it names.
"""

from __future__ import annotations

from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores.files import atomic_write_json, read_json

FILE = "tombstones.json"


def load(lay: Layout) -> dict:
    data = read_json(lay.state_dir / FILE, {}) or {}
    return {"messages": list(data.get("messages", [])), "texts": list(data.get("texts", [])),
            "notes": list(data.get("notes", []))}


def add(lay: Layout, messages: list[str] = (), texts: list[str] = (), notes: list[str] = ()) -> None:
    data = load(lay)
    for key, new in (("messages", messages), ("texts", texts), ("notes", notes)):
        data[key] = sorted(set(data[key]) | set(new))
    atomic_write_json(lay.state_dir / FILE, data)


def forgotten_text(text: str, texts: list[str]) -> bool:
    folded = text.casefold()
    return any(t.casefold() in folded for t in texts)
