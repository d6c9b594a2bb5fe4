"""Day index pages: `daily/<date>.md` lists the day's notes between markers.

Text a person writes outside `<!-- notes:auto -->` ... `<!-- /notes:auto -->` is kept on every
refresh. A QwenPaw workspace keeps its day index at `<daily>/<date>/index.md`; that path is used
when it already exists.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

from memflow.tasks.ground.notes import parse_note, render_note
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores.files import atomic_write_text, read_text

START, END = "<!-- notes:auto -->", "<!-- /notes:auto -->"
_BLOCK_RE = re.compile(re.escape(START) + r".*?" + re.escape(END), re.DOTALL)


def day_index_path(lay: Layout, day: date) -> str:
    qwenpaw = f"{lay.daily}/{day.isoformat()}/index.md"
    if (lay.root / qwenpaw).exists():
        return qwenpaw
    return f"{lay.daily}/{day.isoformat()}.md"


def day_notes(lay: Layout, day: date) -> list[str]:
    folder = lay.root / lay.daily / day.isoformat()
    if not folder.is_dir():
        return []
    return sorted(
        p.relative_to(lay.root).as_posix() for p in folder.glob("*.md")
        if p.name != "index.md" and not p.name.startswith(".") and p.is_file()  # no FIFO, no loop
    )


def _one_line(value: object) -> str:
    return " ".join(str(value or "").split())


def render_listing(lay: Layout, notes: list[str]) -> str:
    lines = []
    for rel in notes:
        note = parse_note(rel, read_text(lay.root / rel))
        lines.append(f"- [[{rel}]] name: {_one_line(note.name)} "
                     f"description: {_one_line(note.description)}")
    return "\n".join([START, *lines, END])


def refresh_day_index(lay: Layout, day: date) -> str | None:
    """Rewrite the day's index from its notes; returns its path, or None when the day is empty
    and has no index yet."""
    rel = day_index_path(lay, day)
    path = lay.root / rel
    notes = day_notes(lay, day)
    if not notes and not path.exists():
        return None
    listing = render_listing(lay, notes)
    description = f"{len(notes)} note(s) today."
    if path.exists():
        note = parse_note(rel, read_text(path))
        metadata = {**note.metadata, "name": day.isoformat(), "description": description}
        body = note.body
        if _BLOCK_RE.search(body):
            body = _BLOCK_RE.sub(lambda _m: listing, body, count=1)
        else:
            body = body.rstrip("\n") + "\n\n" + listing + "\n"
    else:
        metadata = {"name": day.isoformat(), "description": description}
        body = f"\n# {day.isoformat()}\n\n{listing}\n"
    atomic_write_text(path, render_note(metadata, body))
    return rel


def day_index_stale(lay: Layout, day: date) -> bool:
    """The day's folder changed after its index was written (or the index is missing): a run
    was killed between writing a note and refreshing the index."""
    folder = lay.root / lay.daily / day.isoformat()
    if not folder.is_dir():
        return False
    index = lay.root / day_index_path(lay, day)
    return not index.exists() or index.stat().st_mtime_ns < folder.stat().st_mtime_ns


NOTE_SCAN_BYTES = 4 * 1024 * 1024  # a larger file is not a note capture wrote


def note_where(lay: Layout, folder: str, pattern: str, wanted: Callable[[dict], bool]) -> str | None:
    """The first note in `folder` (matching `pattern`) whose frontmatter `wanted` accepts;
    FIFOs, symlink loops and huge files are passed over."""
    base = lay.root / folder
    for path in sorted(base.glob(pattern)) if base.is_dir() else []:
        if path.is_file() and path.stat().st_size <= NOTE_SCAN_BYTES and \
                wanted(parse_note(path.name, read_text(path)).metadata):
            return path.relative_to(lay.root).as_posix()
    return None
