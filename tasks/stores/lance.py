"""LanceDB tables under `metadata/index/lance/`: files, chunks, links and vectors.

The one module that imports lancedb. `IndexStore` owns the open connection. Writers delete a
path's old rows before adding new ones, so re-applying a batch after a crash is idempotent; the
deletes find a path through a BTREE index on `path` / `source` (a flat scan of a growing table
made every delete-then-add batch cost more than the last). A store whose tables were empty when
a run began is `append_only` for that run: every path is written once, nothing to delete.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memflow.schemas.tables import CHUNKS, FILES, LINKS, CatalogFile, vectors_schema

os.environ.setdefault("LANCEDB_LOG", "error")
_IN_BATCH = 500  # values per `IN (...)` predicate
_REST_CLIENT = "lance_namespace_urllib3_client"
KEYS = {"chunks": "path", "links": "source", "files": "path"}  # what a delete finds rows by


def rows_batch(rows: list[dict] | dict[str, list], schema: pa.Schema) -> pa.RecordBatch:
    """`pa.RecordBatch.from_pylist(rows, schema=schema)` (a missing key: null), built column by
    column: a conversion per column rather than a dict looked up per row and field took about
    half the CPU (0.17 -> 0.09 s for a cold index's 9,000 chunk rows). `rows` may be columns
    already (field -> values, `index.rows.columns_of`). A list-of-strings column may come as one
    string per row, its items joined by single spaces (`index.rows.joined_terms`): split here in
    Arrow."""
    if isinstance(rows, dict):
        count = len(next(iter(rows.values()), []))
        return pa.RecordBatch.from_arrays([_column(rows[name] if name in rows else [None] * count, field.type)
                                           for name, field in zip(schema.names, schema)], schema=schema)
    return pa.RecordBatch.from_arrays([_column([row.get(name) for row in rows], field.type)
                                       for name, field in zip(schema.names, schema)], schema=schema)


def _column(values: list, kind: pa.DataType) -> pa.Array:
    if kind == _STRINGS and values and isinstance(values[0], str):
        return split_terms(pa.array(values, pa.string()))
    return pa.array(values, type=kind)


_STRINGS = pa.list_(pa.string())


def split_terms(texts: pa.Array) -> pa.Array:
    """list<string>: each text's terms (`index.rows.joined_terms`), split on spaces in one Arrow pass; an
    empty text has none, a null stays null."""
    parts = pc.split_pattern(texts, " ")
    empty = pc.fill_null(pc.equal(texts, ""), False)
    if not pc.any(empty).as_py():
        return parts
    empty = empty.to_numpy(zero_copy_only=False)
    counts = pc.fill_null(pc.list_value_length(parts), 0).to_numpy(zero_copy_only=False)
    keep = pa.array(~np.repeat(empty, counts))
    offsets = np.concatenate([[0], np.cumsum(np.where(empty, 0, counts))]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pc.list_flatten(parts).filter(keep),
                                    type=_STRINGS, mask=pc.is_null(texts))


def rows_table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    """`pa.Table.from_pylist(rows, schema=schema)`, as `rows_batch` builds it."""
    return pa.Table.from_batches([rows_batch(rows, schema)], schema=schema)


def _lancedb():
    """lancedb, without paying for its REST namespace client at import. lancedb imports that
    package's generated models (pydantic) at start-up, and the package's `__init__` also builds
    every REST API class (~0.4 s of `validate_call` schemas) that a local folder index never
    calls. The package module is put in place as it is, minus its `__init__`; submodules import
    as usual, and the first attribute asked of the package itself runs the real `__init__`."""
    if _REST_CLIENT not in sys.modules:
        spec = importlib.util.find_spec(_REST_CLIENT)
        if spec is not None and spec.loader is not None:
            shell = importlib.util.module_from_spec(spec)

            def first_use(name: str):
                del shell.__getattr__
                spec.loader.exec_module(shell)
                return getattr(shell, name)

            shell.__getattr__ = first_use
            sys.modules[_REST_CLIENT] = shell
    if "lancedb" in sys.modules or sys.version_info >= (3, 12) or "overrides" in sys.modules:
        import lancedb

        return lancedb
    # Before Python 3.12 lancedb decorates its connection classes with the `overrides` package,
    # which disassembles each class body's caller at import (~0.3 s) only to check that the
    # marked methods exist on a base class; from 3.12 on lancedb uses `typing.override`, a bare
    # marker, and a plain base class. It is given those here while it imports.
    sys.modules["overrides"] = _markers()
    try:
        import lancedb
    finally:
        del sys.modules["overrides"]
    return lancedb


def _markers():
    """A stand-in for the `overrides` package with what lancedb takes from it on 3.12."""
    import types

    def override(method):
        method.__override__ = True
        return method

    class EnforceOverrides:
        pass

    module = types.ModuleType("overrides")
    module.override, module.EnforceOverrides = override, EnforceOverrides
    return module


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _in(column: str, values: list[str]) -> str:
    return f"{column} IN ({', '.join(_quote(v) for v in values)})"


def _columns(table, columns: list[str]) -> pa.Table:
    """Only `columns` of every row (a projected scan: reading whole rows and then selecting
    reads the vectors, or every chunk's text and terms, for nothing), without the storage's
    field metadata (`_UNCOMPRESSED`)."""
    found = table.search().select(columns).limit(None).to_arrow()
    return found.cast(pa.schema([f.remove_metadata() for f in found.schema]))


# The chunks table's text columns are stored uncompressed: LanceDB's default string encoding
# cost a 24,000-file cold index ~0.7 of its ~1.3 CPU seconds of chunk writes, to keep that table
# at 44 MiB instead of 80. The tables are derived and read whole only by a snapshot build; the
# search snapshot, which every search reads, is uncompressed Arrow already.
_UNCOMPRESSED = {"lance-encoding:compression": "none"}


def stored_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` as a table is created with: string and list columns uncompressed. Rows are
    written and read with `schema` itself."""
    return pa.schema([f.with_metadata(_UNCOMPRESSED) if pa.types.is_string(f.type) or pa.types.is_list(f.type)
                      else f for f in schema])


def _vectors_by_sha(table, shas: list[str]) -> dict[str, np.ndarray]:
    """text sha256 -> vector (a float32 row) for the given shas only, in batches of `IN (...)`
    predicates."""
    found: dict[str, np.ndarray] = {}
    wanted = sorted(set(shas)) if shas and table.count_rows() else []  # an empty table: no lookups
    for i in range(0, len(wanted), _IN_BATCH):
        rows = (table.search().where(_in("text_sha", wanted[i:i + _IN_BATCH]))
                .select(["text_sha", "vector"]).limit(None).to_arrow())
        found.update(zip(rows.column("text_sha").to_pylist(), matrix_of(rows.column("vector"))))
    return found


def matrix_of(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A fixed-size-list vector column as a float32 matrix (one row per vector)."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    flat = column.flatten().to_numpy(zero_copy_only=False)
    return flat.reshape(len(column), column.type.list_size).astype(np.float32, copy=False)


def vector_column(vectors: np.ndarray, dims: int) -> pa.FixedSizeListArray:
    """A float32 matrix as a fixed-size-list column (no Python list per vector)."""
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1), pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, dims)


def vectors_table_name(model: str, dims: int) -> str:
    import hashlib

    return f"vectors_{hashlib.sha256(f'{model}|{dims}'.encode()).hexdigest()[:12]}"


def _optimize(table, keep_seconds: float) -> None:
    """Compact `table` and drop its versions older than `keep_seconds` (0: all but the newest,
    which LanceDB warns about; the caller holds the workspace lock)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table.optimize(cleanup_older_than=timedelta(seconds=keep_seconds),
                       delete_unverified=keep_seconds == 0)


class IndexStore:
    """Open index tables of one workspace (creates them when missing)."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.db = _lancedb().connect(str(folder))
        self.append_only = False  # set by a run that found every table empty (see module doc)
        outdated = self._outdated()
        if outdated:  # written by an earlier version: derived, so every table but the vectors
            for name in outdated:  # (the embedding cache) is rebuilt from the files
                self.db.drop_table(name)
        self.files = self.db.create_table("files", schema=FILES, exist_ok=True)
        # a chunks table made before its columns were stored uncompressed is opened as it is
        # (creating it with `exist_ok` and another field metadata raises a schema error)
        self.chunks = (self.db.open_table("chunks") if "chunks" in self.db.list_tables().tables
                       else self.db.create_table("chunks", schema=stored_schema(CHUNKS), exist_ok=True))
        self.links = self.db.create_table("links", schema=LINKS, exist_ok=True)

    def _outdated(self) -> list[str]:
        """All of files/chunks/links present when one of them has other columns than this
        version's (e.g. chunks before tags); none otherwise."""
        present = set(self.db.list_tables().tables)
        tables = {"files": FILES, "chunks": CHUNKS, "links": LINKS}
        if any(name in present and self.db.open_table(name).schema.names != schema.names
               for name, schema in tables.items()):
            return [name for name in tables if name in present]
        return []

    # -- catalog -------------------------------------------------------------------------
    def catalog(self) -> dict[str, CatalogFile]:
        rows = _columns(self.files, ["path", "size", "mtime_ns", "sha256", "pipeline"])
        return {r["path"]: CatalogFile(**r) for r in rows.to_pylist()}

    def catalog_of(self, paths: list[str]) -> dict[str, CatalogFile]:
        """The catalog rows of `paths` only (through the path index: no table scan)."""
        if not paths:
            return {}
        rows = (self.files.search().where(_in("path", paths))
                .select(["path", "size", "mtime_ns", "sha256", "pipeline"]).limit(None).to_arrow())
        return {r["path"]: CatalogFile(**r) for r in rows.to_pylist()}

    def is_empty(self) -> bool:
        return not any(t.count_rows() for t in (self.files, self.chunks, self.links))

    def put_files(self, rows: list[dict]) -> None:
        """Write files rows, replacing the rows of the same paths (one delete through the path
        index and one append: merge-insert joins against the whole table)."""
        if rows:
            if not self.append_only:
                self.delete_files([r["path"] for r in rows])
            self.files.add(rows_table(rows, FILES))

    def delete_files(self, paths: list[str]) -> None:
        for i in range(0, len(paths), _IN_BATCH):
            self.files.delete(_in("path", paths[i:i + _IN_BATCH]))

    # -- chunks and links ----------------------------------------------------------------
    def replace_paths(self, paths: list[str], chunks: list[dict], links: list[dict]) -> None:
        """Drop every chunk and link of `paths`, then add the new rows (`write_paths` for rows
        as dicts)."""
        self.write_paths(paths, [rows_batch(chunks, CHUNKS)] if chunks else [], links)

    def write_paths(self, paths: list[str], chunks: Iterable[pa.RecordBatch],
                    links: list[dict] | list[pa.RecordBatch]) -> None:
        """Replace every chunk and link of `paths`: deletes (unless `append_only`), then the
        chunk batches streamed into one append (one version, none held in memory at once),
        then the links."""
        if not self.append_only:
            self.delete_paths(paths)
        self.chunks.add(pa.RecordBatchReader.from_batches(CHUNKS, chunks), write_parallelism=1)
        if links:  # rows, or record batches of them
            self.links.add(pa.Table.from_batches(links, LINKS) if isinstance(links[0], pa.RecordBatch)
                           else rows_table(links, LINKS))

    def delete_paths(self, paths: list[str]) -> None:
        for i in range(0, len(paths), _IN_BATCH):
            batch = paths[i:i + _IN_BATCH]
            self.chunks.delete(_in("path", batch))
            self.links.delete(_in("source", batch))

    def ensure_key_indexes(self) -> None:
        """A BTREE index on each table's key column, so a delete finds a path's rows without
        a scan (rows added later are scanned until `compact` folds them into the index)."""
        from lancedb.index import BTree

        for name, column in KEYS.items():
            table = getattr(self, name)
            if table.count_rows() and not any(column in i.columns for i in table.list_indices()):
                table.create_index(column, config=BTree())

    def rebuild_key_indexes(self) -> None:
        """Each key index built again from the rows as they are (after a forget: an index folds
        deletes in as a mask and keeps the deleted keys; `compact(0)` then drops the old files)."""
        from lancedb.index import BTree

        for name, column in KEYS.items():
            table = self.db.open_table(name)  # the newest version: a compaction may have run
            if any(column in i.columns for i in table.list_indices()):
                table.create_index(column, config=BTree(), replace=True)
            setattr(self, name, table)

    def chunk_columns(self, columns: list[str]) -> pa.Table:
        return _columns(self.chunks, columns)

    def chunks_by_id(self, ids: list[str], columns: list[str]) -> list[dict]:
        if not ids:
            return []
        columns = ["id", *(c for c in columns if c != "id")]
        rows = (self.chunks.search().where(_in("id", ids)).select(columns)
                .limit(len(ids)).to_arrow().to_pylist())
        order = {chunk_id: n for n, chunk_id in enumerate(ids)}
        return sorted(rows, key=lambda r: order[r["id"]])

    def link_table(self) -> pa.Table:
        return self.links.to_arrow()

    def file_columns(self, columns: list[str]) -> pa.Table:
        return _columns(self.files, columns)

    def count_chunks(self) -> int:
        return self.chunks.count_rows()

    # -- vectors -------------------------------------------------------------------------
    def vectors(self, model: str, dims: int):
        schema = vectors_schema(dims)
        return self.db.create_table(vectors_table_name(model, dims), schema=schema, exist_ok=True)

    def vector_ids(self, model: str, dims: int) -> pa.Array:
        return _columns(self.vectors(model, dims), ["id"]).column("id").combine_chunks()

    def vectors_by_text(self, model: str, dims: int, shas: list[str]) -> dict[str, np.ndarray]:
        """The embedding cache: text sha256 -> vector, for the given shas only (reading every
        vector into Python lists would cost ~1 GB at 100k chunks)."""
        return _vectors_by_sha(self.vectors(model, dims), shas)

    def put_vectors(self, model: str, dims: int, rows: list[dict]) -> None:
        if rows:
            data = pa.Table.from_pylist([{**r, "model": model, "dims": dims} for r in rows],
                                        schema=vectors_schema(dims))
            table = self.vectors(model, dims)
            table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data)

    def add_vectors(self, model: str, dims: int, keys: pa.Table, vectors: np.ndarray) -> None:
        """Append vectors of chunks the table has none of (`backfill_vectors` embeds only
        those): `keys` holds their id, text_sha, path, layer, kind and date, `vectors` a
        row each. An append, not a merge on id (which joins against the whole table)."""
        if not keys.num_rows:
            return
        schema = vectors_schema(dims)
        columns = {"model": pa.array([model] * keys.num_rows, pa.string()),
                   "dims": pa.array(np.full(keys.num_rows, dims, dtype=np.int32)),
                   "vector": vector_column(vectors, dims)}
        data = pa.table([columns[f.name] if f.name in columns else keys.column(f.name).cast(f.type)
                         for f in schema], schema=schema)
        self.vectors(model, dims).add(data)

    def drop_vectors(self, model: str, dims: int, keep: set[str]) -> None:
        table = self.vectors(model, dims)
        stale = sorted(set(_columns(table, ["id"]).column("id").to_pylist()) - keep)
        for i in range(0, len(stale), _IN_BATCH):
            table.delete(_in("id", stale[i:i + _IN_BATCH]))

    def text_shas(self, paths: list[str] | None = None) -> set[str]:
        """The embedded-text sha256s of every vectors table (of the given files only)."""
        shas: set[str] = set()
        for name in self.db.list_tables().tables:
            if not name.startswith("vectors_"):
                continue
            table = self.db.open_table(name)
            parts = [_columns(table, ["text_sha"])] if paths is None else [
                table.search().where(_in("path", paths[i:i + _IN_BATCH])).select(["text_sha"])
                .limit(None).to_arrow() for i in range(0, len(paths), _IN_BATCH)]
            for part in parts:
                shas.update(filter(None, part.column("text_sha").to_pylist()))
        return shas

    def vector_matrix(self, model: str, dims: int) -> tuple[pa.Array, np.ndarray]:
        """(chunk ids, float32 matrix with one row per id) of every stored vector."""
        table = _columns(self.vectors(model, dims), ["id", "vector"]).combine_chunks()
        flat = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        return table.column("id").combine_chunks(), flat.reshape(-1, dims).astype(np.float32, copy=False)

    # -- upkeep --------------------------------------------------------------------------
    def compact(self, keep_seconds: float = 60) -> None:
        """Compact every table and drop versions older than `keep_seconds` (0 after a forget:
        deleted rows must not survive in old versions)."""
        for name in self.db.list_tables().tables:
            _optimize(self.db.open_table(name), keep_seconds)


class EmbeddingCache:
    """Vectors by (model, dims, sha256 of the embedded text), in its own LanceDB folder beside the
    index tables (`metadata/index/embeddings/`): a reindex rebuilds the tables but keeps this, so
    no text is paid for twice, and vectors imported from another system (ReMe) wait here for
    the chunks that need them. Derived (deleting it only costs model calls again); holds no text."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.db = _lancedb().connect(str(folder))

    def _table(self, model: str, dims: int):
        import hashlib

        name = f"cache_{hashlib.sha256(f'{model}|{dims}'.encode()).hexdigest()[:12]}"
        schema = pa.schema([pa.field("text_sha", pa.string(), nullable=False),
                            pa.field("vector", pa.list_(pa.float32(), dims))])
        return self.db.create_table(name, schema=schema, exist_ok=True)

    def get(self, model: str, dims: int, shas: list[str]) -> dict[str, np.ndarray]:
        return _vectors_by_sha(self._table(model, dims), shas)

    def add(self, model: str, dims: int, shas: list[str], vectors: np.ndarray) -> None:
        """Append the vectors (a row each) of texts the cache lacks (`get` found none of them)."""
        if shas:
            data = pa.table([pa.array(shas, pa.string()), vector_column(vectors, dims)],
                            schema=self._table(model, dims).schema)
            self._table(model, dims).add(data)

    def put(self, model: str, dims: int, vectors: dict[str, list[float]]) -> None:
        if vectors:
            data = pa.Table.from_pylist([{"text_sha": sha, "vector": list(map(float, vector))}
                                         for sha, vector in vectors.items()],
                                        schema=self._table(model, dims).schema)
            (self._table(model, dims).merge_insert("text_sha").when_matched_update_all()
             .when_not_matched_insert_all().execute(data))

    def count(self, model: str, dims: int) -> int:
        return self._table(model, dims).count_rows()

    def forget(self, shas: set[str]) -> None:
        """Drop these texts' vectors from every model's cache, old versions included (a forgotten
        text's vector must not outlive it: embeddings can be inverted to approximate text)."""
        wanted = sorted(shas)
        for name in self.db.list_tables().tables if wanted else []:
            table = self.db.open_table(name)
            for i in range(0, len(wanted), _IN_BATCH):
                table.delete(_in("text_sha", wanted[i:i + _IN_BATCH]))
            _optimize(table, 0)
