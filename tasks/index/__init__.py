"""Stage 2, index: Markdown -> chunks, links, BM25 and optional vectors under metadata/index/.

Entry points: `run_index` (incremental: only changed files are re-done) and `run_reindex`
(rebuild from the files). The read side recall uses: `keyword_dir` (the search snapshot's
folder), `other_snapshots` (those of other tokenizers), `watermark` (what the index has seen),
`index_problems` (files left out or read with a caveat, each with its reason),
`reindex_pending` (a reindex was interrupted) and `embed_queries` (query vectors with the
index's embedding model), `index_paths` (just the named files: a delta segment, so a
write is searchable on return), `warm_snapshot` (a resident process's first write and search
are not slower) and `Watcher` (a resident process indexes outside edits); `EmbeddingHealthError` (the embedding
model cannot be used). For imports: `chunk_embedding_keys` (each chunk's lines and the hash of
the text its vector must be of) `seed_embedding_cache` (vectors made elsewhere, by hash) and `link_kinds` (links per kind).
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the names are; each is imported on its first use (`__getattr__`)
    from memflow.tasks.index.incremental import index_paths, run_index, warm_snapshot
    from memflow.tasks.index.indexing import (
        chunk_embedding_keys,
        drop_old_snapshots,
        index_problems,
        keyword_dir,
        link_kinds,
        open_store,
        other_snapshots,
        reindex_pending,
        run_reindex,
        watermark,
    )
    from memflow.tasks.index.vectors import (
        EmbeddingHealthError,
        embed_queries,
        embedding_cache_dir,
        seed_embedding_cache,
    )
    from memflow.tasks.index.watching import Watcher

__all__ = ["run_index", "run_reindex", "keyword_dir", "watermark", "embed_queries", "index_problems",
           "embedding_cache_dir", "reindex_pending", "chunk_embedding_keys", "seed_embedding_cache",
           "link_kinds", "drop_old_snapshots", "index_paths", "warm_snapshot", "open_store",
           "other_snapshots", "Watcher", "EmbeddingHealthError"]

# The module of each name, imported on first use: a file-parsing worker imports
# `memflow.tasks.index.rows` without the writers' numpy, Arrow and LanceDB modules, and only a
# resident process imports the watcher (watchfiles).
_HOME = {name: "incremental" for name in ("index_paths", "run_index", "warm_snapshot")}
_HOME |= {name: "indexing" for name in ("chunk_embedding_keys", "drop_old_snapshots", "index_problems",
                                         "keyword_dir", "link_kinds", "open_store", "other_snapshots",
                                         "reindex_pending",
                                         "run_reindex", "watermark")}
_HOME |= {name: "vectors" for name in ("EmbeddingHealthError", "embed_queries", "embedding_cache_dir",
                                        "seed_embedding_cache")}
_HOME["Watcher"] = "watching"


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
