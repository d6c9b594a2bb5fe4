"""Hybrid search speed at 100k chunks with the local embedding model (query embedding
included), by LanceDB vector index. Chunk vectors are random unit vectors (search speed does not
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
    from memflow.tasks.indexing import chunk_id, rebuild_keyword
    from memflow.tasks.stores.lance import IndexStore
    from memflow.tasks.tokenize import tokenize
    from memflow.tasks.workspace import layout

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
                         "n_tokens": 50, "terms": tokenize(text)})
            vrows.append({**rows[-1], "text_sha": cid, "vector": vectors[n]})
        store.replace_paths([], rows, [])
        store.put_vectors(MODEL, 384, vrows)
    rebuild_keyword(store, lay, settings)


def timed(settings, queries, repeat=5) -> tuple[float, float]:
    from memflow.tasks.recall import search

    values = []
    for _ in range(repeat):
        for query in queries:
            started = time.perf_counter()
            search(settings, f"{query} {random.random():.6f}", limit=5, link_limit=0, with_watermark=False)
            values.append(1000 * (time.perf_counter() - started))
    values.sort()
    return statistics.median(values), values[int(0.95 * (len(values) - 1))]


def main() -> None:
    from memflow.schemas.settings import load_settings
    from memflow.tasks.stores.lance import IndexStore
    from memflow.tasks.vectors import embed_texts
    from memflow.tasks.workspace import init_workspace, layout

    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    args = parser.parse_args()
    settings = load_settings(tempfile.mkdtemp(), embedding_model=MODEL, embedding_dimensions=384)
    init_workspace(layout(settings))
    started = time.perf_counter()
    build(settings, args.chunks)
    print(f"built {args.chunks} chunks in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    embed_texts(settings, ["warm up"])
    t = time.perf_counter()
    for q in QUERIES:
        embed_texts(settings, [q + " x"])
    embed_ms = 1000 * (time.perf_counter() - t) / len(QUERIES)
    store = IndexStore(layout(settings).index_dir / "lance")
    table = store.vectors(MODEL, 384)
    query_vectors = [embed_texts(settings, [q])[0] for q in QUERIES]

    def top10() -> list[set[str]]:
        return [{i for i, _ in store.vector_search(MODEL, 384, v, 10, "kind IN ('note')")}
                for v in query_vectors]

    exact = top10()
    print("| vector index | hybrid p50 (ms) | hybrid p95 (ms) | recall@10 vs flat | build (s) |")
    print("|---|---|---|---|---|")
    p50, p95 = timed(settings, QUERIES)
    print(f"| none (flat) | {p50:.1f} | {p95:.1f} | 1.000 | 0 |")
    for kind in ("IVF_FLAT", "IVF_HNSW_SQ"):
        started = time.perf_counter()
        table.create_index(metric="cosine", index_type=kind, replace=True)
        build_s = time.perf_counter() - started
        recall = statistics.mean(len(a & b) / 10 for a, b in zip(exact, top10()))
        p50, p95 = timed(settings, QUERIES)
        print(f"| {kind} | {p50:.1f} | {p95:.1f} | {recall:.3f} | {build_s:.1f} |")
    print(f"\nquery embedding alone: {embed_ms:.1f} ms per query (included above)")


if __name__ == "__main__":
    main()
