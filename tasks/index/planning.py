"""Index planning (pure): files on disk vs the catalog -> what to chunk, drop or keep.

sha256 decides; size + mtime is only a shortcut that lets the caller skip hashing a file whose
stat matches the catalog under the same pipeline version.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memflow.schemas.tables import CatalogFile


@dataclass(frozen=True)
class DiskFile:
    path: str
    size: int
    mtime_ns: int
    sha256: str | None = None  # None: stat matched the catalog, hashing was skipped


@dataclass
class IndexPlan:
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)  # same content, new stat: refresh the row
    sizes: dict[str, int] = field(default_factory=dict)  # bytes of each added or modified file

    @property
    def changed(self) -> bool:
        return bool(self.added or self.modified or self.deleted)


def needs_hash(disk: DiskFile, known: CatalogFile | None, pipeline: str) -> bool:
    return (known is None or known.pipeline != pipeline or known.size != disk.size
            or known.mtime_ns != disk.mtime_ns)


def plan_index(disk: dict[str, DiskFile], catalog: dict[str, CatalogFile], pipeline: str) -> IndexPlan:
    plan = IndexPlan()
    for path in sorted(disk):
        now, known = disk[path], catalog.get(path)
        if known is None:
            plan.added.append(path)
            plan.sizes[path] = now.size
        elif known.pipeline != pipeline:
            plan.modified.append(path)
            plan.sizes[path] = now.size
        elif now.sha256 is None or now.sha256 == known.sha256:
            plan.unchanged.append(path)
            if now.sha256 is not None and (now.size, now.mtime_ns) != (known.size, known.mtime_ns):
                plan.touched.append(path)
        else:
            plan.modified.append(path)
            plan.sizes[path] = now.size
    plan.deleted = sorted(set(catalog) - set(disk))
    return plan
