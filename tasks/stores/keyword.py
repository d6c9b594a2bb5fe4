"""The search snapshot, persisted under `metadata/index/keyword/<tokenizer-id>/`: the BM25 keyword
index (bm25s), the rows a result shows, the link graph and the files' names and, when an
embedding model is on, the chunk vectors. A search reads nothing else.

The one module that imports bm25s. bm25s cannot append, so every update rebuilds the index from
the token lists cached per chunk in the chunks table: tokenizing is done only for changed chunks,
the score matrix is computed here in bm25s's format (vectorised; bm25s retrieves from it), and an
incremental update scores exactly like a full rebuild.

Vectors are a row-aligned float32 matrix (`vectors.npy`, unit rows, memory-mapped) searched
exactly with one matrix product under the same filter mask as BM25: at 100k x 384 that costs
~9 ms with recall 1.0, where LanceDB took ~140 ms flat and ~35 ms with IVF_FLAT at recall ~0.9
(benchmarks/hybrid.py). The LanceDB vectors table stays the store and embedding cache.

Each build is written to a fresh `gen-<n>/` folder; the `CURRENT` file is then replaced
atomically to point at it, so readers never see half an index. Readers never see a generation
disappear either: a build keeps the previous generation, and removes older ones only once they
were superseded `GRACE_SECONDS` ago; a reader that still loses its generation mid-open (a slow
open across two publishes) opens the new current one instead, once.

A small change is published as a *delta* generation (stores.segments): a manifest naming the
main segment of an earlier generation (its `base`) and the delta segments (`seg-*/`, each
written once, merged in levels) holding the changed files' rows; neither is copied. Scores
merge the segments' statistics at query time, so they equal a full rebuild's. A base and a
delta segment are kept while any generation that may still be read names them, under the same
grace rule; a full build (compaction) publishes a main segment again.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memflow.tasks.stores import levels, rowmaps
from memflow.tasks.stores.levels import same_schema  # noqa: F401 (segments and incremental use it here)
from memflow.tasks.stores.files import atomic_write_text, fsync_tree
from memflow.tasks.stores.postings import (  # noqa: F401
    B, K1, MergedPostings, Postings, bm25_matrix, bm25_parts, save_postings)

# Row i of docs.arrow is BM25 document i: filter columns plus what a result shows, so a keyword
# search reads a memory-mapped Arrow file and never queries the tables.
CHUNK_COLUMNS = ["id", "path", "layer", "kind", "date", "start_line", "end_line", "heading_path",
                 "text", "name", "description", "tags", "line_terms"]  # read from the chunks table
DOC_COLUMNS = [*CHUNK_COLUMNS, "superseded_lines", "superseded_until", "superseded_parts"]  # derived
# 2: links, files and vectors joined BM25 and the result rows; 3: superseded; 4: superseded_on;
# 5: superseded per line (the replaced line numbers and the day each was replaced)
# 6: each main segment keeps its term frequencies and document lengths (delta segments merge them)
# 7: frontmatter tags per row (a filter column like layer and date); 8: the files rows whole
# (size, mtime, sha256, pipeline: a write's delta is published before the tables take it)
# 9: BM25 statistics over the evidence (`counted.npy`, a delta's `counted` column: index.statistics)
# 10: each row's per-line search terms (`line_terms`: packing reads them, not tokenizes its lines)
# 11: which pieces of a replaced long message are replaced (`superseded_parts`, 0: the whole line)
SNAPSHOT_FORMAT = 11
# The link graph and the files' names, so link expansion needs no table query either.
LINK_COLUMNS = ["source", "line", "target", "anchor", "label", "kind"]
# every column of the files table: a small change publishes a delta before (or without) the
# tables taking it, so the snapshot is the catalog that `index_paths` plans against
FILE_COLUMNS = ["path", "layer", "kind", "size", "mtime_ns", "sha256", "pipeline", "name", "description"]
# A generation older than the previous one is removed this long after it was superseded: a
# search that read CURRENT just before has long finished opening its files by then.
GRACE_SECONDS = 10.0


class SnapshotOutdated(LookupError):
    """The snapshot was written by an older version: the next index run rebuilds it."""


@dataclass
class KeywordIndex:
    retriever: "Postings | None"  # the saved BM25 matrix
    docs: pa.Table  # DOC_COLUMNS, row i = BM25 document i
    meta: dict
    vectors: np.ndarray | None = None  # (docs, dims) float32 unit rows, or None
    has_vector: np.ndarray | None = None  # row i has a vector
    links: pa.Table | None = None  # LINK_COLUMNS, every link of the workspace
    files: pa.Table | None = None  # FILE_COLUMNS (the files table's rows), one row per indexed file
    _rows: dict[str, int] | None = None
    masks: dict = field(default_factory=dict)  # filter key -> boolean row mask
    generation: str = ""  # the `gen-<n>` folder it was read from
    alive: np.ndarray | None = None  # with a delta: False for main rows a delta replaced
    # with a delta and vectors: each delta segment's vectors, oldest first (rows follow `starts`);
    # kept apart and searched one by one, so a new generation copies none of them
    delta_vectors: tuple[np.ndarray, ...] | None = None
    main: "KeywordIndex | None" = None  # with a delta: the base's main segment (reused when re-read)
    # with a delta: link/file row -> itself, or -1 when a later segment replaced it, so link
    # expansion reuses the main segment's maps instead of rebuilding them for every delta.
    # `links`/`files` then hold every segment's rows whole (replaced ones too), main's first:
    # read them by `rowmaps.live_rows`, or whole by `live_links`/`live_files`.
    link_new: np.ndarray | None = None
    file_new: np.ndarray | None = None
    segments: tuple = ()  # with a delta: its delta segments (stores.segments), oldest first
    starts: dict | None = None  # with a delta: table -> the row where each delta segment starts
    keeps: dict | None = None  # with a delta: table -> per part (main, segments) its live rows

    @property
    def vector_model(self) -> str | None:
        return (self.meta.get("vectors") or {}).get("model")

    @property
    def size(self) -> int:
        return self.docs.num_rows

    @property
    def base(self) -> str:
        """The generation whose main segment this index searches (its own without a delta)."""
        return self.main.generation if self.main is not None else self.generation

    def vector(self, row: int) -> np.ndarray:
        """Row `row`'s vector (main's, or the delta segment's that holds the row)."""
        if self.main is None or row < self.main.size:
            return self.vectors[row]
        part = int(np.searchsorted(self.starts["docs"], row, side="right")) - 1
        return self.delta_vectors[part][row - int(self.starts["docs"][part])]

    def row_of(self, chunk_id: str) -> int | None:
        if self.main is not None:  # a delta: the newest segment's live row, else main's
            for segment, start in zip(reversed(self.segments), reversed(self.starts["docs"])):
                found = segment.row_of(chunk_id)
                if found is not None and self.alive[start + found]:
                    return int(start + found)
            found = self.main.row_of(chunk_id)
            return found if found is not None and self.alive[found] else None
        if self._rows is None:
            ids = self.docs.column("id").to_pylist()
            self._rows = {cid: n for n, cid in enumerate(ids)}
        return self._rows.get(chunk_id)

    def links_of(self, paths: list[str]) -> list[dict]:
        """Out-links from and in-links to `paths`, in link-table order."""
        if self.links is None:
            return []
        numbers = np.union1d(rowmaps.live_rows(self, "links", "source", paths),
                             rowmaps.live_rows(self, "links", "target", paths))
        return _take(self.links, numbers.tolist())

    def live_links(self) -> pa.Table | None:
        """Every link of the workspace (a delta's replaced main rows left out)."""
        return self._live(self.links, self.link_new)

    def live_files(self) -> pa.Table | None:
        """Every indexed file's row (a delta's replaced main rows left out)."""
        return self._live(self.files, self.file_new)

    @staticmethod
    def _live(table: pa.Table | None, new: np.ndarray | None) -> pa.Table | None:
        if table is None or new is None:
            return table
        return table.filter(pa.array(new >= 0))

    def file_info(self, paths: list[str], columns: tuple[str, ...] = ("name", "description", "kind")) -> dict[str, dict]:
        """path and `columns` (name, description and kind unless told) of the indexed files
        among `paths`."""
        if self.files is None:
            return {}
        table = self.files.select(["path", *columns])
        return {row["path"]: row for row in _take(table, rowmaps.live_rows(self, "files", "path", paths).tolist())}

    def rows(self, numbers: list[int]) -> list[dict]:
        # Scalar reads from the one record batch: `take` + `to_pylist` cost ~0.4 ms for 5 rows.
        return _take(self.docs, numbers)


def _take(table: pa.Table | None, numbers: list[int]) -> list[dict]:
    return [] if table is None else rowmaps.row_dicts(table, numbers)


def current_dir(folder: Path) -> Path | None:
    pointer = folder / "CURRENT"
    if not pointer.exists():
        return None
    name = pointer.read_text(encoding="utf-8").strip()  # empty: torn by a crash (never written so)
    return folder / name if name and (folder / name).is_dir() else None


def with_current(folder: Path, read: Callable[[Path], object]) -> object:
    """`read(current generation)`, or None without a snapshot. When the generation's files
    vanish under the read (a build removed it after publishing twice), the read is done once
    more on the generation CURRENT names now; a second loss is raised."""
    gen = current_dir(folder)
    if gen is None:
        return None
    try:
        return read(gen)
    except FileNotFoundError:
        newer = current_dir(folder)
        if newer is None or newer == gen:
            raise
        return read(newer)


def read_meta(folder: Path) -> dict | None:
    return with_current(folder, lambda gen: json.loads((gen / "meta.json").read_text(encoding="utf-8")))


def _write_arrow(path: Path, table: pa.Table) -> None:
    with pa.ipc.new_file(str(path), table.schema) as writer:
        # One record batch: `take` across thousands of small batches costs milliseconds.
        writer.write_table(table.combine_chunks(), max_chunksize=1 << 30)


_read_arrow = levels.read_arrow


def bm25_retriever(terms: pa.Array | pa.ChunkedArray, parts=None):
    """A bm25s.BM25 over `bm25_parts(terms)` (or the `parts` given), ready to score and save;
    None without terms."""
    import bm25s

    built = parts or bm25_parts(terms)
    if built is None:
        return None
    retriever = bm25s.BM25(method="lucene", k1=K1, b=B)
    retriever.scores, retriever.vocab_dict = built[:2]
    retriever.nonoccurrence_array = None
    retriever.unique_token_ids_set = set(retriever.vocab_dict.values())
    return retriever


def build(folder: Path, docs: pa.Table, terms: pa.Array | pa.ChunkedArray | None, meta: dict,
          links: pa.Table, files: pa.Table,
          vectors: np.ndarray | None = None, has_vector: np.ndarray | None = None,
          parts: tuple | None = None) -> Path:
    """Build and swap in a new generation (a main segment); older generations are removed.
    `vectors` (one row per document, any scale) and `has_vector` come with
    `meta["vectors"] = {"model", "dims"}`. `parts`: `bm25_parts(terms)` made already (then
    `terms` may be None)."""
    gen = new_generation(folder)
    if parts is None and terms is not None:
        parts = bm25_parts(terms)
    if parts is not None:
        save_postings(gen / "bm25", parts)
    _write_arrow(gen / "docs.arrow", docs.select(DOC_COLUMNS))
    _write_arrow(gen / "links.arrow", links.select(LINK_COLUMNS))
    _write_arrow(gen / "files.arrow", files.select(FILE_COLUMNS))
    if vectors is not None:
        save_vectors(gen, vectors, has_vector)
    return publish(folder, gen, {**meta, "docs": docs.num_rows, "format": SNAPSHOT_FORMAT})


def new_generation(folder: Path) -> Path:
    """A fresh, empty `gen-<n>` folder numbered after every existing one."""
    folder.mkdir(parents=True, exist_ok=True)
    number = 1 + max((n for n, _ in _numbered(folder)), default=0)
    gen = folder / f"gen-{number}"
    gen.mkdir()
    return gen


def save_vectors(gen: Path, vectors: np.ndarray, has_vector: np.ndarray) -> None:
    np.save(gen / "vectors.npy", unit_rows(vectors))
    np.save(gen / "has_vector.npy", np.asarray(has_vector, dtype=bool))


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """`vectors` scaled to unit rows (a zero row stays zero), float32."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0).astype(np.float32)


def publish(folder: Path, gen: Path, meta: dict, durable: bool = False, lazy: bool = False) -> Path:
    """Write `gen`'s meta.json, point CURRENT at it (atomically), remove expired generations
    and the delta segments no generation left names (after a delta, at most once a second).
    `durable`: `gen`'s files reach the disk before CURRENT names it (a delta whose rows the
    tables have not taken yet: after a power loss CURRENT must not name a torn generation).
    `lazy`: nothing is fsynced, CURRENT neither (ground.durability: this boot's index writes
    may be lost to a crash, which is noticed and rebuilds the index)."""
    (gen / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    if durable and not lazy:
        fsync_tree(gen)
    atomic_write_text(folder / "CURRENT", gen.name, durable=not lazy)
    swept = _SWEPT.get(folder)
    if swept is None or not meta.get("base") or time.monotonic() - swept >= SWEEP_SECONDS:
        for old in expired_generations(folder, int(gen.name[4:]), time.time()):
            shutil.rmtree(old, ignore_errors=True)
        drop_unnamed_segments(folder)
        _SWEPT[folder] = time.monotonic()
    return gen


# A process publishing deltas back to back removes what expired at most once a second: a sweep
# looks at every generation kept in the grace period (~10 s of writes), and a write must not
# pay for the writes before it. A main build always sweeps.
SWEEP_SECONDS = 1.0
_SWEPT: dict[Path, float] = {}


SEGMENT_PREFIX = "seg-"  # a delta segment's folder (stores.segments)


def drop_unnamed_segments(folder: Path) -> None:
    """Remove the delta segments no generation names (merged away, a dropped generation's, or
    left by a writer that died before publishing). The caller holds the workspace lock: no
    segment is being written."""
    named: set[str] = set()
    names = os.listdir(folder)
    for name in names:
        if name.startswith("gen-"):  # (one without meta.json: a build under way, not ours, or dying)
            named.update(segment for segment, _level in (_meta(folder / name) or {}).get("segments", []))
    for name in names:
        if name.startswith(SEGMENT_PREFIX) and name not in named:
            shutil.rmtree(folder / name, ignore_errors=True)


_METAS: dict[Path, tuple] = {}  # meta.json -> (its identity, its content): written once per generation


def _meta(gen: Path) -> dict | None:
    """A generation's meta.json (None: not published, or being removed), parsed once per
    process while the file stays the same one (a publish writes it once; the stat is what a
    write pays for each generation kept in the grace period, not a read and a parse)."""
    path = gen / "meta.json"
    try:
        st = os.stat(path)
        identity = (st.st_ino, st.st_mtime_ns, st.st_size)
        known = _METAS.get(path)
        if known is not None and known[0] == identity:
            return known[1]
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):  # unpublished, or being removed
        return None
    if len(_METAS) > 4096:
        _METAS.clear()
    _METAS[path] = (identity, meta)
    return meta


def _numbered(folder: Path) -> list[tuple[int, str]]:
    """(number, name) of every `gen-<n>` folder (a listing, no Path per entry)."""
    return [(int(name[4:]), name) for name in os.listdir(folder)
            if name.startswith("gen-") and name[4:].isdigit()]


def base_of(gen: Path) -> str | None:
    """The generation whose main segment a delta generation searches (None: a main segment)."""
    return (_meta(gen) or {}).get("base")


def drop_old_generations(folder: Path) -> None:
    """Remove every generation but the current one, grace or not (`memflow forget`: no old
    snapshot may keep forgotten text; a reader opening one then opens the current one)."""
    gen = current_dir(folder)
    keep = {gen.name, base_of(gen)} if gen is not None else set()
    for old in folder.glob("gen-*"):
        if gen is not None and old.name not in keep:
            shutil.rmtree(old, ignore_errors=True)
    drop_unnamed_segments(folder)


def expired_generations(folder: Path, current: int, now: float,
                        grace: float = GRACE_SECONDS) -> list[Path]:
    """Generations a build may remove: older than the previous one (which readers that read
    CURRENT before the swap may still be opening) and superseded more than `grace` seconds ago
    (the time the next generation's meta.json was written, just before it was published). The
    base of a generation that is kept is kept too."""
    numbered = sorted((n, folder / name) for n, name in _numbered(folder) if n <= current)
    expired = []
    for (_, gen), (_, successor) in zip(numbered[:-2], numbered[1:-1]):
        try:
            superseded = (successor / "meta.json").stat().st_mtime
        except FileNotFoundError:  # a build that died before publishing it
            superseded = successor.stat().st_mtime
        if now - superseded > grace:
            expired.append(gen)
    gone = set(expired)
    kept = [gen for _, gen in numbered if gen not in gone]
    needed = {base_of(gen) for gen in kept}
    return [gen for gen in expired if gen.name not in needed]


def layer_counts(folder: Path) -> dict[str, int]:
    """Chunks per layer in the current snapshot (reads two columns; no BM25 load)."""
    layers = with_current(folder, _layers)
    counts: dict[str, int] = {}
    for layer in layers or []:
        counts[layer] = counts.get(layer, 0) + 1
    return counts


def _layers(gen: Path) -> list[str]:
    base = base_of(gen)
    if base is None:
        found = gen / "docs.arrow"
        return _read_arrow(found).column("layer").to_pylist() if found.exists() else []
    removed, docs, *_ = levels.live_union(levels.generation_segments(gen))
    main = _read_arrow(gen.parent / base / "docs.arrow")
    live = pc.invert(pc.is_in(main.column("path"), value_set=pa.array(removed, pa.string())))
    return main.filter(live).column("layer").to_pylist() + docs.column("layer").to_pylist()


def load(folder: Path, previous: KeywordIndex | None = None) -> KeywordIndex | None:
    """The current snapshot, or None without one (see `with_current`). `previous`: an index read
    before, whose main segment is reused when the current generation is a delta on it."""
    return with_current(folder, lambda gen: _load_generation(gen, previous))


_OPEN: dict[Path, KeywordIndex] = {}


def current(folder: Path) -> KeywordIndex | None:
    """The current snapshot, cached per process until CURRENT names another generation; a delta
    generation on the cached one's base reuses its main segment (only the delta is read)."""
    gen = current_dir(folder)
    if gen is None:
        return None
    cached = _OPEN.get(folder)
    if cached is not None and cached.generation == gen.name:
        return cached
    index = load(folder, cached)
    if index is not None:
        _OPEN[folder] = index
    return index


def _load_generation(gen: Path, previous: KeywordIndex | None = None) -> KeywordIndex:
    meta = json.loads((gen / "meta.json").read_text(encoding="utf-8"))
    if meta.get("format") != SNAPSHOT_FORMAT:
        raise SnapshotOutdated(f"the search snapshot in {gen} has format {meta.get('format', 1)}, "
                               f"this version reads {SNAPSHOT_FORMAT}")
    if meta.get("base"):
        main = (previous.main or previous) if previous is not None else None
        if main is None or main.generation != meta["base"]:
            main, previous = _load_generation(gen.parent / meta["base"]), None
        return load_delta(gen, meta, main, previous)
    docs = _read_arrow(gen / "docs.arrow")
    retriever = Postings.read(gen / "bm25") if (gen / "bm25").is_dir() else None
    vectors = has_vector = None
    if (gen / "vectors.npy").exists():
        vectors = np.load(gen / "vectors.npy", mmap_mode="c")  # writable view for torch; never written
        has_vector = np.load(gen / "has_vector.npy")
    links, files = _read_arrow(gen / "links.arrow"), _read_arrow(gen / "files.arrow")
    return KeywordIndex(retriever, docs, meta, vectors, has_vector, links, files, generation=gen.name)


def rows_not_in(table: pa.Table, column: str, values: list[str]) -> pa.Table:
    return table.filter(pc.invert(pc.is_in(table.column(column), value_set=pa.array(values, pa.string()))))


def load_delta(gen: Path, meta: dict, main: KeywordIndex,
               previous: KeywordIndex | None = None) -> KeywordIndex:
    """The index a delta generation names: `main` (its base, read or reused) plus its delta
    segments, each read once per process; `previous` (an index read before on the same base)
    lends its masks of replaced rows, so only the segments new since are looked up."""
    if "segments" not in meta:
        raise SnapshotOutdated(f"the delta generation {gen} was written by an older version")
    segs = [levels.open_segment(gen.parent / name, main) for name, _level in meta["segments"]]
    levels.forget_read(gen.parent, {s.name for s in segs})
    keeps = levels.replaced_masks(main, segs, previous)
    alive = np.concatenate(keeps["docs"])
    starts = {table: np.cumsum([getattr(main, table).num_rows] + [getattr(s, table).num_rows for s in segs])[:-1]
              for table, _ in levels.KEYED}
    postings = MergedPostings(main.retriever, main.size, alive,
                              [(int(start), *s.parts()) for s, start in zip(segs, starts["docs"])],
                              levels.merged_counted(main, segs))
    link_keep, file_keep = np.concatenate(keeps["links"]), np.concatenate(keeps["files"])
    delta_vectors, has_vector = None, None
    if main.vectors is not None and all(s.vectors is not None for s in segs):
        delta_vectors = tuple(s.vectors for s in segs)
        has_vector = np.concatenate([main.has_vector, *(s.has_vector for s in segs)])
    return KeywordIndex(postings, pa.concat_tables([main.docs, *(s.docs for s in segs)]), meta, main.vectors,
                        has_vector, pa.concat_tables([main.links, *(s.links for s in segs)]),
                        pa.concat_tables([main.files, *(s.files for s in segs)]), generation=gen.name,
                        alive=alive, main=main, delta_vectors=delta_vectors,
                        link_new=np.where(link_keep, np.arange(len(link_keep)), -1),
                        file_new=np.where(file_keep, np.arange(len(file_keep)), -1),
                        segments=tuple(segs), starts=starts, keeps=keeps)


def idf(index: KeywordIndex, tokens: list[str]) -> dict[str, float]:
    """BM25 (lucene) idf of each query token the index knows: how much a match on it says."""
    postings = index.retriever
    if postings is None:
        return {}
    out = {}
    for token in dict.fromkeys(tokens):
        df = postings.doc_freq(token) if token in postings.vocab_dict else 0
        if df:  # a token only dead rows of a main segment held is unknown, as after a rebuild
            out[token] = float(np.log(1 + (postings.stat_docs - df + 0.5) / (df + 0.5)))
    return out


def top_k(index: KeywordIndex, query: list[str], k: int, mask: np.ndarray | None = None,
          weights: dict[str, float] | None = None, factor: np.ndarray | None = None) -> list[tuple[int, float]]:
    """(document row, BM25 score) of the k best documents with score > 0 among `mask`; `weights`
    scales some query tokens' scores (default 1). With `factor` (one per row: the layer priors
    and time factors the ranking applies next) the k are the best by score x factor, in that
    order, so a prior below 1 on many rows cannot crowd the rows it favours out of the k."""
    if index.retriever is None or not query:
        return []
    vocab = index.retriever.vocab_dict
    known = [t for t in query if t in vocab]
    if not known:
        return []
    scores = index.retriever.get_scores(known, weights) if weights else index.retriever.get_scores(known)
    scores = np.asarray(scores, dtype=np.float32)
    floor = _floor(scores, k, mask, index.alive, factor)
    hits = np.flatnonzero(scores >= floor) if floor > 0 else np.flatnonzero(scores > 0)
    if index.alive is not None:
        hits = hits[index.alive[hits]]
    if mask is not None:  # the rows matched only (not a pass over every row)
        hits = hits[mask[hits]]
    return [(int(i), float(scores[i])) for i in _best(hits, scores, k, factor)]


_SAMPLE_STRIDE = 8


def _floor(scores: np.ndarray, k: int, mask: np.ndarray | None, alive: np.ndarray | None,
           factor: np.ndarray | None) -> float:
    """A score every one of the k best rows reaches (0 when none is known): the k-th best of
    every 8th row is at most the k-th best of all, and a row's score is at least its ranked
    score over the largest factor. Lets the ranking look at a few hundred rows instead of every
    match of a common word (tens of thousands in a large workspace)."""
    if k <= 0 or len(scores) < 4 * _SAMPLE_STRIDE * k:
        return 0.0
    sample = scores[::_SAMPLE_STRIDE]
    eligible = sample > 0
    if alive is not None:
        eligible &= alive[::_SAMPLE_STRIDE]
    if mask is not None:
        eligible &= mask[::_SAMPLE_STRIDE]
    if int(eligible.sum()) < k:
        return 0.0
    if factor is None:
        return float(-np.partition(-sample[eligible], k - 1)[k - 1])
    ranked = sample[eligible] * factor[::_SAMPLE_STRIDE][eligible]
    top = float(np.max(factor))
    kth = float(-np.partition(-ranked, k - 1)[k - 1])
    return kth / top * (1 - 1e-9) if top > 0 else 0.0


def _best(hits: np.ndarray, scores: np.ndarray, k: int, factor: np.ndarray | None) -> np.ndarray:
    """The k of `hits` (ascending) with the highest score (times `factor`), best first, ties by
    row, at the k-th place too (the lowest rows of a tie there are kept, whichever rows were
    looked at)."""
    if k <= 0:
        return hits[:0]
    ranked = scores[hits] if factor is None else scores[hits] * factor[hits]
    if hits.size > k:
        kth = np.partition(-ranked, k - 1)[k - 1]
        above, tied = -ranked < kth, -ranked == kth
        keep = above | (tied & (np.cumsum(tied) <= k - int(above.sum())))
        hits, ranked = hits[keep], ranked[keep]
    return hits[np.lexsort((hits, -ranked))]


def nearest(index: KeywordIndex, queries: np.ndarray, k: int, mask: np.ndarray | None = None,
            matmul=np.matmul, factor: np.ndarray | None = None) -> list[tuple[int, float]]:
    """(document row, cosine similarity) of the k nearest vectors among `mask`, exact. With
    several query vectors (rows of `queries`) a document's similarity is its best one.
    `matmul(matrix, columns)` computes the product (NumPy's unless the caller has a better one);
    `factor`: as in `top_k`."""
    if index.vectors is None or k <= 0:
        return []
    queries = np.atleast_2d(np.asarray(queries, dtype=np.float32))
    norms = np.linalg.norm(queries, axis=1, keepdims=True)
    queries = queries[norms[:, 0] > 0] / norms[norms[:, 0] > 0]
    if not len(queries):
        return []
    columns = np.ascontiguousarray(queries.T)
    parts = [index.vectors, *(index.delta_vectors or ())]  # row-aligned with docs, in order
    scores = np.concatenate([matmul(part, columns).max(axis=1) if len(part) else np.zeros(0, np.float32)
                             for part in parts])
    allowed = index.has_vector if mask is None else (mask & index.has_vector)
    if index.alive is not None:
        allowed = allowed & index.alive
    scores = np.where(allowed, scores, -np.inf)
    hits = np.flatnonzero(allowed)
    return [(int(i), float(scores[i])) for i in _best(hits, scores, k, factor)]


def stemmed_english_search(texts: list[str]):
    """The evaluation baseline's BM25 (bm25s's own tokenizer, English stopwords, PyStemmer):
    returns `search(query, k) -> [document number]`, best first, scores > 0 only."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(method="lucene", k1=K1, b=B)
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
                    show_progress=False)

    def search(query: str, k: int) -> list[int]:
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, return_ids=False,
                                show_progress=False)[0]
        known = [t for t in tokens if t in retriever.vocab_dict]
        if not known or not texts:
            return []
        docs, scores = retriever.retrieve([known], k=min(k, len(texts)), show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0]) if s > 0]

    return search
