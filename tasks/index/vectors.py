"""Optional vectors: embed chunks with any litellm embedding model or `local/<name>`.

Vectors are keyed by chunk id in one table per (model, dimensions); a text hash column is the
embedding cache, so a chunk whose id changed but whose text did not is not embedded again.
Turning embeddings on later, or switching model, backfills what is missing without re-chunking.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from memflow.schemas.settings import Settings
from memflow.tasks.ground.workspace import layout
from memflow.tasks.stores.files import atomic_write_json, read_json
from memflow.tasks.stores.lance import EmbeddingCache, IndexStore

log = logging.getLogger("memflow.vectors")
BATCH = 64  # texts per request to an embedding endpoint
SAVE_BATCH = 512  # texts per local `encode` call (the model batches inside)
WRITE_TEXTS = 2048  # embedded texts per table write (each LanceDB append is a new version)
MODELS_RECORD = "vector_models.json"  # model -> dimension, written by the first health check
MAX_CHARS, MAX_CJK_CHARS = 2000, 500  # CJK text costs about one token per character
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


class EmbeddingHealthError(RuntimeError):
    pass


class EmbeddingDimensionError(EmbeddingHealthError):
    """The model returns vectors of another dimension than the index holds for its name."""


def dimension_error(settings: Settings, got: int, want: int) -> EmbeddingDimensionError:
    return EmbeddingDimensionError(
        f"embedding model {settings.embedding_model} now returns {got}-dim vectors, the index "
        f"holds {want}-dim vectors of it: nothing was written; if the model changed, run "
        f"`memflow reindex` (embeds every chunk again at {got} dims), or set "
        f"embedding_dimensions = {want} if the endpoint can return {want}")


def embed_texts(settings: Settings, texts: list[str]) -> "np.ndarray | list[list[float]]":
    """The texts' vectors, one per text: a float32 matrix from a local model (kept as NumPy from
    the model to the tables), lists of floats from an endpoint."""
    model = settings.embedding_model
    if model.startswith("local/"):
        from memflow.tasks.ground.local_embeddings import embed_local

        return embed_local(model.removeprefix("local/"), texts)
    from memflow.tasks.ground.llm import embed

    return embed(settings, texts)


def clip(text: str) -> str:
    """Keep an embedding input within the model's budget; stricter for CJK-heavy text."""
    cjk = len(_CJK_RE.findall(text[:MAX_CHARS]))
    budget = MAX_CJK_CHARS if cjk > 0.3 * min(len(text), MAX_CHARS) else MAX_CHARS
    return text[:budget]


def embedding_input(row: dict) -> str:
    return _input(row.get("name"), row.get("description"), row["text"])


def embedding_inputs(chunks) -> list[str]:
    """`embedding_input` of every row of a chunks table (read column by column)."""
    columns = [chunks.column(name).to_pylist() for name in ("name", "description", "text")]
    return [_input(*values) for values in zip(*columns)]


def _input(name: str | None, description: str | None, text: str) -> str:
    head = " - ".join(x for x in (name, description) if x)
    return clip(f"{head}\n{text}" if head else text)


def health_check(settings: Settings, expected: int | None = None) -> int:
    """Embed "ping"; check the dimension (the configured one, or `expected`: what the index
    holds for the model); log the outcome. Returns the dimension."""
    model = settings.embedding_model
    try:
        vector = embed_texts(settings, ["ping"])[0]
        if settings.embedding_dimensions and len(vector) != settings.embedding_dimensions:
            raise EmbeddingHealthError(
                f"dimension {len(vector)} != configured {settings.embedding_dimensions}")
    except Exception as exc:
        log.error("[EMBEDDING HEALTH CHECK] %s -> FAIL %s", model, exc)
        raise EmbeddingHealthError(f"embedding model {model} failed its health check: {exc}") from exc
    if expected and len(vector) != expected:
        log.error("[EMBEDDING HEALTH CHECK] %s -> FAIL %d dims, the index holds %d", model,
                  len(vector), expected)
        raise dimension_error(settings, len(vector), expected)
    log.warning("[EMBEDDING HEALTH CHECK] %s -> OK (%d dims)", model, len(vector))
    return len(vector)


def known_dims(settings: Settings) -> int | None:
    """The configured model's dimension from settings or the index's record, without a call."""
    if settings.embedding_dimensions:
        return settings.embedding_dimensions
    record = read_json(layout(settings).index_dir / MODELS_RECORD, {})
    return int(record[settings.embedding_model]) if settings.embedding_model in record else None


def model_dims(settings: Settings) -> tuple[int, bool]:
    """(dimension, whether a health check ran): from settings, the index's record, or a check."""
    dims = known_dims(settings)
    if dims:
        return dims, False
    record_path = layout(settings).index_dir / MODELS_RECORD
    record = read_json(record_path, {})
    record[settings.embedding_model] = health_check(settings)
    atomic_write_json(record_path, record)
    return int(record[settings.embedding_model]), True


def forget_dimension(settings: Settings) -> None:
    """Drop the model's recorded dimension: the next embedding learns it again with a health
    check (a reindex does this, so a model whose dimension changed is embedded anew)."""
    record_path = layout(settings).index_dir / MODELS_RECORD
    record = read_json(record_path, {})
    if settings.embedding_model in record:
        del record[settings.embedding_model]
        atomic_write_json(record_path, record)


def check_dimension(settings: Settings) -> bool:
    """Before an index run writes anything: when the index holds vectors of the model (its
    dimension recorded), a health check that the model still returns that dimension (raises
    EmbeddingDimensionError naming both). Returns whether a check ran."""
    if settings.embedding_dimensions or not known_dims(settings):
        return False  # a configured dimension is checked by every health check; none recorded yet
    health_check(settings, known_dims(settings))
    return True


def backfill_vectors(store: IndexStore, settings: Settings, checked: bool = False,
                     progress: Callable[[int], Callable[[int], None]] | None = None) -> int:
    """Embed chunks that have no vector for the configured model: texts embedded before are
    served from the table or the embedding cache (`metadata/index/embeddings/`, kept across
    reindexes and seeded by imports), each new text once. Only the missing chunks are read into
    Python, and the vectors are saved as they are made (a save per WRITE_TEXTS texts). The
    model is health-checked only when something is to be embedded (and `checked` is False),
    before any vector is saved, and every batch's dimension is checked. Drops vectors of gone
    chunks. `progress(total)` gives the callable told how many chunks each save embedded.

    Throughput (benchmarks/embed_throughput.py): the texts go to the model longest first, so a
    model batch holds texts of about one length (little padding), SAVE_BATCH texts a call to a
    local model, which batches inside a call as its own `encode` does; a save writes WRITE_TEXTS
    texts' vectors (fewer LanceDB versions), so a stopped run keeps all but its last few
    calls'. The vectors stay NumPy rows from the model to the tables, and the saves append (the
    chunks and texts saved are those the table and the cache lack), no merge on the key."""
    import pyarrow as pa
    import pyarrow.compute as pc

    model = settings.embedding_model
    dims, learned = model_dims(settings)
    checked = checked or learned
    table = store.chunk_columns(["id", "path", "layer", "kind", "date", "text", "name",
                                 "description"])
    have = store.vector_ids(model, dims)
    missing = table.filter(pc.invert(pc.is_in(table.column("id"), value_set=have)))
    embedded = 0
    if missing.num_rows:
        inputs = embedding_inputs(missing)
        shas = [text_sha(text) for text in inputs]
        keys = missing.select(["id", "path", "layer", "kind", "date"]).append_column(
            "text_sha", pa.array(shas, pa.string()))
        rows_of: dict[str, list[int]] = {}  # text sha256 -> its rows of `keys`
        text_of: dict[str, str] = {}
        for number, (sha, text) in enumerate(zip(shas, inputs)):
            rows_of.setdefault(sha, []).append(number)
            text_of[sha] = text
        cache = store.vectors_by_text(model, dims, list(rows_of))
        kept = EmbeddingCache(embedding_cache_dir(settings))
        cache.update(kept.get(model, dims, [sha for sha in rows_of if sha not in cache]))

        def save(part: list[str]) -> None:
            if part:
                numbers = [n for sha in part for n in rows_of[sha]]
                store.add_vectors(model, dims, keys.take(numbers),
                                  np.stack([cache[sha] for sha in part for _ in rows_of[sha]]))

        new = sorted((sha for sha in rows_of if sha not in cache), key=lambda sha: -len(text_of[sha]))
        step = progress(len(new)) if progress and new else None
        if new and not checked:  # before any write: a dimension change stops the run here
            health_check(settings, dims)
        save([sha for sha in rows_of if sha in cache])
        for part, vectors in _embedded(settings, new, text_of, dims, WRITE_TEXTS):
            kept.add(model, dims, part, vectors)
            cache.update(zip(part, vectors))
            save(part)
            if step:
                step(len(part))
        embedded = len(new)
    # after the saves: vectors of gone chunks served the cache for text that moved
    store.drop_vectors(model, dims, set(table.column("id").to_pylist()))
    return embedded


def _embedded(settings: Settings, shas: list[str], text_of: dict[str, str], dims: int, group: int = 0):
    """(shas, their vectors as a float32 matrix), `shas` in the order given (longest first,
    see `backfill_vectors`), per model call: a local model takes SAVE_BATCH texts a call, an
    endpoint BATCH (one request); with `group`, the calls' results joined until they hold
    `group` texts (what one table write takes). Raises EmbeddingDimensionError at the first
    vector of another dimension than `dims` (what the caller saved before it is all right)."""
    size = SAVE_BATCH if settings.embedding_model.startswith("local/") else BATCH
    held: list[tuple[list[str], np.ndarray]] = []
    for i in range(0, len(shas), size):
        part = shas[i:i + size]
        made = embed_texts(settings, [text_of[sha] for sha in part])
        wrong = next((len(v) for v in made if len(v) != dims), None)
        if wrong is not None:
            raise dimension_error(settings, wrong, dims)
        held.append((part, np.asarray(made, dtype=np.float32).reshape(len(part), dims)))
        if sum(len(p) for p, _ in held) >= group or i + size >= len(shas):
            yield [sha for p, _ in held for sha in p], np.concatenate([m for _, m in held])
            held = []


def delta_vectors(settings: Settings, rows: list[dict], known: dict[str, "np.ndarray"], dims: int) -> "np.ndarray":
    """The vectors (float32, one row per chunk row, in order) of the chunk `rows` a write
    replaces its files' rows with: a text whose vector `known` holds (text sha256 -> vector:
    the rows being replaced) is not embedded again, the others go to the model (`_embedded`).
    Raises EmbeddingDimensionError when the model returns another dimension than `dims` (the
    snapshot's), before anything is published."""
    inputs = [embedding_input(row) for row in rows]
    shas = [text_sha(text) for text in inputs]
    text_of = {sha: text for sha, text in zip(shas, inputs) if sha not in known}
    new = sorted(text_of, key=lambda sha: -len(text_of[sha]))
    if new:
        say_model_cost(settings, f"this write's {len(new)} new chunk(s)")
    vectors = dict(known)
    for part, made in _embedded(settings, new, text_of, dims):
        vectors.update(zip(part, made))
    return np.asarray([vectors[sha] for sha in shas], dtype=np.float32).reshape(len(shas), dims)


def vector_rows(chunks: list[dict], vectors: "np.ndarray") -> list[dict]:
    """The vectors table's rows of `chunks` (their filter columns, embedded text's sha256) with
    `vectors` (aligned)."""
    return [{"id": row["id"], "text_sha": text_sha(embedding_input(row)), "path": row["path"],
             "layer": row["layer"], "kind": row["kind"], "date": row["date"], "vector": vector.tolist()}
            for row, vector in zip(chunks, vectors)]


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def embedding_cache_dir(settings: Settings):
    return layout(settings).index_dir / "embeddings"


def seed_embedding_cache(settings: Settings, model: str, dims: int, vectors: dict[str, list[float]]) -> None:
    """Put vectors made elsewhere by `model` into the embedding cache (keyed by the sha256 of the
    text the index will embed), and record the model's dimension so the next index run needs no
    health-check call to learn it."""
    EmbeddingCache(embedding_cache_dir(settings)).put(model, dims, vectors)
    record_path = layout(settings).index_dir / MODELS_RECORD
    record = read_json(record_path, {})
    if model not in record:
        atomic_write_json(record_path, {**record, model: dims})


MODEL_FIELDS = {"embedding_model", "embedding_dimensions", "model_api_base"}  # what a query vector depends on
_QUERY_CACHE: OrderedDict[tuple[str, str], tuple[float, ...]] = OrderedDict()
_QUERY_CACHE_SIZE = 256


def embed_queries(settings: Settings, queries: list[str], fresh: bool = False) -> list[list[float]]:
    """The queries' embeddings (one model call for those not seen lately), cached per
    (model settings, query) for repeated searches: in this process, and on disk
    (`metadata/index/query_vectors/`, so a CLI process answers a query searched before without
    loading a local model); `fresh` asks the model again (a cached vector may be of a dimension
    the model no longer returns)."""
    model_key = settings.model_dump_json(include=MODEL_FIELDS)
    for query in queries:  # least recently used goes first
        if (model_key, query) in _QUERY_CACHE:
            _QUERY_CACHE.move_to_end((model_key, query))
    todo = [q for q in dict.fromkeys(queries) if fresh or (model_key, q) not in _QUERY_CACHE]
    folder = layout(settings).index_dir / QUERY_VECTORS
    stored = {} if fresh else stored_query_vectors(folder, model_key, todo)
    todo = [q for q in todo if q not in stored]
    if todo:
        say_model_cost(settings)
        vectors = embed_texts(settings, [clip(q) for q in todo])
        made = {q: np.asarray(v).tolist() for q, v in zip(todo, vectors)}
        try:
            store_query_vectors(folder, model_key, made)
        except OSError as exc:  # a read-only index: this answer stands, the next pays the model again
            log.warning("query vectors not kept (%s): the next process embeds this query again", exc)
        stored.update(made)
    for query, vector in stored.items():
        _QUERY_CACHE[(model_key, query)] = tuple(vector)
    while len(_QUERY_CACHE) > _QUERY_CACHE_SIZE:
        _QUERY_CACHE.popitem(last=False)
    return [list(_QUERY_CACHE[(model_key, q)]) for q in queries]


QUERY_VECTORS = "query_vectors"  # under metadata/index/: derived, deleted with the index
QUERY_FILES = 2000  # at most this many stored query vectors (~1.5 KB each at 384 dims)


def _query_file(folder, model_key: str, query: str):
    key = hashlib.sha256((model_key + "\n" + query).encode()).hexdigest()[:40]
    return folder / f"{key}.f32"


def stored_query_vectors(folder, model_key: str, queries: list[str]) -> dict[str, list[float]]:
    """The stored vectors of those queries that have one (little-endian float32 files)."""
    import numpy as np

    out = {}
    for query in queries:
        try:
            data = _query_file(folder, model_key, query).read_bytes()
        except FileNotFoundError:
            continue
        if data and len(data) % 4 == 0:  # written without fsync: a crash may leave one empty
            out[query] = np.frombuffer(data, dtype="<f4").tolist()
    return out


def store_query_vectors(folder, model_key: str, vectors: dict[str, list[float]]) -> None:
    """Keep the queries' vectors (atomically, not fsynced: derived, and a lost one only costs
    the model again); past QUERY_FILES, the oldest go down to three quarters of it. The folder is counted
    when a new file's name starts with "0" (one new query in 16, by its hash: counting ~2,000
    names cost ~3 ms, more than a short query's forward pass on one thread)."""
    import numpy as np

    from memflow.tasks.stores.files import atomic_write_bytes

    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for query, vector in vectors.items():
        path = _query_file(folder, model_key, query)
        atomic_write_bytes(path, np.asarray(vector, dtype="<f4").tobytes(), durable=False)
        names.append(path.name)
    if not any(name.startswith("0") for name in names):
        return
    files = list(folder.glob("*.f32"))
    if len(files) > QUERY_FILES:
        for old in sorted(files, key=lambda f: f.stat().st_mtime_ns)[:len(files) - QUERY_FILES * 3 // 4]:
            old.unlink(missing_ok=True)


def say_model_cost(settings: Settings, what: str = "") -> None:
    """A local model not loaded in this process costs its load before the first vector it
    makes (of a query, or of `what` a write adds): say so, and how not to pay it again."""
    model = settings.embedding_model
    if not model.startswith("local/"):
        return
    from memflow.tasks.ground.local_embeddings import is_loaded, loads_quickly

    if is_loaded(model.removeprefix("local/")) or loads_quickly(model.removeprefix("local/")):
        return  # a distilled static model loads in well under a second
    if what:
        log.warning("loading the embedding model %s to embed %s (once per process: seconds to "
                    "tens of seconds on a busy machine); a process that stays up, such as "
                    "`memflow serve` (MCP) or a program using memflow.api, pays it once", model, what)
    else:
        log.warning("loading the embedding model %s to embed this query (once per process: "
                    "seconds to tens of seconds on a busy machine); `memflow serve` keeps it "
                    "loaded and answers the CLI, and a query searched before is answered from "
                    "metadata/index/%s/ without it", model, QUERY_VECTORS)
