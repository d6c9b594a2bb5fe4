"""Delta segments as a reader holds them (stores.segments writes them): each read once per
process and kept while a generation read names it (a segment's name is never reused), the masks
of the rows later segments replace carried from one read to the next, and the live rows of
consecutive segments as one (what a merge writes and the tables take). Imported by the keyword
snapshot's reader; imports neither it nor the writer."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memflow.tasks.stores import rowmaps
from memflow.tasks.stores.postings import bm25_parts

KeywordIndex = Any  # a keyword.KeywordIndex; not imported, keyword imports this module
KEYED = (("docs", "path"), ("links", "source"), ("files", "path"))  # how each table names its file
EXTRA = ["terms", "counted"]  # rows.arrow: a segment's docs rows, then these


def read_arrow(path: Path) -> pa.Table:
    return pa.ipc.open_file(pa.memory_map(str(path))).read_all()


def same_schema(table: pa.Table, like: pa.Table) -> pa.Table:
    return table.select(like.column_names).cast(like.schema)


@dataclass(eq=False)
class DeltaSegment:
    """One delta segment as read (never changes once written): its rows, the paths it replaces
    in older segments, and what a reader derives from them once (BM25 parts, row groups)."""
    name: str
    level: int
    docs: pa.Table
    terms: pa.Array
    counted: np.ndarray
    links: pa.Table
    files: pa.Table
    removed: list[str]
    vectors: np.ndarray | None = None
    has_vector: np.ndarray | None = None
    masks: dict = field(default_factory=dict)  # rowmaps' row groups
    _parts: tuple | None = None
    _ids: dict[str, int] | None = None

    @property
    def size(self) -> int:
        return self.docs.num_rows

    def parts(self) -> tuple:
        """(bm25_parts of its terms or None, each row's length)."""
        if self._parts is None:
            lengths = pc.fill_null(pc.list_value_length(self.terms), 0).to_numpy(zero_copy_only=False)
            self._parts = (bm25_parts(self.terms), lengths.astype(np.int32))
        return self._parts

    def row_of(self, chunk_id: str) -> int | None:
        if self._ids is None:
            self._ids = {cid: n for n, cid in enumerate(self.docs.column("id").to_pylist())}
        return self._ids.get(chunk_id)


_READ: dict[Path, dict[str, DeltaSegment]] = {}  # keyword folder -> segment name -> as read (never reused)


def open_segment(path: Path, like: KeywordIndex | None = None) -> DeltaSegment:
    """The delta segment in `path`, read once per process (tables cast to `like`'s schemas)."""
    held = _READ.setdefault(path.parent, {})
    found = held.get(path.name)
    if found is None:
        found = held[path.name] = _read_segment(path, like)
    return found


def _read_segment(path: Path, like: KeywordIndex | None) -> DeltaSegment:
    read = read_arrow
    meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    vectors = has = None
    if (path / "vectors.npy").exists():
        vectors, has = np.load(path / "vectors.npy"), np.load(path / "has_vector.npy")
    return segment_of(path.name, meta, read(path / "rows.arrow"), read(path / "links.arrow"),
                    read(path / "files.arrow"), vectors, has, like)


def segment_of(name: str, meta: dict, rows: pa.Table, links: pa.Table, files: pa.Table,
             vectors: np.ndarray | None, has: np.ndarray | None, like: KeywordIndex | None) -> DeltaSegment:
    docs = rows.drop_columns(EXTRA)
    if like is not None:
        docs, links = same_schema(docs, like.docs), same_schema(links, like.links)
        files = same_schema(files, like.files)
    return DeltaSegment(name, int(meta["level"]), docs, rows.column("terms").combine_chunks(),
                        rows.column("counted").to_numpy(zero_copy_only=False).astype(bool), links, files,
                        meta["removed"], vectors, has)


def forget_read(folder: Path, keep: set[str]) -> None:
    """Drop this process's reads of `folder`'s segments that are not in `keep`."""
    held = _READ.get(folder, {})
    for name in held.keys() - keep:
        del held[name]


def remember(folder: Path, segment: DeltaSegment) -> None:
    """Keep `segment`, just written in `folder`, as this process's read of it."""
    _READ.setdefault(folder, {})[segment.name] = segment


def live_union(run: list[DeltaSegment]) -> tuple:
    """(removed, docs, terms, counted, links, files, vectors, has_vector) of consecutive
    segments `run` as one: each one's rows less those a later one in `run` replaces; vectors
    None unless every one has them."""
    later: set[str] = set()
    kept = []
    for segment in reversed(run):
        drop = pa.array(sorted(later), pa.string())
        masks = [_array(pc.invert(pc.is_in(getattr(segment, table).column(column), value_set=drop)))
                 for table, column in KEYED]
        kept.append((segment, masks))
        later.update(segment.removed)
    kept.reverse()
    docs = pa.concat_tables([s.docs.filter(m[0]) for s, m in kept])
    terms = pa.concat_arrays([s.terms.filter(m[0]) for s, m in kept])
    keep_np = [m[0].to_numpy(zero_copy_only=False) for _, m in kept]
    counted = np.concatenate([s.counted[k] for (s, _), k in zip(kept, keep_np)])
    links = pa.concat_tables([s.links.filter(m[1]) for s, m in kept])
    files = pa.concat_tables([s.files.filter(m[2]) for s, m in kept])
    vectors = has = None
    if all(s.vectors is not None for s in run):
        vectors = np.concatenate([s.vectors[k] for (s, _), k in zip(kept, keep_np)])
        has = np.concatenate([s.has_vector[k] for (s, _), k in zip(kept, keep_np)])
    return sorted(later), docs, terms, counted, links, files, vectors, has


def _array(mask) -> pa.Array:
    if isinstance(mask, pa.ChunkedArray):
        return mask.combine_chunks() if mask.num_chunks else pa.array([], pa.bool_())
    return mask


def replaced_masks(main: KeywordIndex, segs: list[DeltaSegment], previous: KeywordIndex | None) -> dict:
    """Per table, one mask per part (main, then each segment): False for rows a later segment
    replaces. Within a base segments are only appended and merged at the end (a merge replaces
    what its inputs did), so `previous`'s masks of the parts both share, less the rows the
    segments new since replace, are the answer; else every segment is applied."""
    common = 0
    if previous is not None and previous.main is main and previous.keeps is not None:
        old = previous.segments
        while common < min(len(old), len(segs)) and old[common].name == segs[common].name:
            common += 1
        gone, new = old[common:], segs[common:]
        covered = set().union(*(s.removed for s in gone)) <= set().union(*(s.removed for s in new))
        if {s.name for s in gone} & {s.name for s in new} or not covered:  # not merged into the new ones
            previous, common = None, 0
    else:
        previous = None
    keeps = {}
    for table, column in KEYED:
        if previous is not None:
            parts = [m.copy() for m in previous.keeps[table][:common + 1]]
        else:
            parts = [np.ones(getattr(main, table).num_rows, dtype=bool)]
        holders = [main, *segs[:common]]
        for segment in segs[common:]:
            if segment.removed:
                for holder, mask in zip(holders, parts):
                    mask[rowmaps.rows_of(holder, table, column, segment.removed)] = False
            holders.append(segment)
            parts.append(np.ones(getattr(segment, table).num_rows, dtype=bool))
        keeps[table] = parts
    return keeps


def merged_counted(main: KeywordIndex, segs: list[DeltaSegment]) -> np.ndarray | None:
    """Which rows of main + the segments make the BM25 statistics (None: all)."""
    ours = main.retriever.counted if main.retriever is not None else None
    if ours is None and all(s.counted.all() for s in segs):
        return None
    return np.concatenate([ours if ours is not None else np.ones(main.size, dtype=bool),
                           *(s.counted for s in segs)])


def generation_segments(gen: Path) -> list[DeltaSegment]:
    """The delta segments a delta generation names, read from disk as written (no cast)."""
    meta = json.loads((gen / "meta.json").read_text(encoding="utf-8"))
    if meta.get("base") and "segments" not in meta:
        raise LookupError(f"the delta generation {gen} was written by an older version")
    held = _READ.get(gen.parent, {})
    names = [name for name, _level in meta.get("segments", [])]
    return [held.get(name) or _read_segment(gen.parent / name, None) for name in names]


