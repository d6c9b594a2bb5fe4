"""Delta segments of the search snapshot: a small change searchable without rebuilding BM25, at a
cost that does not grow with the changes made before it.

Each small change is written once as its own immutable delta segment (`seg-<random>/` beside the
generations: the changed files' rows with their cached terms in `rows.arrow`, their links, files
and vectors, and in meta.json its level and the paths whose rows in everything older it
replaces). A delta generation is then only a manifest: its meta.json names its base (a main
segment) and its delta segments in order, oldest first. Segments are merged in levels (LSM,
size-tiered): a new segment is level 0, and whenever the last `MERGE_FAN` segments have one
level they are merged into one of the next level, so a change rewrites each row about
log_4(changes) times in all and a snapshot holds a few segments per level. Segment names are
never reused, so a reader keeps what it read of a segment (its rows, BM25 parts, row groups:
stores.levels) and a new generation costs it only the segments it has not read; which rows are
replaced is worked out from the previous read's masks and the new segments' paths
(`levels.replaced_masks`). `memflow index` or a delta past `delta_limit` live rows compacts (a
full build). A segment a crashed writer left is named by no generation: nothing reads it, and
a later sweep removes it (`keyword.drop_unnamed_segments`).

Scores equal a full rebuild's: the main segment keeps each posting's term frequency and each
document's length, and `postings.MergedPostings` recomputes BM25 with the merged statistics (live
documents, their average length, per-term document frequency over live rows of every segment) in
the same floating-point order as `postings.bm25_parts` (tests/test_delta_segments.py).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa

from memflow.tasks.stores import keyword, rowmaps
from memflow.tasks.stores.files import fsync_tree
from memflow.tasks.stores.keyword import KeywordIndex
from memflow.tasks.stores.levels import DeltaSegment, generation_segments, live_union, remember, segment_of

DELTA_MAX_ROWS = 2000  # a delta past this (or past a quarter of the main segment) is compacted
MERGE_FAN = 4  # this many delta segments of one level are merged into one of the next level
PREFIX = keyword.SEGMENT_PREFIX


def delta_limit(main_rows: int) -> int:
    """Live rows a delta may hold before the next change compacts: merging statistics stays
    cheap below it; a small workspace rebuilds whole (it is cheap)."""
    return min(DELTA_MAX_ROWS, max(64, main_rows // 4))


def delta_rows(index: KeywordIndex) -> int:
    """Live rows of `index`'s delta segments (0 for a main segment)."""
    return 0 if index.main is None else int(index.alive[index.main.size:].sum())


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
    links = links.select(keyword.LINK_COLUMNS).combine_chunks()
    files = files.select(keyword.FILE_COLUMNS).combine_chunks()
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
    segment = segment_of(path.name, meta, rows, links, files, vectors, has_vector, like)
    remember(folder, segment)
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
    before = int(current.alive.sum()) if current.alive is not None else current.size
    live = before - len(replaced) + docs.num_rows
    meta = {**main.meta, "base": main.generation, "segments": [[s.name, s.level] for s in held],
            "delta_docs": delta_rows(current) - int(np.sum(replaced >= main.size)) + docs.num_rows,
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


