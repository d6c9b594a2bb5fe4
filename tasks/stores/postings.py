"""BM25 postings read without bm25s: the main segment's saved CSC arrays (`Postings`) and a
main segment's live rows merged with delta segments' (`MergedPostings`), scored with the merged
statistics in the same floating-point order as a full build (`bm25_parts`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

K1, B = 1.5, 0.75  # Lucene BM25


def bm25_matrix(terms: pa.Array | pa.ChunkedArray, counted: np.ndarray | None = None
                ) -> tuple[dict, dict[str, int]] | None:
    """`bm25_parts` without the term frequencies and lengths."""
    parts = bm25_parts(terms, counted)
    return None if parts is None else parts[:2]


def bm25_parts(terms: pa.Array | pa.ChunkedArray, counted: np.ndarray | None = None) -> tuple | None:
    """BM25 (Lucene: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), tf / (tf + k1 (1 - b + b L/avgL)))
    as bm25s's CSC score matrix (one column per term) and vocabulary, from one list of terms per
    document, plus each posting's term frequency (float32, aligned with the scores), each
    document's length (what a delta segment merges) and `counted`; None when there are no terms.
    The statistics (N, df, avgL) are those of the `counted` documents (`statistics_rows`: all
    when None or none); every document is scored with them. Vectorised
    with Arrow and NumPy: bm25s's own `index()` loops in Python per document: ~8x slower at 10k
    notes (benchmarks/bm25_build.py)."""
    chunks = terms.chunks if isinstance(terms, pa.ChunkedArray) else [terms]  # never combined: a copy
    lengths = np.concatenate([np.zeros(0, np.int64)] + [
        pc.fill_null(pc.list_value_length(c), 0).to_numpy(zero_copy_only=False) for c in chunks])
    flat = pa.chunked_array([pc.list_flatten(c) for c in chunks], pa.string())
    if len(flat) == 0:
        return None
    encoded = pc.dictionary_encode(flat)  # one dictionary, the same for every chunk
    del flat
    vocab = encoded.chunk(0).dictionary.to_pylist()
    n_docs, n_vocab = len(lengths), len(vocab)
    key = np.int32 if n_vocab * n_docs < 2**31 else np.int64  # halves the temporaries' peak
    # (term, doc) as one sortable key, made and sorted in place: no temporary copy of the
    # postings is held beside them (the peak of a snapshot build)
    pairs = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in encoded.chunks]).astype(key, copy=False)
    del encoded
    pairs *= key(n_docs)
    pairs += np.repeat(np.arange(n_docs, dtype=key), lengths)
    pairs.sort()
    bounds = np.concatenate([[0], np.flatnonzero(pairs[1:] != pairs[:-1]) + 1, [len(pairs)]])
    tf = np.diff(bounds)
    pairs = pairs[bounds[:-1]]  # by term, then doc
    del bounds
    term, doc = pairs // n_docs, pairs % n_docs
    stat = statistics_rows(counted, n_docs)
    df = np.bincount(term[stat[doc]], minlength=n_vocab)
    idf = np.log1p((int(stat.sum()) - df + 0.5) / (df + 0.5))
    norm = K1 * ((1 - B) + B * lengths[doc] / lengths[stat].mean())
    scores = (idf[term] * tf / (norm + tf)).astype(np.float32)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(term, minlength=n_vocab))]).astype(np.int32)
    matrix = {"data": scores, "indices": doc.astype(np.int32), "indptr": indptr, "num_docs": n_docs}
    return (matrix, {token: n for n, token in enumerate(vocab)}, tf.astype(np.float32),
            lengths.astype(np.int32), None if counted is None else np.asarray(counted, dtype=bool))


def statistics_rows(counted: np.ndarray | None, n_docs: int) -> np.ndarray:
    """The documents whose terms make the BM25 statistics: the `counted` ones, or every one when
    `counted` is None or counts none (a workspace holding only derived notes)."""
    if counted is None or not np.any(counted):
        return np.ones(n_docs, dtype=bool)
    return np.asarray(counted, dtype=bool)


def save_postings(folder: Path, parts: tuple) -> None:
    """Write `bm25_parts` output in bm25s's saved-index format (what `bm25s.BM25.load` and
    `Postings.read` read; tf and lengths beside it), without importing bm25s (its import pulls
    scipy: ~0.3 s and ~14 MB of an index run that never scores through it)."""
    from importlib.metadata import version

    matrix, vocab, tf, lengths, counted = parts
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("data", "indices", "indptr"):
        np.save(folder / f"{name}.csc.index.npy", matrix[name])
    (folder / "vocab.index.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    params = {"k1": K1, "b": B, "delta": 0.5, "method": "lucene", "idf_method": "lucene",
              "dtype": "float32", "int_dtype": "int32", "num_docs": matrix["num_docs"],
              "version": version("bm25s"), "backend": "numpy"}
    (folder / "params.index.json").write_text(json.dumps(params, indent=4), encoding="utf-8")
    np.save(folder / "tf.npy", tf)
    np.save(folder / "lengths.npy", lengths)
    if counted is not None:
        np.save(folder / "counted.npy", counted)


@dataclass
class Postings:
    """A saved bm25s index read without bm25s (whose import pulls scipy: a third of a CLI
    search's start-up): per token, its documents and their precomputed BM25 weights (the CSC
    arrays bm25s saves). `get_scores` matches `bm25s.BM25.get_scores`."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    vocab_dict: dict[str, int]
    num_docs: int
    tf: np.ndarray | None = None  # per posting, aligned with `data` (what a delta merges)
    lengths: np.ndarray | None = None  # per document
    counted: np.ndarray | None = None  # per document: its terms make the statistics (None: all)
    _df: dict = field(default_factory=dict)  # token -> counted document frequency

    @classmethod
    def read(cls, folder: Path) -> "Postings":
        params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
        vocab = json.loads((folder / "vocab.index.json").read_text(encoding="utf-8"))
        counted = np.load(folder / "counted.npy") if (folder / "counted.npy").exists() else None
        if counted is not None and counted.all():
            counted = None  # every document counts
        return cls(np.load(folder / "data.csc.index.npy", mmap_mode="r"),
                   np.load(folder / "indices.csc.index.npy", mmap_mode="r"),
                   np.load(folder / "indptr.csc.index.npy", mmap_mode="r"), vocab, int(params["num_docs"]),
                   np.load(folder / "tf.npy", mmap_mode="r"), np.load(folder / "lengths.npy", mmap_mode="r"),
                   counted)

    @property
    def stat_docs(self) -> int:
        """N of the statistics: the documents counted (`statistics_rows`)."""
        return int(statistics_rows(self.counted, self.num_docs).sum())

    def doc_freq(self, token: str) -> int:
        """Counted documents holding `token`."""
        t = self.vocab_dict[token]
        start, end = int(self.indptr[t]), int(self.indptr[t + 1])
        if self.counted is None or not self.counted.any():
            return end - start
        if token not in self._df:
            self._df[token] = int(self.counted[self.indices[start:end]].sum())
        return self._df[token]

    def get_scores(self, tokens: list[str], weights: dict[str, float] | None = None) -> np.ndarray:
        """BM25 of every document: the sum over `tokens` of each token's score (times its weight)."""
        scores = np.zeros(self.num_docs, dtype=np.float32)
        for token in tokens:
            t = self.vocab_dict[token]
            start, end = int(self.indptr[t]), int(self.indptr[t + 1])
            part = self.data[start:end]
            if weights is not None:
                part = part * np.float32(weights.get(token, 1.0))
            # one add per document (a token's documents are distinct): the sums of `+=`; on
            # int64 rows `np.add.at` is ~3x faster than `+=` (int32 rows: ~1.8x)
            np.add.at(scores, self.indices[start:end].astype(np.int64), part)
        return scores


def _same_counted(main: np.ndarray | None, merged: np.ndarray | None) -> bool:
    """Do main's statistics count the rows the merged ones count among main's?"""
    if main is None:
        return merged is None or bool(merged.all())
    return bool(main.any()) and merged is not None and np.array_equal(main, merged)


class _Vocab:
    """Token membership over the main and delta vocabularies (no merged dict is built)."""

    def __init__(self, main: dict[str, int], deltas: list[dict[str, int]]):
        self.main, self.deltas = main, deltas

    def __contains__(self, token: object) -> bool:
        return token in self.main or any(token in vocab for vocab in self.deltas)

    def get(self, token: str, default=None):
        return token if token in self else default


class MergedPostings:
    """BM25 over a main segment's live rows plus delta segments' live rows, scored with the
    merged statistics. Same interface as `Postings` (`get_scores`, `doc_freq`, `vocab_dict`,
    `num_docs`). `live`: every row's liveness (main's rows, then each delta's); `deltas`: per
    delta segment (its first row, its `bm25_parts` or None, its rows' lengths)."""

    def __init__(self, main: Postings | None, n_main: int, live: np.ndarray, deltas: list[tuple],
                 counted: np.ndarray | None = None):
        self.main = main
        self.deltas = deltas
        all_lengths = np.concatenate([main.lengths if main is not None else np.zeros(n_main, dtype=np.int32),
                                      *(lengths for _, _, lengths in deltas)])
        alive = live[:n_main]
        self.num_docs = int(live.sum())
        # the live documents `counted` (main rows, then delta rows) make the statistics
        stat = live & counted if counted is not None else live
        self.stat = stat if stat.any() else live
        self.stat_docs = int(self.stat.sum())
        # main's rows counted here are main's own counted rows but the replaced ones (`_dead`):
        # a token's count is then main's, kept across deltas, less the few replaced rows
        self._dead = None
        mine = counted[:n_main] if counted is not None else None
        if main is not None and stat.any() and _same_counted(main.counted, mine):
            self._dead = np.flatnonzero(~alive & (mine if mine is not None else True))
        mean = all_lengths[self.stat].sum(dtype=np.float64) / self.stat_docs if self.stat_docs else 1.0
        # the expression of bm25_parts, term for term
        self.norm = K1 * ((1 - B) + B * all_lengths / mean)
        self.n_main = n_main
        self.vocab_dict = _Vocab(main.vocab_dict if main is not None else {},
                                 [parts[1] for _, parts, _ in deltas if parts is not None])
        self._df: dict[str, int] = {}

    def _slices(self, token: str):
        """(row numbers here, term frequencies, from main?) of the token's postings in each segment."""
        if self.main is not None and token in self.main.vocab_dict:
            t = self.main.vocab_dict[token]
            start, end = int(self.main.indptr[t]), int(self.main.indptr[t + 1])
            rows = np.asarray(self.main.indices[start:end])
            yield rows, np.asarray(self.main.tf[start:end]), True
        for first, parts, _ in self.deltas:
            if parts is not None and token in parts[1]:
                matrix, vocab, tf = parts[:3]
                t = vocab[token]
                start, end = int(matrix["indptr"][t]), int(matrix["indptr"][t + 1])
                yield matrix["indices"][start:end] + first, tf[start:end], False

    def doc_freq(self, token: str) -> int:
        """Live counted documents holding `token`: main's count (kept by main across deltas)
        less its replaced rows holding it, plus the deltas' live ones, without reading main's
        postings when its statistics hold (a common word's list is ~100k rows at 72,000 files)."""
        if token not in self._df:
            df = 0
            for rows, _, from_main in self._slices(token):
                if from_main and self._dead is not None:
                    found = np.searchsorted(rows, self._dead)  # a token's rows are ascending
                    inside = found < len(rows)
                    df += self.main.doc_freq(token) - int((rows[found[inside]] == self._dead[inside]).sum())
                else:
                    df += int(self.stat[rows].sum())
            self._df[token] = df
        return self._df[token]

    def get_scores(self, tokens: list[str], weights: dict[str, float] | None = None) -> np.ndarray:
        scores = np.zeros(len(self.norm), dtype=np.float32)
        for token in tokens:
            df = self.doc_freq(token)
            idf = np.log1p((self.stat_docs - np.array([df]) + 0.5) / (np.array([df]) + 0.5))[0]
            for rows, tf, _ in self._slices(token):
                # idf * tf / (norm + tf) as bm25_parts computes it (same operations, same
                # order: the same float64 values), in place: two temporaries, not five
                rows = rows.astype(np.int64)  # (take and add.at are faster on int64 rows)
                num = tf.astype(np.float64)
                den = np.take(self.norm, rows)
                den += num
                num *= idf
                num /= den
                part = num.astype(np.float32)
                if weights is not None:
                    part *= np.float32(weights.get(token, 1.0))
                np.add.at(scores, rows, part)  # distinct rows within a segment's postings: as `+=`
        return scores
