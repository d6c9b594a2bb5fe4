"""Browsing memory without a query: notes changed lately (`recent_notes`) and a note with what
it links to and what links to it, to a depth (`note_context`, like basic-memory's
`build_context`). Links come from the search snapshot's link graph (no file walk); the note
itself is read from disk, so it is current."""

from __future__ import annotations

import time

import pyarrow.compute as pc

from memflow.schemas.settings import Settings
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.fileops import readable
from memflow.tasks.ground.workspace import file_stats, layout
from memflow.tasks.recall.hybrid import open_index
from memflow.tasks.stores.files import read_text


def _card(lay, rel: str) -> dict:
    """path, name and description of a note (empty for a file that is not Markdown)."""
    path = lay.root / rel
    if not rel.endswith(".md") or not path.is_file() or path.stat().st_size > 4 * 1024 * 1024:
        return {"path": rel, "name": "", "description": ""}
    note = parse_note(rel, read_text(path))
    return {"path": rel, "name": note.name, "description": note.description}


def recent_notes(settings: Settings, days: float = 7.0, limit: int = 20, layer: str | None = None) -> list[dict]:
    """Notes (daily, digest) and resources changed in the last `days`, newest first."""
    lay = layout(settings)
    folders = {"daily": [lay.daily], "digest": [lay.digest], "resource": [lay.resource]}
    chosen = folders[layer] if layer else [lay.daily, lay.digest, lay.resource]
    since_ns = time.time_ns() - int(days * 86_400 * 1e9)
    found = {**file_stats(lay, [f for f in chosen if f != lay.resource]),
             **(file_stats(lay, [lay.resource], ("",)) if lay.resource in chosen else {})}
    fresh = sorted(((mtime, rel) for rel, (_size, mtime) in found.items() if mtime >= since_ns), reverse=True)
    out = []
    for mtime, rel in fresh[:limit]:
        out.append({**_card(lay, rel), "modified": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime / 1e9))})
    return out


def note_context(settings: Settings, rel: str, depth: int = 1, limit: int = 30) -> dict:
    """The note's text, and the notes it links to and that link to it, breadth first to
    `depth` hops (each with its path, name, description, hop and direction)."""
    lay = layout(settings)
    path = readable(lay, rel)  # the memory layers only: never memflow.toml or metadata/
    if not path.is_file():
        raise FileNotFoundError(f"no such file in the workspace: {rel}")
    rel = path.relative_to(lay.root.resolve()).as_posix()
    links = open_index(lay, settings).live_links()
    seen, frontier, related = {rel}, [rel], []
    for hop in range(1, max(0, depth) + 1):
        following = []
        for current in frontier:
            outgoing = links.filter(pc.equal(links["source"], current)).column("target").to_pylist()
            incoming = links.filter(pc.equal(links["target"], current)).column("source").to_pylist()
            for other, direction in [*[(t, "out") for t in outgoing], *[(s, "in") for s in incoming]]:
                if other in seen or not (lay.root / other).exists():
                    continue
                seen.add(other)
                following.append(other)
                related.append({**_card(lay, other), "hop": hop, "direction": direction, "via": current})
                if len(related) >= limit:
                    return {"path": rel, "text": read_text(path), "related": related, "truncated": True}
        frontier = following
    return {"path": rel, "text": read_text(path), "related": related, "truncated": False}
