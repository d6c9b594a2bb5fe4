"""Hybrid search speed at 100k chunks with the local embedding model (query embedding
included), with the snapshot's exact vector search, beside LanceDB's own vector search (flat,
IVF_FLAT, IVF_HNSW_SQ) measured on the same vectors for comparison. Chunk vectors are random unit vectors (search speed does not
depend on their values; the query is embedded by the real model); texts come from the
benchmark corpus generator. Needs the `local` extra.

    .venv/bin/python benchmarks/hybrid.py [--chunks 100000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from corpus import QUERIES, sentence  # noqa: E402

MODEL = "local/all-MiniLM-L6-v2"


def build(settings, count: int) -> None:
    from memflow.tasks.ground.tokenize import tokenize
    from memflow.tasks.ground.workspace import layout
    from memflow.tasks.index.indexing import rebuild_keyword
    from memflow.tasks.index.rows import chunk_id
    from memflow.tasks.stores.lance import IndexStore

    lay = layout(settings)
    store = IndexStore(lay.index_dir / "lance")
    rng = random.Random(3)
    vectors = np.random.default_rng(3).standard_normal((count, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    batch = 20_000
    for start in range(0, count, batch):
        rows, vrows = [], []
        for n in range(start, min(count, start + batch)):
            text = " ".join(sentence(rng, rng.random() < 0.15) for _ in range(3))
            path = f"daily/2026-01-{1 + n % 28:02d}/n{n // 3}.md"
            cid = chunk_id(path, n, n, text)
            rows.append({"id": cid, "path": path, "layer": "daily", "kind": "note",
                         "date": date(2026, 1, 1 + n % 28), "start_line": 1, "end_line": 3,
                         "heading_path": "", "text": text, "name": "", "description": "",
                         "tags": [], "terms": tokenize(text)})
            vrows.append({**rows[-1], "text_sha": cid, "vector": vectors[n]})
        store.replace_paths([], rows, [])
        store.put_vectors(MODEL, 384, vrows)
    rebuild_keyword(store, lay, settings)


def timed(settings, queries, repeat=10) -> tuple[float, float]:
    from memflow.tasks.recall import search

    values = []
    for _ in range(repeat):
        for query in queries:
            started = time.perf_counter()
            search(settings, f"{query} {random.random():.6f}", limit=5, link_limit=0, with_watermark=False)
            values.append(1000 * (time.perf_counter() - started))
    values.sort()
    return statistics.median(values), values[int(0.95 * (len(values) - 1))]


def lancedb_search(table, vector, limit: int) -> list[tuple[str, float]]:
    rows = (table.search(list(map(float, vector))).metric("cosine")
            .where("kind IN ('note')", prefilter=True).select(["id", "_distance"])
            .limit(limit).to_arrow().to_pylist())
    return [(r["id"], 1.0 - r["_distance"]) for r in rows]


def lancedb_branch(settings, table, vectors, index_type: str | None) -> tuple[float, float, float, list[set[str]]]:
    """LanceDB's own vector search with the default prefilter (the previous design), for
    comparison in the same run: branch p50, hybrid p50/p95 with it in place of the snapshot's
    exact search, and top-10 ids."""
    from memflow.tasks.index.vectors import embed_texts
    from memflow.tasks.recall import hybrid as recall

    if index_type:
        table.create_index(metric="cosine", index_type=index_type, replace=True)
    values, tops = [], []
    for vector in vectors:
        started = time.perf_counter()
        hits = lancedb_search(table, vector, 15)
        values.append(1000 * (time.perf_counter() - started))
        tops.append({cid for cid, _ in hits[:10]})
    snapshot_branch = recall.vector_branch
    recall.vector_branch = lambda index, settings, texts, n, filters: lancedb_search(
        table, embed_texts(settings, texts[:1])[0], n)
    try:
        p50, p95 = timed(settings, QUERIES)
    finally:
        recall.vector_branch = snapshot_branch
    return statistics.median(values), p50, p95, tops


def main() -> None:
    from memflow.schemas.recall import Filters
    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.local_embeddings import matmul
    from memflow.tasks.ground.workspace import init_workspace, layout
    from memflow.tasks.index.vectors import embed_texts
    from memflow.tasks.recall.hybrid import open_index, row_mask
    from memflow.tasks.stores import keyword
    from memflow.tasks.stores.lance import IndexStore

    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--skip-lancedb", action="store_true", help="only the product path")
    args = parser.parse_args()
    settings = load_settings(tempfile.mkdtemp(), embedding_model=MODEL, embedding_dimensions=384)
    lay = layout(settings)
    init_workspace(lay)
    started = time.perf_counter()
    build(settings, args.chunks)
    print(f"built {args.chunks} chunks in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    embed_texts(settings, ["warm up"])
    t = time.perf_counter()
    for q in QUERIES:
        embed_texts(settings, [q + " x"])
    embed_ms = 1000 * (time.perf_counter() - t) / len(QUERIES)
    query_vectors = [np.asarray(embed_texts(settings, [q])[0], dtype=np.float32) for q in QUERIES]
    index = open_index(lay, settings)
    store = IndexStore(lay.index_dir / "lance")
    mask = row_mask(index, Filters())
    ids = index.docs.column("id")
    vector_ms, exact = [], []
    for _ in range(5):
        for vector in query_vectors:
            started = time.perf_counter()
            keyword.nearest(index, vector, 15, mask, matmul)
            vector_ms.append(1000 * (time.perf_counter() - started))
    exact = [{ids[row].as_py() for row, _ in keyword.nearest(index, v, 10, mask, matmul)}
             for v in query_vectors]
    p50, p95 = timed(settings, QUERIES)
    print("| vector search | vector branch p50 (ms) | hybrid p50 (ms) | hybrid p95 (ms) | recall@10 vs exact |")
    print("|---|---|---|---|---|")
    print(f"| snapshot matrix, exact (used) | {statistics.median(vector_ms):.1f} | {p50:.1f} | {p95:.1f} | 1.000 |")
    # The same scan with NumPy's product: OpenBLAS's pool right after torch's forward pass.
    from memflow.tasks.ground import local_embeddings

    local_embeddings.matmul = np.matmul
    try:
        n50, n95 = timed(settings, QUERIES)
    finally:
        local_embeddings.matmul = matmul
    print(f"| snapshot matrix, NumPy product | - | {n50:.1f} ({n50 / p50:.2f}x) | {n95:.1f} | 1.000 |")
    if not args.skip_lancedb:
        table = store.vectors(MODEL, 384)
        for kind in (None, "IVF_FLAT", "IVF_HNSW_SQ"):
            branch, h50, h95, tops = lancedb_branch(settings, table, query_vectors, kind)
            recall = statistics.mean(len(a & b) / 10 for a, b in zip(exact, tops))
            print(f"| LanceDB {kind or 'flat'} | {branch:.1f} | {h50:.1f} ({h50 / p50:.2f}x) "
                  f"| {h95:.1f} | {recall:.3f} |")
    print(f"\nquery embedding alone: {embed_ms:.1f} ms per query (included in the hybrid figures)")


if __name__ == "__main__":
    main()
