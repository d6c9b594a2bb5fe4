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

from memflow.tasks.ground.workspace import Layout, safe_path
from memflow.tasks.stores.files import atomic_write_json, atomic_write_text, read_json

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
