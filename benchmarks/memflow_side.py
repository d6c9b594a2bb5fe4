"""One measurement of memory-flows in this process (run once per size, in a fresh process):
cold index, no-op run, one file changed -> searchable, BM25 search p50/p95, link expansion and
watermark costs, peak RSS. Prints one JSON object."""

from __future__ import annotations

import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus import QUERIES, build  # noqa: E402


def main(count: int) -> dict:
    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import init_workspace, layout
    from memflow.tasks.index import run_index, watermark
    from memflow.tasks.recall import search

    root = Path(tempfile.mkdtemp(prefix=f"bench-mf-{count}-"))
    settings = load_settings(root)
    lay = layout(settings)
    init_workspace(lay)
    paths = build(root, count)
    out: dict = {"system": "memory-flows", "notes": count}
    started = time.perf_counter()
    summary = run_index(settings)
    out["cold_index_s"] = time.perf_counter() - started
    out["chunks"] = summary.total_chunks
    started = time.perf_counter()
    run_index(settings)
    out["noop_s"] = time.perf_counter() - started
    target = paths[count // 2]
    target.write_text(target.read_text() + "\nA new line about zanzibarquokka.\n")
    started = time.perf_counter()
    run_index(settings)
    found = search(settings, "zanzibarquokka", limit=1, link_limit=0).results
    out["change_searchable_s"] = time.perf_counter() - started
    assert found and found[0].path.endswith(target.name), "changed note not found"
    search(settings, "warm up", link_limit=0)
    # One loop per measure: interleaved, the LanceDB link queries' worker threads still run
    # while the next BM25-only search does.
    timings = {"bm25": [], "bm25+links": []}
    for name, links in (("bm25", 0), ("bm25+links", 10)):
        for _ in range(5):
            for query in QUERIES:
                t = time.perf_counter()
                search(settings, query, limit=5, link_limit=links, with_watermark=False)
                timings[name].append(time.perf_counter() - t)
    # What an agent calls with the recall issue's signals: packed to 1,000 tokens, a question
    # naming a time (a window boost) and the recency term on, against the same search plain
    # (time and recency off, 5 whole results): the ratio is the cost of packing and the signals.
    from memflow import api

    timed = settings.model_copy(update={"time_weight": 1.0, "recency_weight": 0.5})
    plain = settings.model_copy(update={"time_weight": 0.0, "recency_weight": 0.0})
    timings["plain"], timings["packed"] = [], []
    for _ in range(5):
        for query in QUERIES:
            t = time.perf_counter()
            api.search(query, plain, limit=5)
            timings["plain"].append(time.perf_counter() - t)
            t = time.perf_counter()
            api.search(query + " last week", timed, limit=5, budget_tokens=1000)
            timings["packed"].append(time.perf_counter() - t)
    for name, values in timings.items():
        values.sort()
        out[f"search_{name}_p50_ms"] = 1000 * statistics.median(values)
        out[f"search_{name}_p95_ms"] = 1000 * values[int(0.95 * (len(values) - 1))]
    t = time.perf_counter()
    for _ in range(10):
        watermark(lay)
    out["watermark_ms"] = 100 * (time.perf_counter() - t)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]))))
