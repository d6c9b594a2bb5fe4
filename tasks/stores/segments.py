"""Delta segments of the search snapshot: a small change searchable without rebuilding BM25.

A delta generation holds the rows of the files changed since its base's main segment was built
(`docs.arrow`, their cached `terms.arrow`, links, files and vectors) and the paths it replaces
(`removed.json`: every main row of such a path is dead). It is cumulative: the next small change
rewrites the delta with the earlier one's rows folded in, so a reader opens at most two
segments. `memflow index` or a delta past `delta_limit` rows compacts (a full build).

Scores equal a full rebuild's: the main segment keeps each posting's term frequency and each
document's length, and `MergedPostings` recomputes BM25 with the merged statistics (live
documents, their average length, per-term document frequency over live main rows plus delta
rows) in the same floating-point order as `keyword.bm25_parts` (tests/test_delta_segments.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memflow.tasks.stores import keyword
from memflow.tasks.stores.keyword import B, K1, KeywordIndex, Postings

DELTA_MAX_ROWS = 2000  # a delta past this (or past a quarter of the main segment) is compacted


def delta_limit(main_rows: int) -> int:
    """Rows a delta may hold before the next change compacts: rewriting the cumulative delta and
    merging statistics stay cheap below it; a small workspace rebuilds whole (it is cheap)."""
    return min(DELTA_MAX_ROWS, max(64, main_rows // 4))


class _Vocab:
    """Token membership over the main and delta vocabularies (no merged dict is built)."""

    def __init__(self, main: dict[str, int], delta: dict[str, int]):
        self.main, self.delta = main, delta

    def __contains__(self, token: object) -> bool:
        return token in self.main or token in self.delta

    def get(self, token: str, default=None):
        return token if token in self else default


class MergedPostings:
    """BM25 over a main segment's live rows plus a delta's rows (rows `n_main...`), scored with
    the merged statistics. Same interface as `keyword.Postings` (`get_scores`, `doc_freq`,
    `vocab_dict`, `num_docs`)."""

    def __init__(self, main: Postings | None, n_main: int, alive: np.ndarray, delta: tuple | None):
        empty = np.zeros(0, dtype=np.int32)
        self.main = main
        self.alive = alive
        self.delta = delta  # (matrix, vocab, tf, lengths) of the delta rows, or None
        lengths = [main.lengths if main is not None else np.zeros(n_main, dtype=np.int32),
                   delta[3] if delta is not None else empty]
        all_lengths = np.concatenate(lengths)
        live = np.concatenate([alive, np.ones(len(lengths[1]), dtype=bool)])
        self.num_docs = int(live.sum())
        mean = all_lengths[live].sum(dtype=np.float64) / self.num_docs if self.num_docs else 1.0
        # the expression of keyword.bm25_parts, term for term
        self.norm = K1 * ((1 - B) + B * all_lengths / mean)
        self.n_main = n_main
        self.vocab_dict = _Vocab(main.vocab_dict if main is not None else {},
                                 delta[1] if delta is not None else {})
        self._df: dict[str, int] = {}

    def _slices(self, token: str):
        """(row numbers, term frequencies) of the token's postings in each segment."""
        if self.main is not None and token in self.main.vocab_dict:
            t = self.main.vocab_dict[token]
            start, end = int(self.main.indptr[t]), int(self.main.indptr[t + 1])
            rows = np.asarray(self.main.indices[start:end])
            yield rows, np.asarray(self.main.tf[start:end]), self.alive[rows]
        if self.delta is not None and token in self.delta[1]:
            matrix, vocab, tf, _ = self.delta
            t = vocab[token]
            start, end = int(matrix["indptr"][t]), int(matrix["indptr"][t + 1])
            rows = matrix["indices"][start:end]
            yield rows + self.n_main, tf[start:end], None

    def doc_freq(self, token: str) -> int:
        if token not in self._df:
            self._df[token] = sum(int(live.sum()) if live is not None else len(rows)
                                  for rows, _, live in self._slices(token))
        return self._df[token]

    def get_scores(self, tokens: list[str], weights: dict[str, float] | None = None) -> np.ndarray:
        scores = np.zeros(len(self.norm), dtype=np.float32)
        for token in tokens:
            df = self.doc_freq(token)
            idf = np.log1p((self.num_docs - np.array([df]) + 0.5) / (np.array([df]) + 0.5))[0]
            for rows, tf, _ in self._slices(token):
                tf = tf.astype(np.float64)
                part = (idf * tf / (self.norm[rows] + tf)).astype(np.float32)
                if weights is not None:
                    part = part * np.float32(weights.get(token, 1.0))
                np.add.at(scores, rows, part)
        return scores


def delta_rows(index: KeywordIndex) -> int:
    return index.size - (index.main.size if index.main is not None else index.size)


def _same_schema(table: pa.Table, like: pa.Table) -> pa.Table:
    return table.select(like.column_names).cast(like.schema)


def _not_in(table: pa.Table, column: str, values: list[str]) -> pa.Table:
    return table.filter(pc.invert(pc.is_in(table.column(column), value_set=pa.array(values, pa.string()))))


def load_delta(gen: Path, meta: dict, main: KeywordIndex) -> KeywordIndex:
    """The index a delta generation names: `main` (its base, read or reused) plus the delta."""
    read = keyword._read_arrow
    removed = json.loads((gen / "removed.json").read_text(encoding="utf-8"))
    docs = _same_schema(read(gen / "docs.arrow"), main.docs)
    terms = read(gen / "terms.arrow").column("terms")
    alive = pc.invert(pc.is_in(main.docs.column("path"), value_set=pa.array(removed, pa.string())))
    alive = pc.fill_null(alive, True).to_numpy(zero_copy_only=False)
    parts = keyword.bm25_parts(terms)
    postings = MergedPostings(main.retriever, main.size, alive, parts)
    links = pa.concat_tables([_not_in(main.links, "source", removed),
                              _same_schema(read(gen / "links.arrow"), main.links)])
    files = pa.concat_tables([_not_in(main.files, "path", removed),
                              _same_schema(read(gen / "files.arrow"), main.files)])
    vectors = has_vector = None
    if main.vectors is not None and (gen / "vectors.npy").exists():
        vectors = np.load(gen / "vectors.npy")
        has_vector = np.concatenate([main.has_vector, np.load(gen / "has_vector.npy")])
    return KeywordIndex(postings, pa.concat_tables([main.docs, docs]), meta, main.vectors, has_vector,
                        links, files, generation=gen.name,
                        alive=np.concatenate([alive, np.ones(docs.num_rows, dtype=bool)]),
                        main=main, delta_vectors=vectors)


def publish_delta(folder: Path, current: KeywordIndex, paths: set[str], docs: pa.Table,
                  terms: pa.Array, links: pa.Table, files: pa.Table,
                  vectors: np.ndarray | None = None, has_vector: np.ndarray | None = None) -> Path:
    """Publish `current` with every row of `paths` replaced by `docs` (DOC_COLUMNS, with their
    `terms`), `links` and `files` (the new rows of those paths; none for a deleted file) as a
    new delta generation on `current`'s base; returns it. `vectors`/`has_vector` are required
    when the snapshot has vectors."""
    main = current.main or current
    removed = sorted(paths)
    if current.main is not None:  # fold the earlier delta in
        gen = keyword.current_dir(folder)
        if gen is None or gen.name != current.generation:
            raise RuntimeError(f"the search snapshot in {folder} changed under a delta update")
        removed = sorted(set(removed) | set(json.loads((gen / "removed.json").read_text(encoding="utf-8"))))
        earlier = _delta_parts(gen, current)
        keep = pc.invert(pc.is_in(earlier[0].column("path"), value_set=pa.array(sorted(paths), pa.string())))
        keep_np = keep.to_numpy(zero_copy_only=False)
        docs = pa.concat_tables([earlier[0].filter(keep), _same_schema(docs, earlier[0])])
        terms = pa.concat_arrays([earlier[1].filter(keep).combine_chunks(), pa.array(terms, earlier[1].type)])
        links = pa.concat_tables([_not_in(earlier[2], "source", sorted(paths)), _same_schema(links, earlier[2])])
        files = pa.concat_tables([_not_in(earlier[3], "path", sorted(paths)), _same_schema(files, earlier[3])])
        if vectors is not None and earlier[4] is not None:
            vectors = np.concatenate([earlier[4][keep_np], vectors])
            has_vector = np.concatenate([earlier[5][keep_np], has_vector])
    gen = keyword.new_generation(folder)
    keyword._write_arrow(gen / "docs.arrow", docs.select(keyword.DOC_COLUMNS))
    keyword._write_arrow(gen / "terms.arrow", pa.table({"terms": pa.array(terms, pa.list_(pa.string()))}))
    keyword._write_arrow(gen / "links.arrow", links.select(keyword.LINK_COLUMNS))
    keyword._write_arrow(gen / "files.arrow", files.select(keyword.FILE_COLUMNS))
    (gen / "removed.json").write_text(json.dumps(removed), encoding="utf-8")
    meta = {**main.meta, "base": main.generation, "delta_docs": docs.num_rows}
    if vectors is not None and main.vectors is not None:
        keyword.save_vectors(gen, np.asarray(vectors, dtype=np.float32).reshape(-1, main.vectors.shape[1]),
                             has_vector)
        rows = int(main.has_vector[_alive_main(main, removed)].sum()) + int(np.sum(has_vector))
        meta["vectors"] = {**meta["vectors"], "rows": rows}
    live = int(_alive_main(main, removed).sum())
    return keyword.publish(folder, gen, {**meta, "docs": live + docs.num_rows})


def _alive_main(main: KeywordIndex, removed: list[str]) -> np.ndarray:
    found = pc.is_in(main.docs.column("path"), value_set=pa.array(removed, pa.string()))
    return pc.invert(found).to_numpy(zero_copy_only=False)


def _delta_parts(gen: Path, current: KeywordIndex) -> tuple:
    """(docs, terms, links, files, vectors, has_vector) of the delta generation `gen`."""
    read = keyword._read_arrow
    vectors = has = None
    if (gen / "vectors.npy").exists():
        vectors, has = np.load(gen / "vectors.npy"), np.load(gen / "has_vector.npy")
    main = current.main
    return (_same_schema(read(gen / "docs.arrow"), main.docs), read(gen / "terms.arrow").column("terms"),
            _same_schema(read(gen / "links.arrow"), main.links),
            _same_schema(read(gen / "files.arrow"), main.files), vectors, has)
