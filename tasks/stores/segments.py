"""Delta segments of the search snapshot: a small change searchable without rebuilding BM25.

A delta generation holds the rows of the files changed since its base's main segment was built
(`docs.arrow`, their cached `terms.arrow`, links, files and vectors) and the paths it replaces
(`removed.json`: every main row of such a path is dead). It is cumulative: the next small change
rewrites the delta with the earlier one's rows folded in, so a reader opens at most two
segments. `memflow index` or a delta past `delta_limit` rows compacts (a full build).

Scores equal a full rebuild's: the main segment keeps each posting's term frequency and each
document's length, and `postings.MergedPostings` recomputes BM25 with the merged statistics (live
documents, their average length, per-term document frequency over live main rows plus delta
rows) in the same floating-point order as `postings.bm25_parts` (tests/test_delta_segments.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memflow.tasks.stores import keyword, rowmaps
from memflow.tasks.stores.keyword import KeywordIndex

DELTA_MAX_ROWS = 2000  # a delta past this (or past a quarter of the main segment) is compacted


def delta_limit(main_rows: int) -> int:
    """Rows a delta may hold before the next change compacts: rewriting the cumulative delta and
    merging statistics stay cheap below it; a small workspace rebuilds whole (it is cheap)."""
    return min(DELTA_MAX_ROWS, max(64, main_rows // 4))


def delta_rows(index: KeywordIndex) -> int:
    return index.size - (index.main.size if index.main is not None else index.size)


def publish_delta(folder: Path, current: KeywordIndex, paths: set[str], docs: pa.Table,
                  terms: pa.Array, links: pa.Table, files: pa.Table,
                  vectors: np.ndarray | None = None, has_vector: np.ndarray | None = None,
                  tables_behind: bool = False, counted: np.ndarray | None = None,
                  lazy: bool = False) -> Path:
    """Publish `current` with every row of `paths` replaced by `docs` (DOC_COLUMNS, with their
    `terms`), `links` and `files` (the new rows of those paths; none for a deleted file) as a
    new delta generation on `current`'s base; returns it. `vectors`/`has_vector` are required
    when the snapshot has vectors; `counted`: which of `docs` make the BM25 statistics (None:
    all, see `postings.bm25_parts`). `tables_behind`: the LanceDB tables have not taken these
    rows (`delta_tables` gives what they lack; `mark_tables_level` once they have). `lazy`:
    nothing is fsynced (`keyword.publish`)."""
    main = current.main or current
    removed = sorted(paths)
    counted = np.ones(docs.num_rows, dtype=bool) if counted is None else np.asarray(counted, dtype=bool)
    gen_of_current = None
    if current.main is not None:  # fold the earlier delta in
        gen = gen_of_current = keyword.current_dir(folder)
        if gen is None or gen.name != current.generation:
            raise RuntimeError(f"the search snapshot in {folder} changed under a delta update")
        removed = sorted(set(removed) | set(json.loads((gen / "removed.json").read_text(encoding="utf-8"))))
        earlier = _delta_parts(gen, current)
        keep = pc.invert(pc.is_in(earlier[0].column("path"), value_set=pa.array(sorted(paths), pa.string())))
        keep_np = keep.to_numpy(zero_copy_only=False)
        docs = pa.concat_tables([earlier[0].filter(keep), keyword.same_schema(docs, earlier[0])])
        terms = pa.concat_arrays([earlier[1].filter(keep).combine_chunks(), pa.array(terms, earlier[1].type)])
        counted = np.concatenate([earlier[6][keep_np], counted])
        links = pa.concat_tables([keyword.rows_not_in(earlier[2], "source", sorted(paths)), keyword.same_schema(links, earlier[2])])
        files = pa.concat_tables([keyword.rows_not_in(earlier[3], "path", sorted(paths)), keyword.same_schema(files, earlier[3])])
        if vectors is not None and earlier[4] is not None:
            vectors = np.concatenate([earlier[4][keep_np], vectors])
            has_vector = np.concatenate([earlier[5][keep_np], has_vector])
    gen = keyword.new_generation(folder)
    keyword._write_arrow(gen / "docs.arrow", docs.select(keyword.DOC_COLUMNS))
    keyword._write_arrow(gen / "terms.arrow", pa.table({"terms": pa.array(terms, pa.list_(pa.string())),
                                                        "counted": pa.array(counted, pa.bool_())}))
    keyword._write_arrow(gen / "links.arrow", links.select(keyword.LINK_COLUMNS))
    keyword._write_arrow(gen / "files.arrow", files.select(keyword.FILE_COLUMNS))
    (gen / "removed.json").write_text(json.dumps(removed), encoding="utf-8")
    meta = {**main.meta, "base": main.generation, "delta_docs": docs.num_rows}
    if tables_behind or (current.main is not None and tables_lag(gen_of_current)):  # cumulative
        meta["tables_behind"] = True
    if vectors is not None and main.vectors is not None:
        keyword.save_vectors(gen, np.asarray(vectors, dtype=np.float32).reshape(-1, main.vectors.shape[1]),
                             has_vector)
        rows = int(main.has_vector[_alive_main(main, removed)].sum()) + int(np.sum(has_vector))
        meta["vectors"] = {**meta["vectors"], "rows": rows}
    live = int(_alive_main(main, removed).sum())
    return keyword.publish(folder, gen, {**meta, "docs": live + docs.num_rows},
                           durable=bool(meta.get("tables_behind")), lazy=lazy)


TABLES_LEVEL = "tables-level"  # in a `tables_behind` delta generation once the tables took its rows


def delta_tables(gen: Path) -> tuple[list[str], pa.Table, pa.Table, pa.Table] | None:
    """What the LanceDB tables lack of delta generation `gen`: (the paths it replaces, their
    chunks rows with terms, links rows, files rows); None when they have it all (a main
    segment, a delta whose tables were written first, or one marked level since)."""
    if not tables_lag(gen):
        return None
    read = keyword._read_arrow
    removed = json.loads((gen / "removed.json").read_text(encoding="utf-8"))
    docs = read(gen / "docs.arrow").select(keyword.CHUNK_COLUMNS)
    chunks = docs.append_column("terms", read(gen / "terms.arrow").column("terms"))
    return removed, chunks, read(gen / "links.arrow"), read(gen / "files.arrow")


def tables_lag(gen: Path) -> bool:
    """Delta generation `gen` holds rows the tables have not taken."""
    meta = json.loads((gen / "meta.json").read_text(encoding="utf-8"))
    return bool(meta.get("base") and meta.get("tables_behind")) and not (gen / TABLES_LEVEL).exists()


def mark_tables_level(gen: Path) -> None:
    (gen / TABLES_LEVEL).write_text("the LanceDB tables hold this delta's rows\n", encoding="utf-8")


def _alive_main(main: KeywordIndex, removed: list[str]) -> np.ndarray:
    return rowmaps.keep_mask(main, "docs", "path", removed)


def _delta_parts(gen: Path, current: KeywordIndex) -> tuple:
    """(docs, terms, links, files, vectors, has_vector, counted) of the delta generation `gen`."""
    read = keyword._read_arrow
    vectors = has = None
    if (gen / "vectors.npy").exists():
        vectors, has = np.load(gen / "vectors.npy"), np.load(gen / "has_vector.npy")
    main = current.main
    terms = read(gen / "terms.arrow")
    counted = (terms.column("counted").to_numpy(zero_copy_only=False) if "counted" in terms.column_names
               else np.ones(terms.num_rows, dtype=bool))
    return (keyword.same_schema(read(gen / "docs.arrow"), main.docs), terms.column("terms"),
            keyword.same_schema(read(gen / "links.arrow"), main.links),
            keyword.same_schema(read(gen / "files.arrow"), main.files), vectors, has, counted)
