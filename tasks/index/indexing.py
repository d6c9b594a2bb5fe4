"""Stage 2, index: Markdown under daily/ and digest/ -> chunks, links, BM25 and vectors.

`run_index` plans by content hash (`plan_index`), re-chunks only added and modified files and
writes in an order that keeps the index consistent if the process dies: a file's chunks and
links first, its `files` row last; the keyword index is rebuilt whenever the chunks table moved
past the version it was built from. The caller holds the workspace lock.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone

import numpy as np
import pyarrow.compute as pc

from memflow.schemas.settings import Settings
from memflow.schemas.tables import SCHEMA_VERSION, IndexSummary
from memflow.tasks.ground.convert import convert, looks_binary
from memflow.tasks.ground.markdown import parse_links, searchable_text
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.tokenize import tokenize, tokenizer_id
from memflow.tasks.ground.tokens import count_tokens
from memflow.tasks.ground.workspace import (
    Layout,
    date_of,
    file_stats,
    kind_of,
    layer_of,
    layout,
)
from memflow.tasks.index import chunking
from memflow.tasks.index.planning import DiskFile, needs_hash, plan_index
from memflow.tasks.index.superseded import superseded_rows
from memflow.tasks.index.vectors import known_dims
from memflow.tasks.stores import keyword
from memflow.tasks.stores.files import (
    atomic_write_json,
    atomic_write_text,
    decode,
    read_json,
)
from memflow.tasks.stores.lance import IndexStore

log = logging.getLogger("memflow.index")
BATCH = 256
TERMS_VERSION = "2"  # 2: provenance links are not searched (searchable_text)
COMPACT_EVERY, COMPACT_BIG = 20, 100  # index runs with writes / files changed in one run
Progress = Callable[[int], None]


def pipeline_version(settings: Settings) -> str:
    """Changes whenever chunks would come out differently: chunker, tokenizer, schema."""
    parts = (f"{SCHEMA_VERSION}|{settings.chunk_bytes}|{tokenizer_id(settings.keyword_tokenizer)}"
             f"|{TERMS_VERSION}")
    return hashlib.sha256(parts.encode()).hexdigest()[:12]


RESOURCE_SUFFIXES = (".md", ".txt", ".json", ".jsonl", ".csv", ".yaml", ".yml", ".html", ".htm")


def indexed_files(lay: Layout, max_resource_bytes: int | None = None) -> dict[str, tuple[int, int]]:
    """Indexed files -> (size, mtime_ns): Markdown under daily/ and digest/, and text resources
    under resource/ up to `max_resource_bytes` (larger ones are left out and logged)."""
    found = file_stats(lay, [lay.daily, lay.digest])
    for rel, (size, mtime) in file_stats(lay, [lay.resource], RESOURCE_SUFFIXES).items():
        if max_resource_bytes is not None and size > max_resource_bytes:
            log.warning("%s is not indexed: %d bytes is over resource_index_max_bytes (%d)",
                        rel, size, max_resource_bytes)
            continue
        found[rel] = (size, mtime)
    return found


def scan(lay: Layout, catalog: dict, pipeline: str, max_resource_bytes: int | None = None) -> dict[str, DiskFile]:
    """Stat every indexed file; hash only those whose stat or pipeline differ from the catalog."""
    disk = {}
    for rel, (size, mtime_ns) in sorted(indexed_files(lay, max_resource_bytes).items()):
        entry = DiskFile(rel, size, mtime_ns)
        if needs_hash(entry, catalog.get(rel), pipeline):
            digest = hashlib.sha256((lay.root / rel).read_bytes()).hexdigest()
            entry = DiskFile(rel, size, mtime_ns, digest)
        disk[rel] = entry
    return disk


def chunk_id(path: str, start: int, end: int, text: str) -> str:
    return hashlib.sha256(f"{path}\0{start}\0{end}\0{text}".encode()).hexdigest()


def build_rows(lay: Layout, settings: Settings, rel: str, data: bytes,
               pipeline: str) -> tuple[dict, list[dict], list[dict]]:
    """One file's bytes -> (files row, chunk rows, link rows)."""
    layer, kind, day = layer_of(lay, rel), kind_of(lay, rel), date_of(rel)
    if layer == "resource" and not rel.lower().endswith(".md"):
        return resource_rows(settings, rel, data, pipeline, kind, day)
    note = parse_note(rel, decode(data, settings.decode_errors, rel))
    chunks = []
    for n, piece in enumerate(chunking.chunk_markdown(note, settings.chunk_bytes)):
        name, desc = (note.name, note.description) if n == 0 else ("", "")
        terms = tokenize(searchable_text("\n".join((name, desc, piece.text))), settings.keyword_tokenizer)
        chunks.append({
            "id": chunk_id(rel, piece.start, piece.end, piece.text), "path": rel, "layer": layer,
            "kind": kind, "date": day, "start_line": piece.start, "end_line": piece.end,
            "heading_path": piece.heading_path, "text": piece.text, "name": name,
            "description": desc, "n_tokens": count_tokens(piece.text), "terms": terms,
        })
    links = [{"source": rel, "line": link.line, "target": link.target, "anchor": link.anchor,
              "label": link.label, "kind": link.kind} for link in parse_links(note.text)]
    row = {"path": rel, "layer": layer, "kind": kind, "size": len(data), "mtime_ns": 0,
           "sha256": hashlib.sha256(data).hexdigest(), "pipeline": pipeline,
           "name": note.name, "description": note.description}
    return row, chunks, links


def resource_rows(settings: Settings, rel: str, data: bytes, pipeline: str, kind: str,
                  day) -> tuple[dict, list[dict], list[dict]]:
    """A text resource, whole: CSV by rows under their header, JSON/YAML/HTML by their converted
    text (results span the file), other text by byte windows with their line range. Binary
    content gives no chunks."""
    name = rel.rsplit("/", 1)[-1]
    row = {"path": rel, "layer": "resource", "kind": kind, "size": len(data), "mtime_ns": 0,
           "sha256": hashlib.sha256(data).hexdigest(), "pipeline": pipeline, "name": name,
           "description": ""}
    if looks_binary(data):
        log.warning("%s is not indexed: binary content", rel)
        return row, [], []
    text = decode(data, settings.decode_errors, rel)
    pieces = chunking.chunk_resource(rel, text, convert(rel, text), settings.chunk_bytes)
    chunks = []
    for n, (start, end, body) in enumerate(pieces):
        terms = tokenize(searchable_text(f"{name}\n{body}" if n == 0 else body), settings.keyword_tokenizer)
        chunks.append({
            "id": chunk_id(rel, start, end, body), "path": rel, "layer": "resource", "kind": kind,
            "date": day, "start_line": start, "end_line": end, "heading_path": "", "text": body,
            "name": name if n == 0 else "", "description": "", "n_tokens": count_tokens(body),
            "terms": terms,
        })
    return row, chunks, []


def _batches(items: list[str], size: int) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def apply_changes(store: IndexStore, lay: Layout, settings: Settings, paths: list[str],
                  pipeline: str, progress: Progress | None = None) -> int:
    """Re-chunk `paths` batch by batch; returns the number of chunks written."""
    written = 0
    for batch in _batches(paths, BATCH):
        file_rows, chunk_rows, link_rows = [], [], []
        for rel in batch:
            path = lay.root / rel
            stat = path.stat()
            row, chunks, links = build_rows(lay, settings, rel, path.read_bytes(), pipeline)
            row["mtime_ns"] = stat.st_mtime_ns
            file_rows.append(row)
            chunk_rows.extend(chunks)
            link_rows.extend(links)
        store.replace_paths(batch, chunk_rows, link_rows)
        store.put_files(file_rows)  # last: a crash before this line re-does the batch
        written += len(chunk_rows)
        if progress:
            progress(len(batch))
    return written


def rebuild_keyword(store: IndexStore, lay: Layout, settings: Settings) -> None:
    """Write a new search snapshot: BM25 over the chunks' cached terms, the rows a result shows,
    the link graph and file names and, with an embedding model on, the chunk vectors aligned to
    the same rows."""
    folder = keyword_dir(lay, settings)
    table = store.chunk_columns([*keyword.CHUNK_COLUMNS, "terms"])
    terms = table.column("terms")
    meta: dict = {"tokenizer": settings.keyword_tokenizer}
    matrix = has = None
    dims = known_dims(settings) if settings.embedding_model else None
    if dims:
        ids, stored = store.vector_matrix(settings.embedding_model, dims)
        where = pc.index_in(table.column("id"), value_set=ids)
        has = pc.is_valid(where).to_numpy(zero_copy_only=False)
        matrix = np.zeros((table.num_rows, dims), dtype=np.float32)
        if has.any():
            matrix[has] = stored[pc.drop_null(where).to_numpy()]
        meta["vectors"] = {"model": settings.embedding_model, "dims": dims, "rows": int(has.sum())}
    links = store.link_table()
    docs = table.drop_columns(["terms"])
    docs = docs.append_column("superseded", superseded_rows(docs, links, lay.daily, lay.digest))
    keyword.build(folder, docs, terms, meta, links, store.file_columns(keyword.FILE_COLUMNS),
                  matrix, has)


def snapshot_vectors_stale(lay: Layout, settings: Settings) -> bool:
    """The snapshot lacks the configured model's vectors (the model was switched on or changed)."""
    if not settings.embedding_model or not known_dims(settings):
        return False
    meta = keyword.read_meta(keyword_dir(lay, settings)) or {}
    return (meta.get("vectors") or {}).get("model") != settings.embedding_model


def keyword_dir(lay: Layout, settings: Settings):
    return lay.index_dir / "keyword" / tokenizer_id(settings.keyword_tokenizer)


DIRTY = "DIRTY"  # present from the first table write of a run until its keyword swap


def keyword_stale(store: IndexStore, lay: Layout, settings: Settings) -> bool:
    """The keyword index may not match the tables: a run died between its table writes and the
    keyword swap (the DIRTY marker is still there), the keyword folder is missing, or an older
    version wrote it."""
    meta = keyword.read_meta(keyword_dir(lay, settings))
    return (lay.index_dir / DIRTY).exists() or meta is None or meta.get("format") != keyword.SNAPSHOT_FORMAT


def run_index(settings: Settings, progress_factory: Callable[[int], Progress] | None = None,
              embed: bool = True) -> IndexSummary:
    """Incremental index of a workspace; returns counts. The caller holds the workspace lock."""
    started = time.perf_counter()
    lay = layout(settings)
    store = IndexStore(lay.index_dir / "lance")
    pipeline = pipeline_version(settings)
    catalog = store.catalog()
    plan = plan_index(scan(lay, catalog, pipeline, settings.resource_index_max_bytes), catalog, pipeline)
    todo = plan.added + plan.modified
    if plan.changed:
        atomic_write_text(lay.index_dir / DIRTY, pipeline)
    progress = progress_factory(len(todo)) if progress_factory and todo else None
    written = apply_changes(store, lay, settings, todo, pipeline, progress)
    if plan.deleted:
        store.replace_paths(plan.deleted, [], [])
        store.delete_files(plan.deleted)
    if plan.touched:
        rows = [build_rows(lay, settings, rel, (lay.root / rel).read_bytes(), pipeline)[0]
                for rel in plan.touched]
        for row in rows:
            row["mtime_ns"] = (lay.root / row["path"]).stat().st_mtime_ns
        store.put_files(rows)
    vectors = 0
    if embed and settings.embedding_model:
        from memflow.tasks.index.vectors import backfill_vectors

        vectors = backfill_vectors(store, settings)
    rebuilt = (plan.changed or vectors > 0 or keyword_stale(store, lay, settings)
               or snapshot_vectors_stale(lay, settings))
    previous = read_json(lay.index_dir / WATERMARK, {}) or {}
    writes = previous.get("writes_since_compaction", 0) + (1 if plan.changed else 0)
    if rebuilt:
        # Every write makes a LanceDB version: compact after a big change or every few runs,
        # not on each one-file edit (a compaction costs more than the edit).
        if writes >= COMPACT_EVERY or len(todo) + len(plan.deleted) >= COMPACT_BIG:
            store.compact()
            writes = 0
        rebuild_keyword(store, lay, settings)
        (lay.index_dir / DIRTY).unlink(missing_ok=True)
    summary = IndexSummary(
        added=len(plan.added), modified=len(plan.modified), deleted=len(plan.deleted),
        unchanged=len(plan.unchanged), chunks=written, total_chunks=store.count_chunks(),
        vectors=vectors, keyword_rebuilt=rebuilt, seconds=time.perf_counter() - started)
    write_watermark(lay, summary, writes)
    return summary


def run_reindex(settings: Settings, progress_factory=None) -> IndexSummary:
    """Delete everything derived under metadata/index/ and index from the files."""
    lay = layout(settings)
    if lay.index_dir.exists():
        shutil.rmtree(lay.index_dir)
    return run_index(settings, progress_factory)


WATERMARK = "watermark.json"


def write_watermark(lay: Layout, summary: IndexSummary, writes_since_compaction: int = 0) -> None:
    atomic_write_json(lay.index_dir / WATERMARK, {
        "indexed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "indexed_at_ns": time.time_ns(),
        "files": len(indexed_files(lay)),  # what the search's stat walk will count
        "chunks": summary.total_chunks,
        "writes_since_compaction": writes_since_compaction,
    })


def watermark(lay: Layout) -> dict:
    """When the index last ran and how many indexed files changed since (stat only)."""
    mark = read_json(lay.index_dir / WATERMARK, None)
    if mark is None:
        return {"indexed_at": None, "changed_since": None, "stale": True}
    since = mark["indexed_at_ns"]
    files = indexed_files(lay)
    changed = sum(1 for _size, mtime in files.values() if mtime > since)
    changed += abs(len(files) - mark["files"]) if changed == 0 else 0
    return {"indexed_at": mark["indexed_at"], "changed_since": changed, "stale": changed > 0,
            "files": mark["files"], "chunks": mark["chunks"]}


__all__ = ["run_index", "run_reindex", "pipeline_version", "watermark"]
