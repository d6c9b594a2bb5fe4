"""Stage 2, index: Markdown under daily/ and digest/ -> chunks, links, BM25 and vectors.

`run_index` plans by content hash (`plan_index`), re-chunks only added and modified files and
writes in an order that keeps the index consistent if the process dies: a file's chunks and
links first, its `files` row last; the keyword index is rebuilt whenever the chunks table moved
past the version it was built from. The caller holds the workspace lock.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from itertools import islice

import numpy as np
import pyarrow as pa

from memflow.schemas.settings import Settings
from memflow.schemas.tables import CHUNKS, FILES, LINKS, SCHEMA_VERSION, IndexSummary
from memflow.tasks.ground import durability
from memflow.tasks.ground.convert import READABLE_SUFFIXES
from memflow.tasks.ground.events import JOURNAL, append_event
from memflow.tasks.ground.memory import few_collections, lean_allocators
from memflow.tasks.ground.tokenize import tokenizer_id
from memflow.tasks.ground.workspace import Layout, file_stats, layout
from memflow.tasks.index.parallel import Workers, start_workers, worker_count
from memflow.tasks.index.planning import DiskFile, IndexPlan, needs_hash, plan_index
from memflow.tasks.index.rows import ParsedPart, file_rows_of, parse_part
from memflow.tasks.index.superseded import superseded_lines
from memflow.tasks.index.statistics import counted_rows
from memflow.tasks.index.vectors import (
    check_dimension,
    embedding_cache_dir,
    embedding_input,
    forget_dimension,
    known_dims,
    text_sha,
    vector_rows,
)
from memflow.tasks.stores import keyword, segments
from memflow.tasks.stores.files import (
    NotRegular,
    atomic_write_json,
    atomic_write_text,
    read_json,
    read_regular,
)
from memflow.tasks.stores.lance import EmbeddingCache, IndexStore, rows_batch

log = logging.getLogger("memflow.index")
BATCH = 8192  # files per commit of the tables at most (one version per table per group)
GROUP_BYTES = 2 << 20  # file bytes per commit, at least: LanceDB holds a commit's rows until it ends
GROUPS = 4  # a run's files in this many commits at least (by bytes; more past GROUP_BYTES each)
ROWS_BATCH = 256  # files per Arrow record batch streamed into a commit
TERMS_VERSION = "4"  # 2: provenance links not searched (searchable_text); 3: speakers marked;
# 4: long messages and long note lines in pieces
COMPACT_EVERY, COMPACT_BIG = 20, 100  # index runs with writes / files changed in one run
Progress = Callable[[int], None]


def pipeline_version(settings: Settings) -> str:
    """Changes whenever chunks would come out differently: chunker, tokenizer, schema."""
    parts = (f"{SCHEMA_VERSION}|{settings.chunk_bytes}|{tokenizer_id(settings.keyword_tokenizer)}"
             f"|{TERMS_VERSION}|{settings.field_weight}")
    return hashlib.sha256(parts.encode()).hexdigest()[:12]


RESOURCE_SUFFIXES = READABLE_SUFFIXES


def indexed_files(lay: Layout, max_resource_bytes: int | None = None,
                  problems: dict[str, str] | None = None) -> dict[str, tuple[int, int]]:
    """Indexed files -> (size, mtime_ns): Markdown under daily/ and digest/, session logs
    (`session/dialog/*.jsonl`, searched as transcripts), and text resources under resource/ up
    to `max_resource_bytes`. What is left out (larger resources, symlink
    loops, FIFOs...) goes to `problems` with its reason."""
    problems = {} if problems is None else problems
    found = file_stats(lay, [lay.daily, lay.digest], problems=problems)
    found.update(file_stats(lay, [f"{lay.session}/dialog"], (".jsonl",), problems))
    for rel, (size, mtime) in file_stats(lay, [lay.resource], RESOURCE_SUFFIXES, problems).items():
        if max_resource_bytes is not None and size > max_resource_bytes:
            problems[rel] = (f"{size:,} bytes is over resource_index_max_bytes "
                             f"({max_resource_bytes:,})")
            continue
        found[rel] = (size, mtime)
    return found


def scan(lay: Layout, catalog: dict, pipeline: str, max_resource_bytes: int | None = None,
         problems: dict[str, str] | None = None,
         stats: dict[str, tuple[int, int]] | None = None) -> dict[str, DiskFile]:
    """Stat every indexed file (or take `stats`, `indexed_files`' answer); hash only those
    whose stat or pipeline differ from the catalog. A file that cannot be read is left out with
    its reason in `problems`. With an empty catalog (a first index) nothing is hashed: every file
    is added whatever its hash, and parsing it reads and hashes it (reading every file twice
    cost a 24,000-file cold index ~0.6-0.8 CPU seconds); one that cannot be read is left out then."""
    problems = {} if problems is None else problems
    stats = indexed_files(lay, max_resource_bytes, problems) if stats is None else stats
    disk = {}
    for rel, (size, mtime_ns) in sorted(stats.items()):
        entry = DiskFile(rel, size, mtime_ns)
        if catalog and needs_hash(entry, catalog.get(rel), pipeline):
            try:
                digest = hashlib.sha256(read_regular(lay.root / rel)).hexdigest()
            except NotRegular as exc:
                problems[rel] = exc.reason
                continue
            except OSError as exc:
                problems[rel] = f"cannot be read: {exc.strerror or exc}"
                continue
            entry = DiskFile(rel, size, mtime_ns, digest)
        disk[rel] = entry
    return disk


def commit_groups(paths: list[str], sizes: dict[str, int]) -> list[list[str]]:
    """`paths` in order, cut into the groups written in one commit each: at most BATCH files and,
    past the first file of a group, at most `group_bytes` of them (`sizes`; a file of unknown
    size counts nothing). LanceDB keeps the rows of a commit in memory until it ends, and a
    commit has a cost of its own: small runs are cut by GROUP_BYTES (a cold index of 4,800 notes
    in one group held ~33 MiB more than in groups of 2 MiB), larger ones in GROUPS parts, whose
    rows then weigh less than the search snapshot built after them (the peak of a large run)."""
    limit = group_bytes(sum(sizes.get(p, 0) for p in paths))
    groups: list[list[str]] = []
    group: list[str] = []
    size = 0
    for path in paths:
        grows = sizes.get(path, 0)
        if group and (size + grows > limit or len(group) >= BATCH):
            groups.append(group)
            group, size = [], 0
        group.append(path)
        size += grows
    return groups + [group] if group else groups


def group_bytes(total: int) -> int:
    """File bytes per commit for a run of `total` bytes (`commit_groups`)."""
    return max(GROUP_BYTES, -(-total // GROUPS))


def _batches(items: list[str], size: int) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


class ChunkBatches:
    """The chunk batches of parsed parts, as the store reads them; each part's files rows,
    links and problems are collected on the side, `chunks` counts the rows."""

    def __init__(self, parts: Iterable[ParsedPart], progress: Progress | None,
                 skipped: dict[str, str], warnings: dict[str, str]):
        self.parts, self.progress = parts, progress
        self.skipped, self.warnings = skipped, warnings
        self.file_rows: list[dict] = []
        self.links: list[pa.RecordBatch] = []
        self.chunks = 0

    def __iter__(self):
        for part in self.parts:
            self.file_rows.extend(part.files)
            if part.links:
                self.links.append(rows_batch(part.links, LINKS))
            self.skipped.update(part.skipped)
            self.warnings.update(part.warnings)
            if part.chunks:
                batch = rows_batch(part.chunks, CHUNKS)
                self.chunks += batch.num_rows
                yield batch
            if self.progress:
                self.progress(part.count)


def apply_changes(store: IndexStore, lay: Layout, settings: Settings, paths: list[str],
                  pipeline: str, progress: Progress | None = None,
                  skipped: dict[str, str] | None = None, warnings: dict[str, str] | None = None,
                  workers: Workers | None = None, sizes: dict[str, int] | None = None) -> int:
    """Re-chunk `paths`, each file inside a guard (a file that fails is left out with its reason
    in `skipped`); returns the number of chunks written. Written in groups (`commit_groups`, by
    the files' `sizes`), each one streamed append per table (chunks, links, then files rows: a
    crash before the files rows
    re-does the group), so the cost of a write does not grow with the table. A large run parses
    its files in worker processes (`workers`, started early, or `settings.index_workers`),
    written in the same order."""
    skipped = {} if skipped is None else skipped
    warnings = {} if warnings is None else warnings
    written = 0
    groups = commit_groups(paths, sizes or {})
    parts = (part for group in groups for part in _batches(group, ROWS_BATCH))
    work = partial(parse_part, lay, settings, pipeline)
    own = None if workers else start_workers(worker_count(settings.index_workers, len(paths)) - 1)
    with own or nullcontext():
        pool = workers or own
        parsed = pool.map(work, parts) if pool else map(work, parts)
        for group in groups:  # a group's parts, as `parts` cut them
            batches = ChunkBatches(islice(parsed, -(-len(group) // ROWS_BATCH)), progress, skipped, warnings)
            store.write_paths(group, batches, batches.links)  # links read after the chunks
            store.put_files(batches.file_rows)  # last: a crash before this line re-does the group
            written += batches.chunks
    return written


def rebuild_keyword(store: IndexStore, lay: Layout, settings: Settings) -> None:
    """Write a new search snapshot: BM25 over the chunks' cached terms, the rows a result shows,
    the link graph and file names and, with an embedding model on, the chunk vectors aligned to
    the same rows."""
    folder = keyword_dir(lay, settings)
    # The terms are read, scored and let go before the result rows are read (two projected
    # scans, same row order: checked by id), so the two are never held at once.
    scored = store.chunk_columns(["id", "terms", "path", "layer"])
    links = store.link_table()
    counted = counted_rows(lay, scored.column("path"), scored.column("layer"), links)
    parts = keyword.bm25_parts(scored.column("terms"), counted)
    ids = scored.column("id")
    del scored
    table = store.chunk_columns(keyword.CHUNK_COLUMNS).combine_chunks()  # one batch, as stored
    if not table.column("id").equals(ids):
        raise RuntimeError("the chunks table changed between two reads of one snapshot build")
    del ids
    meta: dict = {"tokenizer": settings.keyword_tokenizer, "tables": tables_shape()}
    matrix = has = None
    dims = known_dims(settings) if settings.embedding_model else None
    if dims:
        import pyarrow.compute as pc

        ids, stored = store.vector_matrix(settings.embedding_model, dims)
        where = pc.index_in(table.column("id"), value_set=ids)
        has = pc.is_valid(where).to_numpy(zero_copy_only=False)
        matrix = np.zeros((table.num_rows, dims), dtype=np.float32)
        if has.any():
            matrix[has] = stored[pc.drop_null(where).to_numpy()]
        meta["vectors"] = {"model": settings.embedding_model, "dims": dims, "rows": int(has.sum())}
    numbers, days, pieces = superseded_lines(table, links, lay.daily, lay.digest, lay.session)
    docs = table.append_column("superseded_lines", numbers).append_column("superseded_until", days) \
        .append_column("superseded_parts", pieces)
    del table
    keyword.build(folder, docs, None, meta, links, store.file_columns(keyword.FILE_COLUMNS),
                  matrix, has, parts=parts)


def tables_shape() -> str:
    """The columns of this version's files, chunks and links tables, hashed: a search snapshot
    built from tables of another shape is not planned against without opening them (opening
    them rebuilds such tables: `IndexStore`)."""
    names = "|".join(",".join(schema.names) for schema in (FILES, CHUNKS, LINKS))
    return hashlib.sha256(names.encode()).hexdigest()[:12]


def drop_old_snapshots(settings: Settings) -> None:
    """Remove every search snapshot generation but the current one (of every tokenizer)."""
    base = layout(settings).index_dir / "keyword"
    for folder in base.iterdir() if base.is_dir() else []:
        keyword.drop_old_generations(folder)


def snapshot_vectors_stale(lay: Layout, settings: Settings) -> bool:
    """The snapshot lacks the configured model's vectors (the model was switched on or changed)."""
    if not settings.embedding_model or not known_dims(settings):
        return False
    meta = keyword.read_meta(keyword_dir(lay, settings)) or {}
    return (meta.get("vectors") or {}).get("model") != settings.embedding_model


def vectors_incomplete(lay: Layout, settings: Settings) -> bool:
    """With an embedding model on, some row of the snapshot lacks that model's vector (turned on
    or changed since, or indexed without embedding): only a full run embeds them."""
    if not settings.embedding_model:
        return False
    return lacks_vectors(keyword.read_meta(keyword_dir(lay, settings)) or {}, settings.embedding_model)


def lacks_vectors(meta: dict, model: str) -> bool:
    """A snapshot of this `meta` lacks `model`'s vector for some live row."""
    held = meta.get("vectors") or {}
    return held.get("model") != model or held.get("rows") != meta.get("docs")


def keyword_dir(lay: Layout, settings: Settings):
    return lay.index_dir / "keyword" / tokenizer_id(settings.keyword_tokenizer)


def other_snapshots(lay: Layout, settings: Settings) -> list[str]:
    """The search snapshots of other tokenizers (another `keyword_tokenizer`, or a version before
    an upgrade that changed how text is cut): what a workspace has when this one's is missing."""
    folder = keyword_dir(lay, settings)
    return sorted(p.name for p in folder.parent.iterdir() if p.is_dir() and p != folder) \
        if folder.parent.is_dir() else []


DIRTY = "DIRTY"  # present from the first table write of a run until its keyword swap


def keyword_stale(lay: Layout, settings: Settings) -> bool:
    """The keyword index may not match the tables: a run died between its table writes and the
    keyword swap (the DIRTY marker is still there), the keyword folder is missing, or an older
    version wrote it."""
    meta = keyword.read_meta(keyword_dir(lay, settings))
    return ((lay.index_dir / DIRTY).exists() or meta is None or meta.get("format") != keyword.SNAPSHOT_FORMAT
            or bool(meta.get("base")) and "segments" not in meta)  # a delta written whole (before segments)


def has_delta(lay: Layout, settings: Settings) -> bool:
    """The search snapshot is a delta on a main segment (writes since the last full build): an
    index run with nothing new to index compacts it, so search reads one segment again (a delta
    costs every search a merged scoring of main's postings: ~1.5x at 72,000 files)."""
    gen = keyword.current_dir(keyword_dir(lay, settings))
    return gen is not None and keyword.base_of(gen) is not None


def open_store(lay: Layout, settings: Settings) -> IndexStore:
    """The live index tables, level with the search snapshot (`sync_tables`). Every reader of
    the tables opens them here; the caller holds the workspace lock."""
    store = IndexStore(lay.index_dir / LANCE)
    sync_tables(store, lay, settings)
    return store


def sync_tables(store: IndexStore, lay: Layout, settings: Settings) -> bool:
    """Write the rows the tables lack into them: a write indexed by name publishes its delta
    segment first and leaves the tables behind (`index_paths`), which scans, full builds,
    forget and the vectors read. Idempotent (a replace by path): a sync killed half-way is
    done again by the next one. True if it wrote."""
    gen = keyword.current_dir(keyword_dir(lay, settings))
    lacking = segments.delta_tables(gen) if gen is not None else None
    if lacking is None:
        return False
    removed, chunks, links, files, vectors = lacking
    store.write_paths(removed, chunks.cast(CHUNKS).to_batches(), links.to_pylist())
    if vectors is not None:
        _sync_vectors(store, gen, chunks, *vectors, settings)
    rows = files.select(FILES.names).cast(FILES).to_pylist()
    store.delete_files(sorted(set(removed) - {row["path"] for row in rows}))  # files gone since
    store.put_files(rows)
    segments.mark_tables_level(gen)
    return True


def _sync_vectors(store: IndexStore, gen, chunks: pa.Table, vectors: np.ndarray, has: np.ndarray,
                  settings: Settings) -> None:
    """The vectors a delta generation carries for its `chunks`, into the vectors table and the
    embedding cache (what a full build and a reindex read, so none is embedded again)."""
    held = json.loads((gen / "meta.json").read_text(encoding="utf-8")).get("vectors") or {}
    if held.get("model") != settings.embedding_model:
        return
    columns = chunks.select(["id", "path", "layer", "kind", "date", "text", "name", "description"])
    rows = [row for row, kept in zip(columns.to_pylist(), has.tolist()) if kept]
    made = vector_rows(rows, vectors[has])
    dims = int(vectors.shape[1])
    store.put_vectors(settings.embedding_model, dims, made)
    EmbeddingCache(embedding_cache_dir(settings)).put(settings.embedding_model, dims,
                                                      {row["text_sha"]: row["vector"] for row in made})


@dataclass
class IndexRun:
    """What an index run found before it writes: the tables' store, the pipeline version, the
    plan, the files the scan could not read, the writes since the last compaction, and the
    file-parsing workers started for a cold run (None: none started)."""
    store: IndexStore
    pipeline: str
    plan: IndexPlan
    scan_problems: dict[str, str]
    writes: int
    started: float
    workers: Workers | None = None


def prepare_run(settings: Settings, lay: Layout, lance_dir,
                found: tuple[dict[str, tuple[int, int]], dict[str, str]] | None = None) -> IndexRun:
    """Scan the workspace against the tables in `lance_dir` and plan the run (nothing written);
    `found`: the stat walk already made (`indexed_files` and its problems). With no tables yet
    every file is parsed: a large workspace's parsing workers start first, so that their start
    overlaps LanceDB's and the scan's (the caller closes them: `full_run`)."""
    with few_collections():  # the stat walk and the scan make a dict or tuple per file
        return _prepare_run(settings, lay, lance_dir, found)


def _prepare_run(settings: Settings, lay: Layout, lance_dir,
                 found: tuple[dict[str, tuple[int, int]], dict[str, str]] | None) -> IndexRun:
    started = time.perf_counter()
    lean_allocators()
    scan_problems: dict[str, str] = {}
    if found is None:
        stats = indexed_files(lay, settings.resource_index_max_bytes, scan_problems)
    else:
        stats, scan_problems = found[0], dict(found[1])
    count = 1 if lance_dir.exists() else worker_count(settings.index_workers, len(stats))
    workers = start_workers(count - 1)
    try:
        store = open_store(lay, settings) if lance_dir == lay.index_dir / LANCE else IndexStore(lance_dir)
        pipeline = pipeline_version(settings)
        catalog = store.catalog()
        plan = plan_index(scan(lay, catalog, pipeline, settings.resource_index_max_bytes, scan_problems, stats),
                          catalog, pipeline)
    except BaseException:
        if workers is not None:
            workers.close()
        raise
    return IndexRun(store, pipeline, plan, scan_problems, writes_after(lay, plan.changed), started, workers)


def writes_after(lay: Layout, changed: bool) -> int:
    """Index runs that wrote since the last LanceDB compaction, this one counted if it writes."""
    previous = read_json(lay.index_dir / WATERMARK, {}) or {}
    return previous.get("writes_since_compaction", 0) + (1 if changed else 0)


def full_run(settings: Settings, lay: Layout, run: IndexRun, progress_factory, embed: bool) -> IndexSummary:
    """Carry out a planned run with full table writes and a rebuilt search snapshot (the run's
    parsing workers, if any, are closed at the end)."""
    with run.workers or nullcontext(), few_collections():
        return _full_run(settings, lay, run, progress_factory, embed)


def _full_run(settings: Settings, lay: Layout, run: IndexRun, progress_factory, embed: bool) -> IndexSummary:
    store, plan, pipeline, writes = run.store, run.plan, run.pipeline, run.writes
    todo = plan.added + plan.modified
    checked = bool(embed and settings.embedding_model and todo) and check_dimension(settings)
    if plan.changed:
        atomic_write_text(lay.index_dir / DIRTY, pipeline)
    progress = progress_factory(len(todo)) if progress_factory and todo else None
    skipped: dict[str, str] = {}
    warnings: dict[str, str] = {}
    written, fresh = write_plan(store, lay, settings, plan, pipeline, progress, skipped, warnings, run.workers)
    skipped, warnings = remember_problems(lay, plan, run.scan_problems, skipped, warnings)
    vectors = 0
    if embed and settings.embedding_model:
        from memflow.tasks.index.vectors import backfill_vectors

        embedding = (lambda total: progress_factory(total, "chunk")) if progress_factory else None
        vectors = backfill_vectors(store, settings, checked, embedding)
    rebuilt = (plan.changed or vectors > 0 or keyword_stale(lay, settings)
               or snapshot_vectors_stale(lay, settings) or has_delta(lay, settings))
    if rebuilt:
        # Every write makes a LanceDB version: compact after a big change or every few runs,
        # not on each one-file edit (a compaction costs more than the edit).
        # A first build only appended: nothing to fold away, its few versions hold no old rows.
        if fresh:
            writes = 0
        elif writes >= COMPACT_EVERY or len(todo) + len(plan.deleted) >= COMPACT_BIG:
            store.compact()
            writes = 0
        rebuild_keyword(store, lay, settings)
        (lay.index_dir / DIRTY).unlink(missing_ok=True)
    summary = IndexSummary(
        added=len(plan.added), modified=len(plan.modified), deleted=len(plan.deleted),
        unchanged=len(plan.unchanged), chunks=written, total_chunks=store.count_chunks(),
        vectors=vectors, keyword_rebuilt=rebuilt, seconds=time.perf_counter() - run.started,
        skipped=skipped, warnings=warnings)
    write_watermark(lay, summary, writes)
    return summary


SMALL_CHANGE = 256  # files changed in one run up to which the snapshot takes a delta segment


def small_change(lay: Layout, settings: Settings, lance_dir, run: IndexRun) -> bool:
    """A run whose change the search snapshot can take as a delta segment (incremental.publish):
    a few files changed in the live tables, every file read, the snapshot current (with the
    model's vectors, when one is on), and no LanceDB compaction due. The delta's size limit
    still makes a full build."""
    plan = run.plan
    return (bool(plan.changed) and bool(plan.unchanged) and lance_dir == lay.index_dir / LANCE
            and not vectors_incomplete(lay, settings) and not run.scan_problems
            and len(plan.added) + len(plan.modified) + len(plan.deleted) <= SMALL_CHANGE
            and run.writes < COMPACT_EVERY and not keyword_stale(lay, settings))


def write_plan(store: IndexStore, lay: Layout, settings: Settings, plan, pipeline: str,
               progress: Progress | None, skipped: dict[str, str],
               warnings: dict[str, str], workers: Workers | None = None) -> tuple[int, bool]:
    """Carry out a plan's table writes: re-chunk added and modified files, drop deleted ones,
    refresh touched files rows. Returns (chunks written, whether the tables started empty:
    then every write was an append)."""
    store.append_only = fresh = not plan.deleted and not plan.unchanged and store.is_empty()
    try:
        written = apply_changes(store, lay, settings, plan.added + plan.modified, pipeline,
                                progress, skipped, warnings, workers, plan.sizes)
    finally:
        store.append_only = False
    if plan.deleted:
        store.delete_paths(plan.deleted)
        store.delete_files(plan.deleted)
    if plan.touched:
        rows = [r[0] for rel in plan.touched
                if (r := file_rows_of(lay, settings, rel, pipeline, skipped, warnings)) is not None]
        store.put_files(rows)
    if plan.changed:
        store.ensure_key_indexes()
    return written, fresh


PROBLEMS = "problems.json"  # files the index left out or read with a caveat (derived)


def remember_problems(lay: Layout, plan, scan_problems: dict[str, str], skipped: dict[str, str],
                      warnings: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Merge this run's problems with earlier ones still true (a refused file not changed since
    stays refused; one re-done, deleted or gone is dropped); new ones go to the inbox."""
    earlier = read_json(lay.index_dir / PROBLEMS, {}) or {}
    redone = set(plan.added) | set(plan.modified) | set(plan.touched) | set(plan.deleted)
    present = set(plan.unchanged)
    kept_skipped = {p: why for p, why in (earlier.get("skipped") or {}).items()
                    if p in present and p not in redone}
    kept_warnings = {p: why for p, why in (earlier.get("warnings") or {}).items()
                     if p in present and p not in redone}
    all_skipped = {**kept_skipped, **scan_problems, **skipped}
    all_warnings = {**kept_warnings, **warnings}
    new = {p: why for p, why in {**scan_problems, **skipped}.items()
           if (earlier.get("skipped") or {}).get(p) != why}
    if all_skipped or all_warnings or earlier:
        atomic_write_json(lay.index_dir / PROBLEMS, {"skipped": all_skipped, "warnings": all_warnings})
    if new:
        shown = "; ".join(f"{p}: {why}" for p, why in sorted(new.items())[:5])
        more = f" (+{len(new) - 5} more)" if len(new) > 5 else ""
        append_event(lay, "index", sorted(new), f"skipped {len(new)} file(s): {shown}{more}")
    return all_skipped, all_warnings


def index_problems(lay: Layout) -> dict:
    """What the last index runs left out or read with a caveat: {"skipped": {...}, "warnings": {...}}."""
    found = read_json(lay.index_dir / PROBLEMS, {}) or {}
    return {"skipped": found.get("skipped") or {}, "warnings": found.get("warnings") or {}}


LANCE, REINDEXING = "lance", "REINDEXING"


def reindex_pending(lay: Layout) -> bool:
    """A reindex was interrupted (search still answers from the index before it)."""
    return (lay.index_dir / REINDEXING).exists()


def after_crash(lay: Layout, settings: Settings) -> None:
    """Before an index run writes: index files written without fsync in an earlier boot may
    have been lost or torn by a crash (ground.durability), so a reindex from the files is put on
    record (the interrupted-reindex path completes it first); then this boot's index writes may
    skip fsync."""
    if durability.crashed(lay.index_dir):
        log.warning("the machine restarted since index files were last written without fsync: "
                    "the index is rebuilt from the files")
        atomic_write_text(lay.index_dir / REINDEXING, pipeline_version(settings))
        from memflow.tasks.index.freshness import NAMED, OLD_NAMED

        for name in (WATERMARK, NAMED, OLD_NAMED, JOURNAL):  # bookkeeping the rebuild writes anew: maybe torn
            (lay.index_dir / name).unlink(missing_ok=True)
        durability.recovered(lay.index_dir)
    durability.begin(lay.index_dir)


def run_reindex(settings: Settings, progress_factory=None) -> IndexSummary:
    """Rebuild the index from the files without taking search down: new tables are built beside
    the current ones (`lance.next/`), the search snapshot they give is swapped in as a new
    generation (searches answer from the old one until then), then the tables are swapped. A
    killed reindex leaves the old index serving and its marker makes the next run finish it."""
    lay = layout(settings)
    lay.index_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(lay.index_dir / REINDEXING, pipeline_version(settings))
    if durability.crashed(lay.index_dir):  # this rebuild is the repair
        durability.recovered(lay.index_dir)
    current, building, old = (lay.index_dir / LANCE, lay.index_dir / f"{LANCE}.next",
                              lay.index_dir / f"{LANCE}.old")
    for leftover in (building, old):
        if leftover.exists():
            shutil.rmtree(leftover)
    (lay.index_dir / PROBLEMS).unlink(missing_ok=True)
    if settings.embedding_model:
        forget_dimension(settings)  # learnt again: a model whose dimension changed is embedded anew
    summary = full_run(settings, lay, prepare_run(settings, lay, building), progress_factory, embed=True)
    if not summary.keyword_rebuilt:  # an empty workspace: still publish the (empty) snapshot
        rebuild_keyword(IndexStore(building), lay, settings)
    if current.exists():
        os.replace(current, old)
    os.replace(building, current)
    shutil.rmtree(old, ignore_errors=True)
    for folder in (lay.index_dir / "keyword").iterdir():  # other tokenizers' snapshots are stale
        if folder != keyword_dir(lay, settings) and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
    (lay.index_dir / REINDEXING).unlink(missing_ok=True)
    return summary


def chunk_embedding_keys(settings: Settings) -> list[dict]:
    """Every indexed chunk's path, lines, text and the sha256 of the text the index embeds for
    it (what an embedding cache entry must be keyed by to serve it)."""
    store = open_store(layout(settings), settings)
    rows = store.chunk_columns(["path", "start_line", "end_line", "text", "name", "description"]).to_pylist()
    return [{**row, "text_sha": text_sha(embedding_input(row))} for row in rows]


def link_kinds(settings: Settings) -> dict[str, int]:
    """How many indexed links there are of each kind (`link`, `rel`, `superseded`...)."""
    kinds = open_store(layout(settings), settings).link_table().column("kind").to_pylist()
    return {kind: kinds.count(kind) for kind in set(kinds)}


WATERMARK = "watermark.json"


def write_watermark(lay: Layout, summary: IndexSummary, writes_since_compaction: int = 0,
                    files: int | None = None) -> None:
    """The mark of a run that scanned every file. `files`: what the search's stat walk will
    count (`len(indexed_files(lay))`), when the caller's scan knows it (else a walk counts)."""
    from memflow.tasks.index.freshness import write_full_mark

    files = len(indexed_files(lay)) if files is None else files
    write_full_mark(lay, files, summary.total_chunks, writes_since_compaction)


def watermark(lay: Layout, walk: bool = False, hits: dict[str, int] | None = None) -> dict:
    """When the index last ran and how many indexed files changed since: from a running
    watcher, else the change journal, the watched folders' mtimes and the `hits` (path ->
    mtime_ns the snapshot indexed; index.freshness), or with `walk` (or a mark from before the
    journal) by stat'ing every indexed file."""
    from memflow.tasks.index import freshness

    if durability.crashed(lay.index_dir) or reindex_pending(lay):  # its files may be torn: not read
        return {"indexed_at": None, "changed_since": None, "stale": True,
                "checked": "a rebuild is due (a restart since unsynced index writes, or an interrupted reindex)"}
    mark = read_json(lay.index_dir / WATERMARK, None)
    if mark is None:
        return {"indexed_at": None, "changed_since": None, "stale": True}
    watcher = None if walk else freshness.RESIDENT.get(lay.root)
    if watcher is not None and watcher.alive:
        return watcher.watermark(mark)
    if not walk and ("watched" in mark or "folders" in mark):
        return freshness.cheap_watermark(lay, mark, hits)
    since = mark["indexed_at_ns"]
    files = indexed_files(lay)
    named = freshness.named_paths(lay, mark)  # indexed by name since (incremental.index_paths)
    changed = sum(1 for rel, (_size, mtime) in files.items() if mtime > since and named.get(rel) != mtime)
    changed += abs(len(files) - mark["files"]) if changed == 0 else 0
    return {"indexed_at": mark["indexed_at"], "changed_since": changed, "stale": changed > 0,
            "files": mark["files"], "chunks": mark["chunks"], "checked": "every indexed file"}


__all__ = ["prepare_run", "full_run", "run_reindex", "pipeline_version", "watermark", "index_problems",
           "reindex_pending"]
