"""Stage 2, index, in a resident process: watch the indexed folders and index outside edits.

The one module that imports watchfiles. A `Watcher` (the MCP server starts one) owns a thread
that watches daily/, digest/, session/dialog/ and resource/ (inotify and the like; no polling of
the workspace), keeps the set of indexed files seen changing and not yet indexed, and indexes
them by name (index.incremental) under the workspace lock, ~0.2 s after the last change of a
burst. While it runs, searches in the process take their freshness from it
(`indexing.watermark`): stale while that set is not empty, which covers edits by other programs,
in place or not. An event arrives a few milliseconds after the write that caused it: a search in
that window still says fresh. A failed index run keeps its files pending (the answer says stale,
with the error) and is retried on the next tick.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from memflow.schemas.settings import Settings
from memflow.tasks.ground.workspace import layout
from memflow.tasks.index.freshness import RESIDENT, WATERMARK, indexable, indexed_folders, mtime_ns, named_paths
from memflow.tasks.stores.files import read_json

log = logging.getLogger("memflow.index")
DEBOUNCE_MS, TICK_MS = 150, 400


class Watcher:
    """Watches one workspace's indexed folders from a thread; `start`, then `stop`."""

    def __init__(self, settings: Settings):
        self.settings, self.lay = settings, layout(settings)
        self._dirty: set[str] = set()
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._deferred = 0.0  # when the files pending were first left to a write of this process
        self.error = ""

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._ready.is_set()

    def start(self, timeout: float = 10.0) -> Watcher:
        self._thread = threading.Thread(target=self._run, name="memflow-watch", daemon=True)
        self._thread.start()
        self._ready.wait(timeout)
        RESIDENT[self.lay.root] = self
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        RESIDENT.pop(self.lay.root, None)

    def pending(self) -> set[str]:
        with self._mutex:
            return set(self._dirty)

    def watermark(self, mark: dict) -> dict:
        """Stale while a file seen changing is not indexed as it is now (a write through this
        process indexed it already: its event does not make the answer stale)."""
        pending = self._unindexed(named_paths(self.lay, mark), self.pending())
        out = {"indexed_at": mark["indexed_at"], "changed_since": len(pending), "stale": bool(pending),
               "files": mark["files"], "chunks": mark["chunks"], "checked": "watcher"}
        return {**out, "error": self.error} if self.error else out

    def _unindexed(self, named: dict[str, int], paths: set[str]) -> set[str]:
        """Those of `paths` not indexed as they are now (`named`: the watermark's path -> mtime)."""
        return {p for p in paths if named.get(p) != mtime_ns(self.lay.root / p)}

    def _folders(self) -> list[str]:
        found = []
        for rel in indexed_folders(self.lay):
            (self.lay.root / rel).mkdir(parents=True, exist_ok=True)
            found.append(str(self.lay.root / rel))
        return found

    def _run(self) -> None:
        import watchfiles

        folders = self._folders()
        self._ready.set()
        for changes in watchfiles.watch(*folders, stop_event=self._stop, debounce=DEBOUNCE_MS,
                                        step=50, rust_timeout=TICK_MS, yield_on_timeout=True,
                                        raise_interrupt=False):
            self._take(changes)
            if self.pending():
                self._index()

    def _take(self, changes) -> None:
        root = str(self.lay.root)
        rels = {os.path.relpath(path, root).replace(os.sep, "/") for _kind, path in changes}
        with self._mutex:
            self._dirty |= {r for r in rels if indexable(self.lay, r)}

    def _index(self) -> None:
        """Index the pending files; on an error (the lock busy past its wait, a failed
        write) they stay pending and the error is kept for the watermark."""
        from memflow.tasks.ground.lock import read_holder, workspace_lock
        from memflow.tasks.index.incremental import index_paths

        named = named_paths(self.lay, read_json(self.lay.index_dir / WATERMARK, None) or {})
        seen = self.pending()
        with self._mutex:  # written through this process and indexed as they are: no lock, no run
            self._dirty -= seen - self._unindexed(named, seen)
        todo = sorted(self.pending())
        if not todo:
            return
        if (read_holder(self.lay.state_dir) or {}).get("pid") == os.getpid():
            # a write in this process holds the lock and indexes what it wrote: look again on the
            # next tick (up to `lock_wait`, then wait for the lock as any other job would)
            self._deferred = self._deferred or time.monotonic()
            if time.monotonic() - self._deferred < self.settings.lock_wait:
                return
        self._deferred = 0.0
        try:
            with workspace_lock(self.lay.state_dir, "index-watch", wait=self.settings.lock_wait, record=False):
                index_paths(self.settings, todo)
        except Exception as exc:  # noqa: BLE001 - a background thread: kept pending, reported in the watermark, retried
            self.error = f"indexing {len(todo)} changed file(s) failed: {exc}"
            log.warning("%s", self.error)
            return
        self.error = ""
        with self._mutex:
            self._dirty -= set(todo)
