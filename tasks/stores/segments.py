"""Delta segments of the search snapshot: a small change searchable without rebuilding BM25, at a
cost that does not grow with the changes made before it.

Each small change is written once as its own immutable delta segment (`seg-<random>/` beside the
generations: the changed files' rows with their cached terms (`rows.arrow`), links, files,
vectors, and in meta.json its level and the paths whose rows in everything older it replaces). A delta generation
is then only a manifest: its meta.json names its base (a main segment) and its delta segments
in order, oldest first. Segments are merged in levels (LSM, size-tiered): a new segment is
level 0, and whenever the last `MERGE_FAN` segments have one level they are merged into one of
the next level, so a change rewrites each row about log_4(changes) times in all and a snapshot
holds a few segments per level. Segment names are never reused, so a reader caches what it read
of a segment (its rows, BM25 parts, row groups: `open_segment`) and a new generation costs it
only the segments it has not read; which rows are replaced is worked out from the previous
generation's masks and the new segments' `removed` (`_keeps`). `memflow index` or a delta past
`delta_limit` live rows compacts (a full build). A segment a crashed writer left is named by no
generation: nothing reads it, and the next publish removes it (`keyword.drop_unnamed_segments`).

Scores equal a full rebuild's: the main segment keeps each posting's term frequency and each
document's length, and `postings.MergedPostings` recomputes BM25 with the merged statistics (live
documents, their average length, per-term document frequency over live rows of every segment) in
the same floating-point order as `postings.bm25_parts` (tests/test_delta_segments.py).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memflow.tasks.stores import keyword, rowmaps
from memflow.tasks.stores.files import fsync_tree
from memflow.tasks.stores.keyword import KeywordIndex
from memflow.tasks.stores.postings import MergedPostings, bm25_parts

DELTA_MAX_ROWS = 2000  # a delta past this (or past a quarter of the main segment) is compacted
MERGE_FAN = 4  # this many delta segments of one level are merged into one of the next level
PREFIX = keyword.SEGMENT_PREFIX
KEYED = (("docs", "path"), ("links", "source"), ("files", "path"))  # how each table names its file


def delta_limit(main_rows: int) -> int:
    """Live rows a delta may hold before the next change compacts: merging statistics stays
    cheap below it; a small workspace rebuilds whole (it is cheap)."""
    return min(DELTA_MAX_ROWS, max(64, main_rows // 4))


def delta_rows(index: KeywordIndex) -> int:
    """Live rows of `index`'s delta segments (0 for a main segment)."""
    return 0 if index.main is None else int(index.alive[index.main.size:].sum())


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
    read = keyword._read_arrow
    meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    vectors = has = None
    if (path / "vectors.npy").exists():
        vectors, has = np.load(path / "vectors.npy"), np.load(path / "has_vector.npy")
    return _segment(path.name, meta, read(path / "rows.arrow"), read(path / "links.arrow"),
                    read(path / "files.arrow"), vectors, has, like)


def _segment(name: str, meta: dict, rows: pa.Table, links: pa.Table, files: pa.Table,
             vectors: np.ndarray | None, has: np.ndarray | None, like: KeywordIndex | None) -> DeltaSegment:
    docs = rows.select(keyword.DOC_COLUMNS)
    if like is not None:
        docs, links, files = (keyword.same_schema(docs, like.docs), keyword.same_schema(links, like.links),
                              keyword.same_schema(files, like.files))
    return DeltaSegment(name, int(meta["level"]), docs, rows.column("terms").combine_chunks(),
                        rows.column("counted").to_numpy(zero_copy_only=False).astype(bool), links, files,
                        meta["removed"], vectors, has)


def forget_read(folder: Path, keep: set[str]) -> None:
    """Drop this process's reads of `folder`'s segments that are not in `keep`."""
    held = _READ.get(folder, {})
    for name in held.keys() - keep:
        del held[name]


def write_segment(folder: Path, level: int, docs: pa.Table, terms: pa.Array, counted: np.ndarray,
                  links: pa.Table, files: pa.Table, removed: list[str], like: KeywordIndex,
                  vectors: np.ndarray | None = None, has_vector: np.ndarray | None = None,
                  normalise: bool = True) -> DeltaSegment:
    """Write a new delta segment (named by no generation until one is published naming it):
    its rows with their terms (`rows.arrow`), links, files, vectors and, last, meta.json (its
    level and the paths it replaces); returns it as a read of it gives it (kept as read)."""
    path = folder / f"{PREFIX}{uuid.uuid4().hex[:16]}"
    path.mkdir(parents=True)
    rows = docs.select(keyword.DOC_COLUMNS).append_column("terms", pa.array(terms, pa.list_(pa.string())))
    rows = rows.append_column("counted", pa.array(counted, pa.bool_())).combine_chunks()
    links, files = links.select(keyword.LINK_COLUMNS).combine_chunks(), files.select(keyword.FILE_COLUMNS).combine_chunks()
    keyword._write_arrow(path / "rows.arrow", rows)
    keyword._write_arrow(path / "links.arrow", links)
    keyword._write_arrow(path / "files.arrow", files)
    if vectors is not None:  # unit rows (a merge's are already: saved as they are, bit for bit)
        vectors = keyword.unit_rows(vectors) if normalise else np.asarray(vectors, dtype=np.float32)
        has_vector = np.asarray(has_vector, dtype=bool)
        np.save(path / "vectors.npy", vectors)
        np.save(path / "has_vector.npy", has_vector)
    meta = {"level": level, "rows": docs.num_rows, "removed": removed}
    (path / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    segment = _segment(path.name, meta, rows, links, files, vectors, has_vector, like)
    _READ.setdefault(folder, {})[path.name] = segment
    return segment


def publish_delta(folder: Path, current: KeywordIndex, paths: set[str], docs: pa.Table,
                  terms: pa.Array, links: pa.Table, files: pa.Table,
                  vectors: np.ndarray | None = None, has_vector: np.ndarray | None = None,
                  tables_behind: bool = False, counted: np.ndarray | None = None,
                  lazy: bool = False) -> Path:
    """Publish `current` with every row of `paths` replaced by `docs` (DOC_COLUMNS, with their
    `terms`), `links` and `files` (the new rows of those paths; none for a deleted file) as a
    new delta segment on `current`'s (merged in levels with the latest ones); returns the new
    generation. `vectors`/`has_vector` are required when the snapshot has vectors; `counted`:
    which of `docs` make the BM25 statistics (None: all, see `postings.bm25_parts`).
    `tables_behind`: the LanceDB tables have not taken these rows (`delta_tables` gives what
    they lack; `mark_tables_level` once they have). `lazy`: nothing is fsynced
    (`keyword.publish`)."""
    main = current.main or current
    counted = np.ones(docs.num_rows, dtype=bool) if counted is None else np.asarray(counted, dtype=bool)
    gen_of_current = None
    if current.main is not None:
        gen_of_current = keyword.current_dir(folder)
        if gen_of_current is None or gen_of_current.name != current.generation:
            raise RuntimeError(f"the search snapshot in {folder} changed under a delta update")
    with_vectors = vectors is not None and main.vectors is not None
    if with_vectors:
        vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, main.vectors.shape[1])
    written = [write_segment(folder, 0, docs, terms, counted, links, files, sorted(paths), main,
                             vectors if with_vectors else None, has_vector)]
    held = [*current.segments, written[0]]
    while len(held) >= MERGE_FAN and len({s.level for s in held[-MERGE_FAN:]}) == 1:
        written.append(merge(folder, held[-MERGE_FAN:], main))
        held[-MERGE_FAN:] = [written[-1]]
    replaced = rowmaps.live_rows(current, "docs", "path", sorted(paths))
    live = (int(current.alive.sum()) if current.alive is not None else current.size) - len(replaced) + docs.num_rows
    meta = {**main.meta, "base": main.generation, "segments": [[s.name, s.level] for s in held],
            "delta_docs": delta_rows(current) - int(np.sum(np.asarray(replaced) >= main.size)) + docs.num_rows,
            "docs": live}
    if tables_behind or (current.main is not None and tables_lag(gen_of_current)):  # cumulative
        meta["tables_behind"] = True
    if with_vectors:
        held_vectors = current.has_vector if current.alive is None else current.has_vector & current.alive
        rows = int(held_vectors.sum()) - int(current.has_vector[replaced].sum()) + int(np.sum(has_vector))
        meta["vectors"] = {**meta["vectors"], "rows": rows}
    durable = bool(meta.get("tables_behind")) and not lazy
    if durable:  # the segments reach the disk before a generation names them
        for segment in written:
            fsync_tree(folder / segment.name)
    gen = keyword.new_generation(folder)
    return keyword.publish(folder, gen, meta, durable=durable, lazy=lazy)


def merge(folder: Path, run: list[DeltaSegment], like: KeywordIndex) -> DeltaSegment:
    """One segment of the next level holding the live rows of `run` (consecutive segments,
    oldest first) and replacing what any of them replaced."""
    removed, docs, terms, counted, links, files, vectors, has = live_union(run)
    return write_segment(folder, run[0].level + 1, docs, terms, counted, links, files, removed, like,
                         vectors, has, normalise=False)


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


def load_delta(gen: Path, meta: dict, main: KeywordIndex, previous: KeywordIndex | None = None) -> KeywordIndex:
    """The index a delta generation names: `main` (its base, read or reused) plus its delta
    segments, each read once per process; `previous` (an index read before on the same base)
    lends its masks of replaced rows, so only the segments new since are looked up."""
    if "segments" not in meta:
        raise keyword.SnapshotOutdated(f"the delta generation {gen} was written by an older version")
    segs = [open_segment(gen.parent / name, main) for name, _level in meta["segments"]]
    forget_read(gen.parent, {s.name for s in segs})
    keeps = _keeps(main, segs, previous)
    alive = np.concatenate(keeps["docs"])
    starts = {table: list(np.cumsum([getattr(main, table).num_rows] + [getattr(s, table).num_rows for s in segs])[:-1])
              for table, _ in KEYED}
    postings = MergedPostings(main.retriever, main.size, alive,
                              [(int(start), *s.parts()) for s, start in zip(segs, starts["docs"])],
                              _merged_counted(main, segs))
    link_keep, file_keep = np.concatenate(keeps["links"]), np.concatenate(keeps["files"])
    delta_vectors, has_vector = None, None
    if main.vectors is not None and all(s.vectors is not None for s in segs):
        delta_vectors = np.concatenate([s.vectors for s in segs])
        has_vector = np.concatenate([main.has_vector, *(s.has_vector for s in segs)])
    return KeywordIndex(postings, pa.concat_tables([main.docs, *(s.docs for s in segs)]), meta, main.vectors,
                        has_vector, pa.concat_tables([main.links, *(s.links for s in segs)]),
                        pa.concat_tables([main.files, *(s.files for s in segs)]), generation=gen.name,
                        alive=alive, main=main, delta_vectors=delta_vectors,
                        link_new=np.where(link_keep, np.arange(len(link_keep)), -1),
                        file_new=np.where(file_keep, np.arange(len(file_keep)), -1),
                        segments=tuple(segs), starts=starts, keeps=keeps)


def _keeps(main: KeywordIndex, segs: list[DeltaSegment], previous: KeywordIndex | None) -> dict:
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


def _merged_counted(main: KeywordIndex, segs: list[DeltaSegment]) -> np.ndarray | None:
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
        raise keyword.SnapshotOutdated(f"the delta generation {gen} was written by an older version")
    held = _READ.get(gen.parent, {})
    return [held.get(name) or _read_segment(gen.parent / name, None) for name, _level in meta.get("segments", [])]


TABLES_LEVEL = "tables-level"  # in a `tables_behind` delta generation once the tables took its rows


def delta_tables(gen: Path) -> tuple | None:
    """What the LanceDB tables lack of delta generation `gen`: (the paths it replaces, their
    chunks rows with terms, links rows, files rows, (vectors, has_vector) or None); None when
    they have it all (a main segment, a delta whose tables were written first, or one marked
    level since)."""
    if not tables_lag(gen):
        return None
    removed, docs, terms, _counted, links, files, vectors, has = live_union(generation_segments(gen))
    chunks = docs.select(keyword.CHUNK_COLUMNS).append_column("terms", terms)
    return removed, chunks, links, files, (None if vectors is None else (vectors, has))


def tables_lag(gen: Path) -> bool:
    """Delta generation `gen` holds rows the tables have not taken."""
    meta = json.loads((gen / "meta.json").read_text(encoding="utf-8"))
    return bool(meta.get("base") and meta.get("tables_behind")) and not (gen / TABLES_LEVEL).exists()


def mark_tables_level(gen: Path) -> None:
    (gen / TABLES_LEVEL).write_text("the LanceDB tables hold this delta's rows\n", encoding="utf-8")


def delta_layers(gen: Path, main_docs: pa.Table) -> list[str]:
    """The layer of every live row of delta generation `gen` on a main segment's `main_docs`."""
    removed, docs, *_ = live_union(generation_segments(gen))
    live = pc.invert(pc.is_in(main_docs.column("path"), value_set=pa.array(removed, pa.string())))
    return main_docs.filter(live).column("layer").to_pylist() + docs.column("layer").to_pylist()
