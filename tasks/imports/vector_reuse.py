"""Match ReMe's chunk vectors to memory-flows' chunks (stage: import). Pure functions over plain
values: which model ReMe used, whether it is the configured one, and which vector serves which
chunk (see `adoption` for the order of preference)."""

from __future__ import annotations

import hashlib

import numpy as np

from memflow.tasks.imports import reme_store


def split_model(model: str) -> tuple[str, str]:
    """(provider, bare model name) of a litellm model string; litellm's default is openai."""
    provider, _, name = model.rpartition("/")
    return (provider or "openai"), name


def identify_model(configured: str, api_base: str, dims: int, spaces: list[str]) -> str:
    """The configured model when one of ReMe's embedding caches is named for it (ReMe names a
    cache by backend, model, dimension and endpoint); "" when none is."""
    provider, name = split_model(configured)
    return configured if reme_store.vector_space_id(provider, name, dims, api_base) in spaces else ""


def mismatch(configured: str, configured_dims: int | None, reme_model: str, reme_dims: int) -> str:
    """Why ReMe's vectors cannot serve the configured model ("" when they can)."""
    if not configured:
        return "no embedding model configured in memory-flows (vectors are off)"
    if not reme_model:
        return "ReMe's embedding model is unknown (its metadata does not name it: pass --reme-model)"
    if split_model(reme_model)[1] != split_model(configured)[1]:
        return f"model mismatch: ReMe used {reme_model}, memory-flows is configured with {configured}"
    if configured_dims and configured_dims != reme_dims:
        return f"dimension mismatch: ReMe's vectors have {reme_dims}, memory-flows is configured for {configured_dims}"
    return ""


def normalized(vector: np.ndarray) -> list[float]:
    norm = float(np.linalg.norm(vector)) or 1.0
    return (vector / norm).astype(np.float32).tolist()


def match(chunk: dict, theirs: list[dict], cached: dict[str, np.ndarray]) -> tuple[str, list[float] | None]:
    """(kind, vector) for one memory-flows chunk {start_line, end_line, text, text_sha}: kind is
    "exact", "same_chunk", "composed" or "uncovered"."""
    if chunk["text_sha"] in cached:
        return "exact", normalized(cached[chunk["text_sha"]])
    body = chunk["text"].strip()
    for their in theirs:
        if their["text"].strip() == body:
            plain = hashlib.sha256(chunk["text"].encode()).hexdigest() == chunk["text_sha"]
            return ("exact" if plain else "same_chunk"), normalized(their["vector"])
    total, weight = None, 0
    for their in theirs:
        shared = min(chunk["end_line"], their["end_line"]) - max(chunk["start_line"], their["start_line"]) + 1
        if shared > 0:
            part = their["vector"] * shared
            total = part if total is None else total + part
            weight += shared
    if total is None:
        return "uncovered", None
    return "composed", normalized(total / weight)
