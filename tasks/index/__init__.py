"""Stage 2, index: Markdown -> chunks, links, BM25 and optional vectors under metadata/index/.

Entry points: `run_index` (incremental: only changed files are re-done) and `run_reindex`
(rebuild from the files). The read side recall uses: `keyword_dir` (the search snapshot's
folder), `watermark` (what the index has seen), `index_problems` (files
left out or read with a caveat, each with its reason), `reindex_pending` (a reindex was
interrupted) and `embed_queries` (query vectors with the
index's embedding model), `index_paths` (just the named files: a delta segment, so a
write is searchable on return), `warm_snapshot` (a resident process's first write and search
are not slower) and `Watcher` (a resident process indexes outside edits); `EmbeddingHealthError` (the embedding
model cannot be used). For imports: `chunk_embedding_keys` (each chunk's lines and the hash of
the text its vector must be of) `seed_embedding_cache` (vectors made elsewhere, by hash) and `link_kinds` (links per kind).
"""

from importlib import import_module

# Where each name lives; imported on first use, so a file-parsing worker that imports
# `memflow.tasks.index.rows` does not load the writers' numpy, Arrow and LanceDB modules.
_HOME = {
    "index_paths": "incremental", "run_index": "incremental", "warm_snapshot": "incremental",
    "chunk_embedding_keys": "indexing", "drop_old_snapshots": "indexing",
    "index_problems": "indexing", "keyword_dir": "indexing", "link_kinds": "indexing",
    "open_store": "indexing", "reindex_pending": "indexing", "run_reindex": "indexing",
    "watermark": "indexing",
    "EmbeddingHealthError": "vectors", "embed_queries": "vectors", "embedding_cache_dir": "vectors",
    "seed_embedding_cache": "vectors",
    "Watcher": "watching",  # imports watchfiles: only a resident process needs it
}
__all__ = list(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))
