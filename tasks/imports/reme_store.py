"""Read a ReMe / QwenPaw workspace's metadata (stage: import): folder names, the chunk store with
its float16 vectors, the catalogs, the link graph and the embedding cache's vector spaces.

Every store is read streaming, record by record; a record that cannot be read is named in
`problems` ("file: line N: why") and left out, never turned into an empty store silently.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from memflow.schemas.imports import RemeLayout
from memflow.tasks.stores.archive import ArchiveError, read_jsonl_zst

CHUNKS = "file_store/file_chunks_default_v1.jsonl.zst"
CATALOGS = ("default", "resource", "digest", "dream")
GRAPH = "file_graph/default.jsonl.zst"
EMBEDDINGS = "embedding_store"


class NotReme(ValueError):
    """The folder is not a ReMe or QwenPaw workspace."""


def detect_layout(src: Path) -> RemeLayout:
    """QwenPaw keeps `mem_metadata/` and `memory/`; upstream ReMe `metadata/` and `daily/`."""
    if not src.is_dir():
        raise NotReme(f"{src} is not a folder")
    if (src / "mem_metadata").is_dir():
        flavour, metadata = "qwenpaw", "mem_metadata"
    elif (src / "metadata" / "file_store").is_dir() or (src / "metadata" / "file_catalog").is_dir():
        flavour, metadata = "reme", "metadata"
    else:
        raise NotReme(f"{src} is not a ReMe or QwenPaw workspace: no mem_metadata/ nor "
                      "metadata/file_store/ in it")
    daily = "memory" if (src / "memory").is_dir() and not (src / "daily").is_dir() else "daily"
    # ReMe's dialogs live in <session_dir>/dialog; QwenPaw may keep them under mem_session/
    session = "mem_session" if (src / "mem_session" / "dialog").is_dir() else "session"
    return RemeLayout(flavour=flavour, metadata=metadata, daily=daily, session=session)


def records(path: Path, problems: list[str], name: str) -> Iterator[dict]:
    """JSON objects of a JSONL.zst store, streaming; bad lines and a bad stream go to `problems`."""
    if not path.is_file():
        problems.append(f"{name}: missing")
        return
    try:
        for number, line in read_jsonl_zst(path):
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{name}: line {number}: not JSON ({exc.msg})")
                continue
            if isinstance(value, dict):
                yield value
            else:
                problems.append(f"{name}: line {number}: not a JSON object")
    except (ArchiveError, UnicodeDecodeError) as exc:
        problems.append(f"{name}: {exc}")


def vector_of(record: dict) -> np.ndarray | None:
    """A chunk record's vector: float16 base64 in `_embedding_f16_b64`, or a legacy list in
    `embedding`. Raises ValueError on a malformed one."""
    encoded = record.get("_embedding_f16_b64")
    if encoded is not None:
        raw = base64.b64decode(encoded, validate=True)
        if len(raw) % 2:
            raise ValueError("odd float16 byte length")
        return np.frombuffer(raw, dtype=np.float16).astype(np.float32)
    if isinstance(record.get("embedding"), list):
        return np.asarray(record["embedding"], dtype=np.float32)
    return None


def chunks_by_path(meta: Path, wanted: set[str], problems: list[str]) -> tuple[dict[str, list[dict]], int, int]:
    """({path: [{start_line, end_line, text, vector}]} for chunks of `wanted` paths only, records
    read, records with a vector). Only the wanted chunks are kept in memory."""
    found: dict[str, list[dict]] = {}
    total = with_vector = 0
    name = f"{meta.name}/{CHUNKS}"
    for record in records(meta / CHUNKS, problems, name):
        total += 1
        try:
            vector = vector_of(record)
        except (ValueError, TypeError) as exc:
            problems.append(f"{name}: chunk {record.get('id', '?')}: bad vector ({exc})")
            continue
        with_vector += vector is not None
        if vector is not None and record.get("path") in wanted:
            found.setdefault(record["path"], []).append({
                "start_line": int(record.get("start_line") or 0), "end_line": int(record.get("end_line") or 0),
                "text": str(record.get("text") or ""), "vector": vector})
    return found, total, with_vector


def chunk_spans(meta: Path, wanted: set[str], problems: list[str]) -> dict[str, list[tuple[int, int, str]]]:
    """{path: [(start_line, end_line, text)]} of ReMe's chunks of `wanted` paths, with or without
    a vector: what ReMe read of each file, to tell whether the file still holds it."""
    spans: dict[str, list[tuple[int, int, str]]] = {}
    for record in records(meta / CHUNKS, [], f"{meta.name}/{CHUNKS}"):  # problems: chunks_by_path
        path = record.get("path")
        if path in wanted and isinstance(record.get("text"), str):
            spans.setdefault(path, []).append((int(record.get("start_line") or 0),
                                               int(record.get("end_line") or 0), record["text"]))
    return spans


def catalog(meta: Path, which: str, problems: list[str]) -> dict[str, float]:
    """path -> st_mtime ReMe recorded when it processed the file (a catalog's checkpoint)."""
    name = f"{meta.name}/file_catalog/{which}.jsonl.zst"
    return {str(r["path"]): float(r["st_mtime"]) for r in records(meta / "file_catalog" / f"{which}.jsonl.zst",
                                                                    problems, name)
            if "path" in r and isinstance(r.get("st_mtime"), (int, float))}


def graph(meta: Path, problems: list[str]) -> tuple[dict[str, float], int]:
    """(path -> st_mtime when ReMe indexed it, number of links) from the link graph."""
    mtimes, links = {}, 0
    for node in records(meta / GRAPH, problems, f"{meta.name}/{GRAPH}"):
        if "path" in node and isinstance(node.get("st_mtime"), (int, float)):
            mtimes[str(node["path"])] = float(node["st_mtime"])
            links += len(node.get("links") or [])
    return mtimes, links


def vector_space_id(backend: str, model: str, dims: int, endpoint: str) -> str:
    """ReMe's name for an embedding setup (its cache file is `default_v1_<id>.npz`)."""
    return hashlib.sha256("\x1f".join([backend, model, str(dims), endpoint.rstrip("/")]).encode()).hexdigest()[:12]


def cached_spaces(meta: Path) -> list[str]:
    """Vector-space ids of ReMe's embedding caches present."""
    folder = meta / EMBEDDINGS
    return sorted(p.stem.rsplit("_", 1)[-1] for p in folder.glob("default_v1_*.npz")) if folder.is_dir() else []


def cached_vectors(meta: Path, space: str, wanted: set[str], problems: list[str]) -> dict[str, np.ndarray]:
    """sha256(text) -> vector from ReMe's embedding cache of one vector space, for `wanted` keys."""
    path = meta / EMBEDDINGS / f"default_v1_{space}.npz"
    try:
        with np.load(path, allow_pickle=False) as data:
            return {str(k): v.astype(np.float32) for k, v in zip(data["keys"], data["embeddings"])
                    if str(k) in wanted}
    except (OSError, ValueError, KeyError) as exc:
        problems.append(f"{meta.name}/{EMBEDDINGS}/{path.name}: {exc}")
        return {}
