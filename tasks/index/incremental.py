"""Stage 2, index, for named files: a write is searchable when the call that made it returns.

`index_paths(settings, paths)` re-chunks just those files (added, modified or gone) and
publishes the search snapshot as a delta segment (stores.segments) beside the main one, so its
cost follows the change, not the workspace. It rebuilds the snapshot whole (a compaction)
instead when the delta would pass `delta_limit`; when a changed file has superseded links (a
digest's history lines) before or after, or is a file they mark (superseded lines reach other
files' rows); or when the snapshot is missing or stale (with an embedding model on: it lacks
that model's vectors for some rows). With a model on, a delta carries its rows' vectors, only
texts the replaced rows did not have embedded. Scores equal a full rebuild's either way
(tests/test_index_paths.py).

`run_index(settings)` (what `memflow index` and every stage call) scans the workspace, plans,
and takes the same delta path for a small change (planned against the snapshot's files rows,
LanceDB neither opened nor imported, when it can be); it makes a full build (and compacts the
tables every few runs) otherwise. It keeps scanning the workspace and compacting; the watermark keeps the time of
that last scan and, beside it (`indexed_paths.jsonl`), the files indexed by name since (path ->
mtime_ns), so a file indexed here is not reported as changed while files changed by others
still are (index.freshness). The caller holds the workspace lock.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memflow.schemas.settings import Settings
from memflow.schemas.tables import CHUNKS, FILES, LINKS, CatalogFile, IndexSummary
from memflow.tasks.ground import durability
from memflow.tasks.ground.workspace import Layout, layout
from memflow.tasks.index import indexing
from memflow.tasks.index.freshness import indexable, note_indexed
from memflow.tasks.index.planning import DiskFile, needs_hash, plan_index
from memflow.tasks.index.superseded import superseded_lines
from memflow.tasks.index.statistics import counted_rows
from memflow.tasks.stores import keyword, rowmaps, segments
from memflow.tasks.stores.files import atomic_write_json, atomic_write_text, read_json
from memflow.tasks.stores.lance import IndexStore, rows_table

log = logging.getLogger("memflow.index")
Progress = indexing.Progress
MAX_NAMED = 256  # more files than this in one call: a workspace scan is as cheap


def _disk(lay: Layout, settings: Settings, rels: list[str], catalog: dict, pipeline: str):
    """rel -> DiskFile of the named files that exist (hashed unless their stat matches), or
    None when one is not a plain regular file (a symlink, a FIFO...: the full scan decides)."""
    disk = {}
    for rel in rels:
        try:
            stat = os.lstat(lay.root / rel)
        except FileNotFoundError:
            continue
        if stat.st_mode & 0o170000 != 0o100000:  # not a regular file
            return None
        if (rel.startswith(f"{lay.resource}/") and settings.resource_index_max_bytes is not None
                and stat.st_size > settings.resource_index_max_bytes):
            return None
        entry = DiskFile(rel, stat.st_size, stat.st_mtime_ns)
        known = catalog.get(rel)
        if known is None or (known.size, known.mtime_ns, known.pipeline) != (stat.st_size, stat.st_mtime_ns, pipeline):
            entry = DiskFile(rel, stat.st_size, stat.st_mtime_ns,
                             hashlib.sha256((lay.root / rel).read_bytes()).hexdigest())
        disk[rel] = entry
    return disk


def run_index(settings: Settings, progress_factory: Callable[[int], Progress] | None = None,
              embed: bool = True, delta: bool = True) -> IndexSummary:
    """Incremental index of a workspace; returns counts. The caller holds the workspace lock.
    A reindex that was interrupted is completed first (it is what the index then is). A few
    changed files go into the search snapshot as a delta segment, planned against the
    snapshot without LanceDB where it can be (`snapshot_change`), else after the table writes
    (`apply_plan`); more as a full build (`indexing.full_run`); `delta=False` always makes the
    full build (`forget`: no main segment under a delta may keep a forgotten text), and so does
    `embed=False` with a model on (a delta embeds its rows)."""
    lay = layout(settings)
    delta = delta and (embed or not settings.embedding_model)
    indexing.after_crash(lay, settings)
    if indexing.reindex_pending(lay):
        log.warning("an interrupted reindex is completed first")
        return indexing.run_reindex(settings, progress_factory)
    lance_dir = lay.index_dir / indexing.LANCE
    found = None
    if delta and lance_dir.exists():  # one stat walk, for the snapshot's plan and, if not, the tables'
        problems: dict[str, str] = {}
        found = indexing.indexed_files(lay, settings.resource_index_max_bytes, problems), problems
        if (summary := snapshot_change(settings, lay, *found)) is not None:
            return summary
    run = indexing.prepare_run(settings, lay, lance_dir, found)
    if not (delta and indexing.small_change(lay, settings, lance_dir, run)):
        return indexing.full_run(settings, lay, run, progress_factory, embed)
    if run.workers is not None:  # started for a cold run only, which is never a small change
        run.workers.close()
    summary = apply_plan(run.store, lay, settings, run.plan, run.pipeline, run.started)
    summary.skipped, summary.warnings = indexing.remember_problems(lay, run.plan, run.scan_problems,
                                                                   summary.skipped, summary.warnings)
    indexing.write_watermark(lay, summary, run.writes)
    return summary


def snapshot_change(settings: Settings, lay: Layout, stats: dict[str, tuple[int, int]],
                    walk_problems: dict[str, str]) -> IndexSummary | None:
    """A workspace scan whose change is small or nothing, planned against the search snapshot's
    files rows; a change is published as a delta segment with the LanceDB tables left behind, as
    a write indexed by name is (`index_paths`): `memflow index` after a few edits, or with none,
    neither opens nor imports LanceDB (about 0.45 s of a 1.05 s run at 4,800 files). None (nothing
    written) when the run is not such: too many files changed, a file the scan could not read
    or only re-stamped (`touched`: its files row is re-put), nothing changed while a delta waits
    (the full path compacts it), a stale snapshot (or one lacking the model's vectors) or one built from tables
    of another shape, a compaction due, or a delta that may not be one (`publish_delta`).
    `stats`, `walk_problems`: the workspace's stat walk (`indexed_files`); files are hashed
    only when few enough differ from the snapshot's rows by stat."""
    started = time.perf_counter()
    if walk_problems or indexing.keyword_stale(lay, settings) or indexing.vectors_incomplete(lay, settings):
        return None
    current = keyword.current(indexing.keyword_dir(lay, settings))
    shape = (keyword.read_meta(indexing.keyword_dir(lay, settings)) or {}).get("tables")
    if current is None or current.files is None or shape != indexing.tables_shape():
        return None
    pipeline = indexing.pipeline_version(settings)
    catalog = whole_catalog(current)
    differ = sum(needs_hash(DiskFile(rel, size, mtime), catalog.get(rel), pipeline) for rel, (size, mtime) in stats.items())
    if differ + len(catalog.keys() - stats.keys()) > indexing.SMALL_CHANGE:
        return None  # the full path plans it (not hashed twice)
    problems: dict[str, str] = {}
    plan = plan_index(indexing.scan(lay, catalog, pipeline, settings.resource_index_max_bytes, problems, stats),
                      catalog, pipeline)
    changed = plan.added + plan.modified + plan.deleted
    writes = indexing.writes_after(lay, bool(changed))
    if (problems or plan.touched or not plan.unchanged or len(changed) > indexing.SMALL_CHANGE
            or writes >= indexing.COMPACT_EVERY or not (changed or current.main is None)):
        return None  # (nothing changed but a delta waits: the full path compacts it)
    skipped: dict[str, str] = {}
    warnings: dict[str, str] = {}
    rows = file_rows(lay, settings, plan.added + plan.modified, pipeline, skipped, warnings)
    with rowmaps.one_pass():  # a scan's few lookups: no grouping of every row by path
        if changed and not publish_delta(lay, settings, current, changed, rows, tables_behind=True):
            return None
    skipped, warnings = indexing.remember_problems(lay, plan, problems, skipped, warnings)
    summary = IndexSummary(added=len(plan.added), modified=len(plan.modified), deleted=len(plan.deleted),
                           unchanged=len(plan.unchanged), chunks=rows[1].num_rows,
                           total_chunks=_live_chunks(lay, settings), vectors=0, keyword_rebuilt=bool(changed),
                           seconds=time.perf_counter() - started, skipped=skipped, warnings=warnings)
    indexing.write_watermark(lay, summary, writes, files=len(stats))  # no problems: every file is in stats
    return summary


def whole_catalog(current: keyword.KeywordIndex) -> dict[str, CatalogFile]:
    """Every indexed file's catalog row as the search snapshot has them (a delta's included)."""
    files = current.live_files()
    columns = [files.column(name).to_pylist() for name in ("path", "size", "mtime_ns", "sha256", "pipeline")]
    return {row[0]: CatalogFile(*row) for row in zip(*columns)}


def index_paths(settings: Settings, paths: list[str]) -> IndexSummary:
    """Index the named workspace-relative files (gone ones are dropped); returns counts.
    Paths the index does not cover are ignored. Falls back to `run_index` (a workspace scan)
    when an interrupted reindex waits, or for many files or files that are not plain.

    A small change is planned against the search snapshot's own files rows and published as a
    delta segment without touching the LanceDB tables (`tables_behind` in its meta): what a
    write's caller waits for is the change being searchable, not the tables, which every reader
    of them brings level first (`indexing.open_store`)."""
    started = time.perf_counter()
    lay = layout(settings)
    rels = sorted({p.replace(os.sep, "/").strip("/") for p in paths})
    rels = [r for r in rels if indexable(lay, r)]
    indexing.after_crash(lay, settings)
    if (indexing.reindex_pending(lay) or len(rels) > MAX_NAMED or indexing.keyword_stale(lay, settings)
            or indexing.snapshot_vectors_stale(lay, settings)):  # the snapshot is behind more than these
        return run_index(settings)
    current = keyword.current(indexing.keyword_dir(lay, settings))
    if current is None:
        return run_index(settings)
    pipeline = indexing.pipeline_version(settings)
    catalog = snapshot_catalog(current, rels)
    disk = _disk(lay, settings, rels, catalog, pipeline)
    if disk is None:
        return run_index(settings)
    plan = plan_index(disk, catalog, pipeline)
    skipped: dict[str, str] = {}
    warnings: dict[str, str] = {}
    rows = file_rows(lay, settings, plan.added + plan.modified, pipeline, skipped, warnings)
    changed = plan.added + plan.modified + plan.deleted
    vectors = 0
    if plan.changed and not publish_delta(lay, settings, current, changed, rows, tables_behind=True):
        store = indexing.open_store(lay, settings)  # a full build: the tables take the rows first
        atomic_write_text(lay.index_dir / indexing.DIRTY, pipeline)
        write_rows(store, lay, settings, plan, rows, pipeline, skipped, warnings)
        vectors = publish_full(store, lay, settings)
        (lay.index_dir / indexing.DIRTY).unlink(missing_ok=True)
    note_problems(lay, plan, skipped, warnings)
    indexed = {rel: disk[rel].mtime_ns for rel in plan.added + plan.modified + plan.touched + plan.unchanged}
    indexed.update({rel: -1 for rel in plan.deleted})
    note_indexed(lay, indexed, len(plan.added), len(plan.deleted), plan.changed)
    return IndexSummary(added=len(plan.added), modified=len(plan.modified), deleted=len(plan.deleted),
                        unchanged=len(plan.unchanged), chunks=rows[1].num_rows, total_chunks=-1,
                        vectors=vectors, keyword_rebuilt=plan.changed, seconds=time.perf_counter() - started,
                        skipped=skipped, warnings=warnings)


def warm_snapshot(settings: Settings) -> None:
    """Open the search snapshot and group its rows by path (what the first write and search
    of a resident process would otherwise build: ~0.1-0.3 s at 24,000 files); nothing
    without a snapshot."""
    current = keyword.current(indexing.keyword_dir(layout(settings), settings))
    if current is None:
        return
    for table, column in (("docs", "path"), ("links", "source"), ("links", "target"), ("files", "path")):
        if getattr(current, table) is not None:
            rowmaps.group_rows(current, table, column)


def snapshot_catalog(current: keyword.KeywordIndex, rels: list[str]) -> dict[str, CatalogFile]:
    """The catalog rows of `rels` as the search snapshot has them (it holds the files rows
    whole; a current snapshot's are the tables' once those are level)."""
    return {path: CatalogFile(path, row["size"], row["mtime_ns"], row["sha256"], row["pipeline"])
            for path, row in current.file_info(rels, ("size", "mtime_ns", "sha256", "pipeline")).items()}


def apply_plan(store: IndexStore, lay: Layout, settings: Settings, plan, pipeline: str,
               started: float) -> IndexSummary:
    """Carry out a small plan of a workspace scan (`run_index`): its table writes, then the
    snapshot as a delta (or a full build, see `publish_delta`), so the tables are level with
    the snapshot after it; the file problems are in the summary (the caller records them)."""
    if plan.changed:
        atomic_write_text(lay.index_dir / indexing.DIRTY, pipeline)
    skipped: dict[str, str] = {}
    warnings: dict[str, str] = {}
    rows = file_rows(lay, settings, plan.added + plan.modified, pipeline, skipped, warnings)
    write_rows(store, lay, settings, plan, rows, pipeline, skipped, warnings)
    current = keyword.current(indexing.keyword_dir(lay, settings))
    vectors = 0
    if plan.changed:
        if current is None or not publish_delta(lay, settings, current, plan.added + plan.modified + plan.deleted,
                                                rows, tables_behind=False, store=store):
            vectors = publish_full(store, lay, settings)
        (lay.index_dir / indexing.DIRTY).unlink(missing_ok=True)
    return IndexSummary(added=len(plan.added), modified=len(plan.modified), deleted=len(plan.deleted),
                        unchanged=len(plan.unchanged), chunks=rows[1].num_rows,
                        total_chunks=_live_chunks(lay, settings), vectors=vectors,
                        keyword_rebuilt=plan.changed, seconds=time.perf_counter() - started,
                        skipped=skipped, warnings=warnings)


def _live_chunks(lay: Layout, settings: Settings) -> int:
    meta = keyword.read_meta(indexing.keyword_dir(lay, settings)) or {}
    return int(meta.get("docs", -1))


def file_rows(lay: Layout, settings: Settings, rels: list[str], pipeline: str, skipped: dict[str, str],
              warnings: dict[str, str]) -> tuple[pa.Table, pa.Table, pa.Table]:
    """The (files, chunks, links) rows of the files `rels` read now (a file that cannot be read
    is in `skipped` and has none)."""
    built = [r for rel in rels if (r := indexing.file_rows_of(lay, settings, rel, pipeline, skipped, warnings))]
    return (rows_table([b[0] for b in built], FILES), rows_table([c for b in built for c in b[1]], CHUNKS),
            rows_table([link for b in built for link in b[2]], LINKS))


def write_rows(store: IndexStore, lay: Layout, settings: Settings, plan, rows: tuple[pa.Table, pa.Table, pa.Table],
               pipeline: str, skipped: dict[str, str], warnings: dict[str, str]) -> None:
    """Carry out the plan's table writes with its new `rows` (one delete and one append per
    table, like `indexing.write_plan` for a group)."""
    files, chunks, links = rows
    todo = plan.added + plan.modified
    if todo:
        store.write_paths(todo, chunks.to_batches(), links.to_pylist())
        store.put_files(files.to_pylist())  # last: a crash before this line re-does the files
    if plan.deleted:
        store.delete_paths(plan.deleted)
        store.delete_files(plan.deleted)
    if plan.touched:
        store.put_files([r[0] for rel in plan.touched
                         if (r := indexing.file_rows_of(lay, settings, rel, pipeline, skipped, warnings))])


def publish_full(store: IndexStore, lay: Layout, settings: Settings) -> int:
    """A full build of the search snapshot from the tables (vectors embedded first with a
    model on); returns the vectors embedded."""
    vectors = 0
    if settings.embedding_model:
        from memflow.tasks.index.vectors import backfill_vectors, check_dimension

        vectors = backfill_vectors(store, settings, check_dimension(settings))
    indexing.rebuild_keyword(store, lay, settings)
    return vectors


def publish_delta(lay: Layout, settings: Settings, current: keyword.KeywordIndex, changed: list[str],
                  rows: tuple[pa.Table, pa.Table, pa.Table], tables_behind: bool,
                  store: IndexStore | None = None) -> bool:
    """Publish the snapshot with `changed` replaced by their new `rows` (files, chunks, links)
    as a delta segment when it may be one (within the delta limit; with an embedding model on,
    a snapshot holding that model's vectors); False (nothing published) otherwise. Files whose
    superseded labels the change may alter (`_labelled_by`: the daily notes a changed digest
    node cites, the session logs such marked notes cite) are read again and replaced with them,
    their labels worked out over the merged link graph. With a model on, the delta carries the
    new rows' vectors: a text the replaced rows had keeps its vector, the others are embedded
    here (`vectors.delta_vectors`); `store` (the tables, level with the snapshot) takes them
    too, else the tables get them when they are brought level (`indexing.sync_tables`)."""
    dims = _vector_dims(settings, current) if settings.embedding_model else None
    if current.links is None or (settings.embedding_model and dims is None):
        return False
    others = _labelled_by(lay, current, changed, rows[2])
    others = set(current.file_info(sorted(others), ("kind",))) if others else others  # the indexed ones
    if others:
        rows = _with_rows_of(lay, settings, sorted(others), rows)
        if rows is None:
            return False
        changed = changed + sorted(others)
    docs, terms = rows[1].select(keyword.CHUNK_COLUMNS), rows[1].column("terms")
    main = current.main or current
    if segments.delta_rows(current) + docs.num_rows > segments.delta_limit(main.size):
        return False
    files, links = rows[0].select(keyword.FILE_COLUMNS), rows[2].select(keyword.LINK_COLUMNS)
    docs = _with_superseded(lay, current, changed, docs, links)
    counted = counted_rows(lay, docs.column("path"), docs.column("layer"), links)
    vectors = has_vector = None
    if settings.embedding_model:
        from memflow.tasks.index.vectors import delta_vectors, vector_rows

        chunks = docs.select(["id", "path", "layer", "kind", "date", "text", "name", "description"]).to_pylist()
        vectors = delta_vectors(settings, chunks, _replaced_vectors(current, changed), dims)
        has_vector = np.ones(len(chunks), dtype=bool)
        if store is not None:  # the tables took these rows already
            store.put_vectors(settings.embedding_model, dims, vector_rows(chunks, vectors))
    segments.publish_delta(indexing.keyword_dir(lay, settings), current, set(changed), docs, terms, links, files,
                           vectors=vectors, has_vector=has_vector, tables_behind=tables_behind, counted=counted,
                           lazy=durability.lazy(lay.index_dir))
    return True


def _vector_dims(settings: Settings, current: keyword.KeywordIndex) -> int | None:
    """The dimension of the snapshot's vectors when they are the configured model's and a delta
    may carry them (its earlier delta did); None: a full build decides."""
    from memflow.tasks.index.vectors import known_dims

    main = current.main or current
    if main.vectors is None or indexing.lacks_vectors(current.meta, settings.embedding_model):
        return None  # another model's, or some rows lack a vector (an index run without embedding)
    if current.main is not None and current.delta_vectors is None:
        return None
    dims = int(main.vectors.shape[1])
    return dims if known_dims(settings) in (None, dims) else None


def _replaced_vectors(current: keyword.KeywordIndex, changed: list[str]) -> dict[str, np.ndarray]:
    """Embedded text sha256 -> vector of the snapshot's rows of `changed` (what a delta replacing
    them need not embed again)."""
    from memflow.tasks.index.vectors import embedding_input, text_sha

    numbers = rowmaps.live_rows(current, "docs", "path", changed)
    numbers = numbers[current.has_vector[numbers]]
    rows = rowmaps.row_dicts(current.docs.select(["text", "name", "description"]), numbers)
    return {text_sha(embedding_input(row)): current.vector(i) for row, i in zip(rows, numbers.tolist())}


def _old_links(current: keyword.KeywordIndex, column: str, paths: list[str]) -> pa.Table:
    return rowmaps.take_rows(current.links, rowmaps.live_rows(current, "links", column, paths))


def _labelled_by(lay: Layout, current: keyword.KeywordIndex, changed: list[str], links: pa.Table) -> set[str]:
    """Files not in `changed` whose superseded labels a change to `changed` (new `links`) may
    alter: the daily notes a changed digest node links to, before or after (its history lines
    mark their lines; its current facts keep a line current), and the session logs that any
    marked daily note among those or among `changed` cites, before or after (a marked line's
    turns are marked with it)."""
    both = pa.concat_tables([keyword.same_schema(links, current.links), _old_links(current, "source", changed)])
    source, target = both.column("source"), both.column("target")
    from_digest = both.filter(pc.and_(pc.starts_with(source, f"{lay.digest}/"), pc.starts_with(target, f"{lay.daily}/")))
    affected = set(changed) | set(from_digest.column("target").to_pylist())
    dailies = sorted(p for p in affected if p.startswith(f"{lay.daily}/"))
    if not dailies:
        return affected - set(changed)
    into = pa.concat_tables([_old_links(current, "target", dailies), from_digest])
    history = into.filter(pc.and_(pc.equal(into.column("kind"), "superseded"),
                                  pc.starts_with(into.column("source"), f"{lay.digest}/")))
    marked = sorted(set(history.column("target").to_pylist()) & set(dailies))
    if marked:
        cites = pa.concat_tables([_old_links(current, "source", marked),
                                  links.filter(pc.is_in(links.column("source"), value_set=pa.array(marked, pa.string())))
                                  .select(current.links.column_names).cast(current.links.schema)])
        affected |= {t for t in cites.column("target").to_pylist() if t.startswith(f"{lay.session}/")}
    return affected - set(changed)


def _with_rows_of(lay: Layout, settings: Settings, rels: list[str], rows: tuple[pa.Table, pa.Table, pa.Table]):
    """`rows` with the rows of `rels` read again from disk appended; None when one cannot be
    read (the full build decides)."""
    skipped: dict[str, str] = {}
    extra = file_rows(lay, settings, rels, indexing.pipeline_version(settings), skipped, {})
    if skipped:
        return None
    return tuple(pa.concat_tables([mine, theirs.cast(mine.schema)]) for mine, theirs in zip(rows, extra))


def _links_into(current: keyword.KeywordIndex, changed: list[str], links: pa.Table,
                targets: list[str]) -> pa.Table:
    """The links of the merged graph (`current`'s, the changed files' replaced by `links`) into
    `targets`: looked up by target, not filtered out of every link of the workspace."""
    old = rowmaps.take_rows(current.links, rowmaps.live_rows(current, "links", "target", targets))
    old = keyword.rows_not_in(old, "source", changed)
    new = links.filter(pc.is_in(links.column("target"), value_set=pa.array(targets, pa.string())))
    return pa.concat_tables([old, keyword.same_schema(new, current.links)])


def _with_superseded(lay: Layout, current: keyword.KeywordIndex, changed: list[str],
                     docs: pa.Table, links: pa.Table) -> pa.Table:
    """`docs` (the rows of `changed`, every file whose labels the change may alter among them:
    `_labelled_by`) with their superseded columns, worked out over the neighbourhood of the
    merged link graph that decides them, not the whole workspace: the links into the changed
    daily notes and session logs, into every daily note citing such a log, and the digest rows
    whose history lines mark them."""
    sessions = [p for p in changed if p.startswith(f"{lay.session}/")]
    citing = _links_into(current, changed, links, sessions) if sessions else None
    dailies = {p for p in changed if p.startswith(f"{lay.daily}/")}
    if citing is not None:
        dailies |= {s for s in citing.column("source").to_pylist() if s.startswith(f"{lay.daily}/")}
    graph = _links_into(current, changed, links, sorted(dailies | set(sessions)))
    history = graph.filter(pc.and_(pc.equal(graph.column("kind"), "superseded"),
                                   pc.starts_with(graph.column("source"), f"{lay.digest}/")))
    cited = sorted(set(history.column("source").to_pylist()) - set(changed))
    base = current.docs.select(["path", "start_line", "end_line", "text"])
    base = rowmaps.take_rows(base, rowmaps.live_rows(current, "docs", "path", cited))
    both = pa.concat_tables([base, docs.select(base.column_names).cast(base.schema)])
    numbers, days, parts = superseded_lines(both, graph, lay.daily, lay.digest, lay.session)
    tail = slice(base.num_rows, None)
    return (docs.append_column("superseded_lines", numbers[tail])
            .append_column("superseded_until", days[tail])
            .append_column("superseded_parts", parts[tail]))


def note_problems(lay: Layout, plan, skipped: dict[str, str], warnings: dict[str, str]) -> None:
    """Earlier problems of the redone files are replaced by this call's (others kept)."""
    path = lay.index_dir / indexing.PROBLEMS
    earlier = read_json(path, {}) or {}
    redone = set(plan.added) | set(plan.modified) | set(plan.touched) | set(plan.deleted)
    if not (skipped or warnings or redone & (set(earlier.get("skipped") or {}) | set(earlier.get("warnings") or {}))):
        return
    keep = lambda found: {p: why for p, why in (found or {}).items() if p not in redone}
    atomic_write_json(path, {"skipped": {**keep(earlier.get("skipped")), **skipped},
                             "warnings": {**keep(earlier.get("warnings")), **warnings}})
