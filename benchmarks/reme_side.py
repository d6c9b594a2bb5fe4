"""One measurement of ReMe 0.4.2 (BM25-only, its default config without an embedding store) in
this process, on the same generated corpus. Runs in its own venv (`--vs-reme` builds it).
Prints one JSON object."""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus import QUERIES, build  # noqa: E402


async def measure(count: int) -> dict:
    from reme.reme import ReMe
    from reme_index import reme_config

    root = Path(tempfile.mkdtemp(prefix=f"bench-reme-{count}-"))
    paths = build(root, count)
    config = reme_config(root)
    out: dict = {"system": "reme-0.4.2", "notes": count}
    async with ReMe(**config) as app:
        started = time.perf_counter()
        await app.run_job("reindex")
        await app.run_job("index_update")
        out["cold_index_s"] = time.perf_counter() - started
        started = time.perf_counter()
        await app.run_job("index_update")
        out["noop_s"] = time.perf_counter() - started
        target = paths[count // 2]
        target.write_text(target.read_text() + "\nA new line about zanzibarquokka.\n")
        started = time.perf_counter()
        await app.run_job("index_update")
        found = await app.run_job("search", query="zanzibarquokka", limit=1)
        out["change_searchable_s"] = time.perf_counter() - started
        out["change_found"] = target.name in str(found.answer if hasattr(found, "answer") else found)
        await app.run_job("search", query="warm up", limit=5)
        timings = []
        for _ in range(5):
            for query in QUERIES:
                t = time.perf_counter()
                await app.run_job("search", query=query, limit=5)
                timings.append(time.perf_counter() - t)
        timings.sort()
        out["search_bm25_p50_ms"] = 1000 * statistics.median(timings)
        out["search_bm25_p95_ms"] = 1000 * timings[int(0.95 * (len(timings) - 1))]
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    print(json.dumps(asyncio.run(measure(int(sys.argv[1])))))
