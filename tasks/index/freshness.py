"""Stage 2, index: whether the search snapshot is current, without listing the workspace.

Three sources, cheapest first:
- a resident process (the MCP server) runs a watcher (index.watching): what it saw change and
  has not indexed yet is the answer, outside edits included;
- else the change journal (`metadata/index/changes.jsonl`, one line per event of every
  memory-flows writer, through ground.events) names the files written since the last full
  index run; each is stat'ed and compared with what the index recorded for it;
- and the indexed folders' mtimes, recorded by the index: a file another program added,
  removed or renamed changes its folder's mtime (tens of stats, not a walk).
What the cheap check cannot see is a file another program edited in place (a folder's mtime does
not change then): the answer says so (`unseen`), and `watermark(lay, walk=True)` (status,
check) stats every indexed file as before. The journal is derived: the full index run empties it.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone

from memflow.tasks.ground.convert import READABLE_SUFFIXES
from memflow.tasks.ground.events import JOURNAL
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores.files import atomic_write_json, atomic_write_text, read_json

WATERMARK = "watermark.json"
UNSEEN = "files other programs edited in place since the last index run (no watcher runs here)"


def journal_paths(lay: Layout, offset: int) -> tuple[set[str], int]:
    """Paths the journal names past byte `offset`, and its size."""
    path = lay.index_dir / JOURNAL
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            tail = handle.read()
    except FileNotFoundError:
        return set(), 0
    found: set[str] = set()
    for line in tail.splitlines():
        if line.strip():
            found.update(json.loads(line)["paths"])
    return found, offset + len(tail)


RESIDENT: dict = {}  # workspace root -> the running watcher of this process (index.watching)


def indexable(lay: Layout, rel: str) -> bool:
    """The path is one the index covers (what `indexing.indexed_files` would list, by name)."""
    parts = rel.split("/")
    if any(p.startswith(".") or p in ("", "..") for p in parts):
        return False
    if parts[0] in (lay.daily, lay.digest):
        return rel.endswith(".md")
    if parts[0] == lay.session:
        return len(parts) > 2 and parts[1] == "dialog" and rel.endswith(".jsonl")
    if parts[0] == lay.resource:
        return rel.lower().endswith(READABLE_SUFFIXES)  # lower case already
    return False


def mtime_ns(path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return -1


def folder_mtimes(lay: Layout, folders: list[str]) -> dict[str, int]:
    """Every folder under the indexed layer folders (themselves included) -> mtime_ns."""
    out = {}
    for top in folders:
        for here, dirs, _files in os.walk(lay.root / top):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            rel = os.path.relpath(here, lay.root).replace(os.sep, "/")
            out[rel] = os.stat(here).st_mtime_ns
    return out


def indexed_folders(lay: Layout) -> list[str]:
    return [lay.daily, lay.digest, f"{lay.session}/dialog", lay.resource]


def write_full_mark(lay: Layout, files: int, chunks: int, writes: int) -> None:
    """After a full index run (a scan of every file): the time, counts, folder mtimes and an
    empty journal (the mark first: a reader in between sees every journal path as pending)."""
    atomic_write_json(lay.index_dir / WATERMARK, {
        "indexed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "indexed_at_ns": time.time_ns(), "files": files, "chunks": chunks,
        "writes_since_compaction": writes, "journal_at": 0,
        "folders": folder_mtimes(lay, indexed_folders(lay)),
    })
    atomic_write_text(lay.index_dir / JOURNAL, "")


def note_indexed(lay: Layout, indexed: dict[str, int], added: int, deleted: int, changed: bool) -> None:
    """After files were indexed by name (path -> mtime_ns, -1 for a gone one): remember them,
    re-read the mtimes of their folders (our own writes changed them) and move the journal
    position past every line whose files are now all indexed."""
    path = lay.index_dir / WATERMARK
    mark = read_json(path, None)
    if mark is None:
        return
    named = {**(mark.get("indexed_paths") or {}), **indexed}
    folders = dict(mark.get("folders") or {})
    for rel in indexed:
        parts = rel.split("/")
        for n in range(1, len(parts)):
            folder = "/".join(parts[:n])
            if any(folder == top or folder.startswith(top + "/") for top in indexed_folders(lay)):
                if (m := mtime_ns(lay.root / folder)) >= 0:
                    folders[folder] = m
                else:
                    folders.pop(folder, None)
    mark = {**mark, "indexed_paths": named, "folders": folders, "files": mark["files"] + added - deleted,
            "writes_since_compaction": mark.get("writes_since_compaction", 0) + int(changed)}
    pending, size = journal_paths(lay, mark.get("journal_at", 0))
    if not _pending(lay, pending, named, mark.get("indexed_at_ns", 0)):
        mark["journal_at"] = size
    atomic_write_json(path, mark)


def _pending(lay: Layout, paths: set[str], named: dict, since: int) -> set[str]:
    """The journal's `paths` the index does not hold as they are: one indexed by name since the
    full run is pending when its mtime is not the one indexed; any other when it is gone or
    changed after the full run (`since`), which scanned every file: a writer's event can be
    journaled just after a full run that indexed its files (the dream's, after its closing
    index run: every search then said "stale index: 8 files changed", status said none)."""
    out = set()
    for p in paths:
        if not indexable(lay, p):
            continue
        mtime = mtime_ns(lay.root / p)
        if (named.get(p) != mtime) if p in named else (mtime < 0 or mtime > since):
            out.add(p)
    return out


def cheap_watermark(lay: Layout, mark: dict) -> dict:
    """The journal and folder check (see the module docstring)."""
    named = mark.get("indexed_paths") or {}
    journaled = journal_paths(lay, mark.get("journal_at", 0))[0]
    pending = _pending(lay, journaled, named, mark.get("indexed_at_ns", 0))
    root = f"{lay.root}{os.sep}"  # a string join: a Path per folder cost more than its stat
    moved = [f for f, m in (mark.get("folders") or {}).items() if mtime_ns(root + f) != m]
    unexplained = [f for f in moved if not any(p.startswith(f + "/") for p in pending)]
    changed = len(pending) + len(unexplained)
    return {"indexed_at": mark["indexed_at"], "changed_since": changed, "stale": changed > 0,
            "files": mark["files"], "chunks": mark["chunks"], "checked": "journal and folders",
            "unseen": UNSEEN}
