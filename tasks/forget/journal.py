"""A forget's plan on disk (`metadata/state/forget_plan.json`), written before any file changes,
and carried out so that running it again finishes it.

The plan holds what every changed file will be, not what it forgets: the new text of each file
to write (at its final path; a renamed file that lost lines is written there and its old path
deleted), the files to move (renamed, text unchanged), the files to delete, the day indexes to
refresh and the hashes of the texts indexed before (their vectors leave the embedding cache).
Each step is idempotent: a file already as planned is left alone, a move already made is not
made again. A file that changed since it was planned (a capture after a kill) is left as it is
and said; a `forget` run again then plans it anew. `finish_journal` carries out a plan left by a
killed forget, then removes it: links and names always end as one plan made them.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from memflow.schemas.settings import Settings
from memflow.tasks.capture import refresh_day_index
from memflow.tasks.forget.matching import remove_empty_dirs
from memflow.tasks.ground.events import append_event
from memflow.tasks.ground.workspace import Layout, date_of, layout, safe_path
from memflow.tasks.index import embedding_cache_dir, open_store, run_index
from memflow.tasks.stores import keyword
from memflow.tasks.stores.files import atomic_write_json, atomic_write_text, read_json
from memflow.tasks.stores.lance import EmbeddingCache, IndexStore

FILE = "forget_plan.json"


@dataclass
class Journal:
    writes: dict[str, str] = field(default_factory=dict)      # final path -> new text
    sources: dict[str, str] = field(default_factory=dict)     # final path -> path it is made from
    before: dict[str, str] = field(default_factory=dict)      # path -> sha256 when planned
    moves: dict[str, str] = field(default_factory=dict)       # old -> new (text unchanged)
    delete: list[str] = field(default_factory=list)
    days: list[str] = field(default_factory=list)
    embedded: list[str] = field(default_factory=list)         # text shas indexed before
    summary: str = ""

    def to_json(self) -> dict:
        return {"format": 1, **{k: getattr(self, k) for k in self.__dataclass_fields__}}


def path_of(lay: Layout) -> os.PathLike:
    return lay.state_dir / FILE


def sha(lay: Layout, rel: str) -> str | None:
    path = lay.root / rel
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def save(lay: Layout, journal: Journal) -> None:
    """The commit point: after this, running forget again finishes this plan."""
    atomic_write_json(path_of(lay), journal.to_json())


def load(lay: Layout) -> Journal | None:
    data = read_json(path_of(lay), None)
    if data is None:
        return None
    if not isinstance(data, dict) or data.get("format") != 1:
        raise ValueError(f"{path_of(lay)} is not a forget plan this version reads: restore it from "
                         "a backup, or delete it and run the forget again")
    return Journal(**{k: v for k, v in data.items() if k != "format"})


def carry_out(lay: Layout, journal: Journal) -> tuple[list[str], list[str]]:
    """(files now as planned, files left alone because they changed since they were planned).
    Writes first, then moves, then deletions: a file is never deleted before its replacement
    exists."""
    done, changed = [], []
    for rel, text in sorted(journal.writes.items()):
        source = journal.sources.get(rel, rel)
        target = safe_path(lay.root, rel)
        if target.is_file() and target.read_text(encoding="utf-8", errors="surrogateescape") == text:
            done.append(rel)
        elif sha(lay, source) == journal.before.get(source):
            atomic_write_text(target, text)
            done.append(rel)
        else:
            changed.append(source)
    for old, new in sorted(journal.moves.items()):
        source, target = safe_path(lay.root, old), safe_path(lay.root, new)
        if source.exists() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
        done.append(new)
    moved_from = {journal.sources[r] for r in done if journal.sources.get(r, r) != r}
    for rel in sorted(journal.delete):
        path = safe_path(lay.root, rel)
        if not path.exists():
            continue
        if rel in journal.before and sha(lay, rel) != journal.before[rel] and rel not in moved_from:
            changed.append(rel)
            continue
        if rel in {journal.sources.get(r, r) for r in journal.writes} and rel not in moved_from:
            continue  # its new version was not written: keep the old one
        path.unlink()
        done.append(rel)
    return sorted(set(done)), sorted(set(changed))


def _refresh_days(lay: Layout, days: list[str] | None) -> None:
    """The day indexes of `days` (None: of every date, after a forget of an older version that
    was killed) list their notes as they are now."""
    if days is None:
        days = [p.name for p in (lay.root / lay.daily).glob("*") if p.is_dir()]
    for day in sorted(days):
        when = date_of(f"{lay.daily}/{day}/x.md")
        if when:
            refresh_day_index(lay, when)


def _rebuild_index(settings: Settings, lay: Layout, store: IndexStore, embedded_before: set[str]) -> None:
    """The changed files' index rows are replaced; no old LanceDB version, keyword generation or
    cached vector of a forgotten text is kept."""
    run_index(settings, delta=False)  # a delta would keep its main segment, which holds the text
    store.compact(keep_seconds=0)  # deleted rows leave the fragments (an index built now lacks them)
    store.rebuild_key_indexes()
    store.compact(keep_seconds=0)  # and the old key index files go
    for folder in sorted((lay.index_dir / "keyword").glob("*/")):
        keyword.drop_old_generations(folder)
    EmbeddingCache(embedding_cache_dir(settings)).forget(embedded_before - store.text_shas())


PENDING = "forget_pending"  # left by a forget of an older version killed before its index rebuild


def remove_temp_files(lay: Layout) -> list[str]:
    """Temp files of atomic writes a killed process left (`.<name>.<random>.tmp`); the caller
    holds the workspace lock, so none is in use."""
    gone = []
    for folder, _dirs, names in os.walk(lay.root):
        for name in names:
            if name.startswith(".") and name.endswith(".tmp"):
                path = os.path.join(folder, name)
                os.unlink(path)
                gone.append(os.path.relpath(path, lay.root))
    return gone


def finish(settings: Settings, lay: Layout, journal: Journal) -> tuple[list[str], list[str]]:
    """Carry out a saved plan to its end (again after a kill: each step is idempotent), then
    remove it."""
    done, changed = carry_out(lay, journal)
    remove_empty_dirs(lay.root, [*journal.moves, *journal.delete])
    _refresh_days(lay, journal.days)
    store = open_store(lay, settings)
    _rebuild_index(settings, lay, store, set(journal.embedded))
    kept = sorted(rel for rel in done if (lay.root / rel).exists())
    append_event(lay, "forget", kept or ["(forgotten)"], journal.summary)  # names no removed file
    path_of(lay).unlink()
    return done, changed


def finish_pending(settings: Settings) -> list[str]:
    """Finish what a killed forget left: its saved plan carried out to the end, temp files
    removed (the caller holds the workspace lock). Returns what it says about it, [] if there
    was nothing."""
    lay = layout(settings)
    said = []
    if remove_temp_files(lay):
        said.append("removed temp files a killed write left")
    journal = load(lay)
    if journal is not None:
        _done, changed = finish(settings, lay, journal)
        said.append("finished the forget a kill interrupted")
        said += [f"left {rel} as it is: it changed after the killed forget planned it (run the "
                 "forget again)" for rel in changed]
    elif (lay.state_dir / PENDING).exists():
        store = open_store(lay, settings)
        _refresh_days(lay, None)
        _rebuild_index(settings, lay, store, store.text_shas())
        (lay.state_dir / PENDING).unlink()
        said.append("rebuilt the index a killed forget left behind")
    return said
