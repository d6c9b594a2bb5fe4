"""Stage 2, index: whether the search snapshot is current, at a cost that follows what changed.

Three sources, cheapest first:
- a resident process (the MCP server) runs a watcher (index.watching): what it saw change and
  has not indexed yet is the answer, outside edits included;
- else the change journal (`metadata/index/changes.jsonl`, one line per event of every
  memory-flows writer, through ground.events) names the files written since the last full
  index run; each is stat'ed and compared with what the index recorded for it;
- and folder mtimes: a file another program adds, removes or renames changes its folder's
  mtime. Checked on every search: the indexed layers' roots, the `WATCHED` folders changed last
  before the full run and those memory-flows wrote since (a day folder of a workspace kept for
  years is written on its day and rarely after: stat'ing them all cost 2,500 stats per search
  at 24k files, 7,300 at 72k), each against its recorded mtime; and the folders of the hits
  and the hit files themselves, against the full run's time (what a search returns is never
  older than it says).
What the cheap check cannot see: a file another program edited in place (its folder's mtime
does not change), or added, removed or renamed in an older folder, unless a hit lies there.
The answer says so (`unseen`), `watermark(lay, walk=True)` (status, check) stats every indexed
file, and a running server's watcher sees everything. The journal is derived: the full index
run empties it. `watermark.json` stays small (tens of folders); the files indexed by name
since the full run are appended to `indexed_paths.jsonl` (one line per indexing call: a write
costs one line, not a rewrite of every name since), read only while the journal names files
other than the ones just indexed, and then only past what this process read of it before.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone

from memflow.tasks.ground import durability
from memflow.tasks.ground.convert import READABLE_SUFFIXES
from memflow.tasks.ground.events import JOURNAL
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores.files import append_line, atomic_write_json, atomic_write_text, read_json

WATERMARK = "watermark.json"
NAMED = "indexed_paths.jsonl"  # lines of path -> mtime_ns: files indexed by name since the full run
OLD_NAMED = "indexed_paths.json"  # the same as one dict, rewritten on every write (before 2026-12-07)
WATCHED = 64  # folders checked on every search besides the layer roots: the most recently changed
UNSEEN = (f"files other programs edited in place, or added, removed or renamed in a folder outside the "
          f"{WATCHED} changed last, since the last index run, unless among the hits (no watcher runs here; "
          "`memflow status` checks every file)")


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


def watched_folders(lay: Layout, mtimes: dict[str, int], keep: int = WATCHED) -> dict[str, int]:
    """The folders a search checks: the layer roots and the `keep` of `mtimes` changed last."""
    roots = set(indexed_folders(lay))
    newest = sorted((f for f in mtimes if f not in roots), key=mtimes.__getitem__, reverse=True)[:keep]
    return {f: mtimes[f] for f in sorted(roots & mtimes.keys() | set(newest))}


def named_paths(lay: Layout, mark: dict) -> dict[str, int]:
    """Files indexed by name since the full run (path -> mtime_ns; -1: gone), the later line
    winning; a mark written before they had their own file carries them itself."""
    if "indexed_paths" in mark:
        return mark["indexed_paths"]
    return {**read_json(lay.index_dir / OLD_NAMED, {}), **_named_lines(lay.index_dir / NAMED)}


_NAMED_READ: dict = {}  # the named file -> (identity, bytes read, what they said): it only grows


def _named_lines(path) -> dict[str, int]:
    """The merged lines of the append-only named file, read past what this process read before
    of the same file (its inode and first line: a full run replaces it). A last line without
    its newline is an append under way (or torn by a crash): not read yet."""
    try:
        with open(path, "rb") as handle:
            head = handle.readline()
            identity = (os.fstat(handle.fileno()).st_ino, head)
            known = _NAMED_READ.get(path)
            start, found = (known[1], dict(known[2])) if known and known[0] == identity else (0, {})
            handle.seek(start)
            tail = handle.read()
    except FileNotFoundError:
        return {}
    whole = tail[:tail.rfind(b"\n") + 1]
    for line in whole.splitlines():
        if line.strip():
            try:
                found.update(json.loads(line))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ValueError(f"{path}: a line is not valid JSON; delete the file and run "
                                 "`memflow index`") from exc
    _NAMED_READ[path] = (identity if head.endswith(b"\n") else None, start + len(whole), found)
    return dict(found)


def write_full_mark(lay: Layout, files: int, chunks: int, writes: int) -> None:
    """After a full index run (a scan of every file): the time, counts, the watched folders'
    mtimes and an empty journal (the mark first: a reader in between sees every journal path
    as pending)."""
    atomic_write_json(lay.index_dir / WATERMARK, {
        "indexed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "indexed_at_ns": time.time_ns(), "files": files, "chunks": chunks,
        "writes_since_compaction": writes, "journal_at": 0,
        "watched": watched_folders(lay, folder_mtimes(lay, indexed_folders(lay))),
    })
    atomic_write_text(lay.index_dir / NAMED, "")
    (lay.index_dir / OLD_NAMED).unlink(missing_ok=True)
    atomic_write_text(lay.index_dir / JOURNAL, "")


def note_indexed(lay: Layout, indexed: dict[str, int], added: int, deleted: int, changed: bool) -> None:
    """After files were indexed by name (path -> mtime_ns, -1 for a gone one): remember them,
    watch their folders from now on (their mtimes re-read: our own writes changed them; the
    oldest beyond `WATCHED` names since the full run are let go) and move the journal position
    past every line whose files are now all indexed."""
    path = lay.index_dir / WATERMARK
    mark = read_json(path, None)
    if mark is None:
        return
    carried = mark.get("indexed_paths")  # an old mark carrying them: they move to the named file
    watched = dict(mark.get("watched") or mark.get("folders") or {})
    tops = indexed_folders(lay)
    for rel in indexed:
        parts = rel.split("/")
        for n in range(1, len(parts)):
            folder = "/".join(parts[:n])
            if any(folder == top or folder.startswith(top + "/") for top in tops):
                if (m := mtime_ns(lay.root / folder)) >= 0:
                    watched[folder] = m
                else:
                    watched.pop(folder, None)
    mark = {k: v for k, v in mark.items() if k not in ("indexed_paths", "folders")}
    mark = {**mark, "watched": watched_folders(lay, watched, 4 * WATCHED), "files": mark["files"] + added - deleted,
            "writes_since_compaction": mark.get("writes_since_compaction", 0) + int(changed)}
    pending, size = journal_paths(lay, mark.get("journal_at", 0))
    # the names read only when the journal names files other than these (after a write: none)
    named = {**(named_paths(lay, {}) if pending - indexed.keys() else {}), **(carried or {}), **indexed}
    if not _pending(lay, pending, named, mark.get("indexed_at_ns", 0)):
        mark["journal_at"] = size
    durable = not durability.lazy(lay.index_dir)  # derived: a crash that loses them rebuilds
    # before the mark that may move past the journal
    line = json.dumps({**(carried or {}), **indexed}, ensure_ascii=False)
    append_line(lay.index_dir / NAMED, line, durable)
    atomic_write_json(path, mark, durable)


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


def _hits_changed(lay: Layout, hits: dict[str, int], watched: dict[str, int], since: int) -> set[str]:
    """Of the hit files (path -> mtime_ns the snapshot indexed), those not as indexed (edited
    in place, deleted), and the hits' folders changed since they were recorded, or since the
    full run (`since`) when not watched: a file added, removed or renamed beside a hit."""
    root = f"{lay.root}{os.sep}"
    changed = {rel for rel, indexed in hits.items() if mtime_ns(root + rel) != indexed}
    for folder in {rel.rpartition("/")[0] for rel in hits} - watched.keys():
        if mtime_ns(root + folder) > since:
            changed.add(folder)
    return changed


def cheap_watermark(lay: Layout, mark: dict, hits: dict[str, int] | None = None) -> dict:
    """The journal, watched folders and hits check (see the module docstring)."""
    since = mark.get("indexed_at_ns", 0)
    journaled = journal_paths(lay, mark.get("journal_at", 0))[0]
    pending = _pending(lay, journaled, named_paths(lay, mark), since) if journaled else set()
    root = f"{lay.root}{os.sep}"  # a string join: a Path per folder cost more than its stat
    watched = mark.get("watched") or mark.get("folders") or {}
    moved = [f for f, m in watched.items() if mtime_ns(root + f) != m]
    moved += sorted(_hits_changed(lay, hits or {}, watched, since) - pending - set(moved))
    unexplained = [f for f in moved if not any(p == f or p.startswith(f + "/") for p in pending)]
    changed = len(pending) + len(unexplained)
    return {"indexed_at": mark["indexed_at"], "changed_since": changed, "stale": changed > 0,
            "files": mark["files"], "chunks": mark["chunks"], "checked": "journal and folders",
            "unseen": UNSEEN}
