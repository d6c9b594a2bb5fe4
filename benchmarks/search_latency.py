"""Search latency as callers get it (issue #27): `memflow.api.search` with the index watermark
on (what the MCP server and the CLI call), plain and packed to 1,000 tokens, and one file
changed -> searchable, at several workspace sizes; this tree against another (the current main)
in the same run, each (tree, size) in a fresh process.

    .venv/bin/python benchmarks/search_latency.py --sizes 4800,24000 --baseline /work/main/.venv/bin/python

Packed search is also timed for 20 queries asked once each (drawn from the corpus's words,
seeded), what an agent mostly does: their lines may not have been met by the process before.
Then 300 more such queries (4,000 tokens), the tail of a process that has been answering a
while: p99, max, and the garbage collector's full collections among them (`long_run`).

One file changed -> searchable: `api.write` of an existing note, then the search that finds the
new word. Where the tree has `index.incremental` the write indexes on return; otherwise (main)
the caller must run the index (`api.index`) before the search finds it, and that is timed too.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def percentiles(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    return 1000 * statistics.median(values), 1000 * values[int(0.95 * (len(values) - 1))]


def new_queries(seed: int, count: int) -> list[str]:
    """`count` queries of two or three of the corpus's words, none of them in QUERIES."""
    from corpus import EN_WORDS, IDENTIFIERS, QUERIES, ZH_WORDS

    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        words = ZH_WORDS if rng.random() < 0.15 else EN_WORDS + IDENTIFIERS
        query = " ".join(rng.sample(words, rng.randint(2, 3)))
        if query not in QUERIES and query not in out:
            out.append(query)
    return out


def change_targets(root: Path, paths: list[Path], first: int, step: int, pattern: str, letters: str):
    """Five (file, its workspace path, a new one-token word) to change: spread over the
    workspace, each word new to it (`pattern` with one of `letters`; digits would split it)."""
    for n in range(5):
        target = paths[(first + n * step) % len(paths)]
        yield target, target.relative_to(root).as_posix(), pattern.format(letters[n])


def one(count: int, rounds: int) -> dict:
    from corpus import QUERIES, build

    from memflow import api
    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import init_workspace, layout

    root = Path(tempfile.mkdtemp(prefix=f"bench-lat-{count}-"))
    settings = load_settings(root)
    init_workspace(layout(settings))
    paths = build(root, count)
    started = time.perf_counter()
    api.index(settings)
    out: dict = {"notes": count, "cold_index_s": time.perf_counter() - started}
    plain = settings.model_copy(update={"time_weight": 0.0, "recency_weight": 0.0})
    api.search("warm up", plain)
    api.search("warm up", settings, budget_tokens=1000)
    timings: dict[str, list[float]] = {"plain": [], "packed": [], "packed4k": []}
    for _ in range(rounds):
        for query in QUERIES:
            t = time.perf_counter()
            api.search(query, plain, limit=5)
            timings["plain"].append(time.perf_counter() - t)
    for _ in range(rounds):
        for query in QUERIES:
            t = time.perf_counter()
            api.search(query, settings, limit=5, budget_tokens=1000)
            timings["packed"].append(time.perf_counter() - t)
    for _ in range(rounds):
        for query in QUERIES:
            t = time.perf_counter()
            api.search(query, settings, limit=5, budget_tokens=4000)
            timings["packed4k"].append(time.perf_counter() - t)
    for name, values in timings.items():
        out[f"{name}_p50_ms"], out[f"{name}_p95_ms"] = percentiles(values)
    # an agent mostly asks what it has not asked before: queries drawn from the corpus's words
    # (seeded, none of QUERIES), each searched once, so each packs lines it may not have met
    for name, budget, seed in (("first_packed", 1000, 11), ("first_packed4k", 4000, 12)):
        values = []
        for query in new_queries(seed, 20):
            t = time.perf_counter()
            api.search(query, settings, limit=5, budget_tokens=budget)
            values.append(time.perf_counter() - t)
        out[f"{name}_p50_ms"], out[f"{name}_p95_ms"] = percentiles(values)
    try:
        import memflow.tasks.index.incremental  # noqa: F401
        indexes_on_write = True
    except ImportError:
        indexes_on_write = False
    changes = []
    for target, rel, word in change_targets(root, paths, count // 2, 97, "zanzibar{}quokka", "abcde"):
        t = time.perf_counter()
        api.write(rel, target.read_text(encoding="utf-8") + f"\nA new line about {word}.\n", workspace=settings)
        if not indexes_on_write:
            api.index(settings)
        found = api.search(word, plain, limit=1).results
        changes.append(time.perf_counter() - t)
        assert found and found[0].path == rel, f"{rel} not found after the change: {[(r.path, r.score) for r in found]}"
    out["change_searchable_p50_ms"] = 1000 * statistics.median(changes)
    changes = []  # the file written by the caller, then indexed by name (this tree) or scanned (main)
    for target, rel, word in change_targets(root, paths, count // 3, 89, "quokka{}zanzibar", "vwxyz"):
        t = time.perf_counter()
        target.write_text(target.read_text(encoding="utf-8") + f"\nA new line about {word}.\n", encoding="utf-8")
        api.index(settings, [rel]) if indexes_on_write else api.index(settings)
        found = api.search(word, plain, limit=1).results
        changes.append(time.perf_counter() - t)
        assert found and found[0].path == rel, f"{rel} not found after the change: {[(r.path, r.score) for r in found]}"
    out["file_indexed_searchable_p50_ms"] = 1000 * statistics.median(changes)
    out["indexes_on_write"] = indexes_on_write
    # what an agent that writes as it goes searches: the ten files changed above are a delta
    # segment beside the main one (this tree) until the next compaction
    after: dict[str, list[float]] = {"plain": [], "packed": [], "packed4k": []}
    for _ in range(rounds):
        for query in QUERIES:
            for name, budget in (("plain", 0), ("packed", 1000), ("packed4k", 4000)):
                t = time.perf_counter()
                api.search(query, plain if not budget else settings, limit=5, budget_tokens=budget or None)
                after[name].append(time.perf_counter() - t)
    for name, values in after.items():
        out[f"{name}_after_writes_p50_ms"], out[f"{name}_after_writes_p95_ms"] = percentiles(values)
    out.update(long_run(settings, 300))
    if indexes_on_write:
        out.update(resident(root, paths, count, rounds))
    return out


def long_run(settings, count: int) -> dict:
    """A process that has been answering a while: `count` more queries asked once, packed to
    4,000 tokens, with the tail they get (p99, max) and the garbage collector's full collections
    among them (the caches a search keeps across calls are what a full collection walks)."""
    import gc

    from memflow import api

    pauses: list[float] = []
    started = [0.0]

    def watch(phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.append(time.perf_counter() - started[0])

    values = []
    gc.callbacks.append(watch)
    try:
        for query in new_queries(21, count):
            t = time.perf_counter()
            api.search(query, settings, limit=5, budget_tokens=4000)
            values.append(time.perf_counter() - t)
    finally:
        gc.callbacks.remove(watch)
    values.sort()
    out = {"long_p95_ms": 1000 * values[int(0.95 * (len(values) - 1))],
           "long_p99_ms": 1000 * values[int(0.99 * (len(values) - 1))], "long_max_ms": 1000 * values[-1],
           "long_full_collections": len(pauses),
           "long_full_collection_max_ms": 1000 * max(pauses, default=0.0)}
    out["long_p50_ms"] = 1000 * statistics.median(values)
    return out


def resident(root: Path, paths: list[Path], count: int, rounds: int) -> dict:
    """The same over MCP (stdio) with a resident `memflow serve`: search, a `write` tool call
    then the search that finds it, and an outside edit (a plain file write) until the server's
    watcher has indexed it and a search finds it (polled every 10 ms)."""
    import os

    import anyio
    from corpus import QUERIES
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"PATH": os.environ.get("PATH", ""), "PREFECT_API_URL": "", "HOME": os.environ.get("HOME", "")}
    # cwd: `python -m` puts it first on sys.path, and a checkout's memflow/ there would shadow
    # the tree being measured
    params = StdioServerParameters(command=sys.executable, args=["-m", "memflow.cli", "-w", str(root), "serve"],
                                   env=env, cwd=str(root))
    out: dict = {}

    async def session():
        async with Client(stdio_client(params, errlog=open(os.devnull, "w"))) as client:  # noqa: SIM115
            async def timed(name: str, args: dict) -> tuple[float, object]:
                t = time.perf_counter()
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content
                return time.perf_counter() - t, result

            await timed("search", {"query": "warm up", "limit": 5})
            await timed("search", {"query": "warm up", "limit": 5, "budget_tokens": 1000})
            plain = [(await timed("search", {"query": q, "limit": 5}))[0] for _ in range(rounds) for q in QUERIES]
            packed = [(await timed("search", {"query": q, "limit": 5, "budget_tokens": 1000}))[0]
                      for _ in range(rounds) for q in QUERIES]
            out["mcp_plain_p50_ms"], out["mcp_plain_p95_ms"] = percentiles(plain)
            out["mcp_packed_p50_ms"], out["mcp_packed_p95_ms"] = percentiles(packed)
            writes, outside = [], []
            for target, rel, word in change_targets(root, paths, count // 4, 83, "wombat{}quagga", "klmno"):
                t = time.perf_counter()
                await timed("write", {"path": rel, "content": target.read_text(encoding="utf-8") + f"\nA line about {word}.\n"})
                _, found = await timed("search", {"query": word, "limit": 1})
                writes.append(time.perf_counter() - t)
                assert rel in str(found.content), f"{rel} not found after an MCP write"
            for target, rel, word in change_targets(root, paths, count // 5, 79, "narwhal{}okapi", "pqrst"):
                t = time.perf_counter()
                target.write_text(target.read_text(encoding="utf-8") + f"\nA line about {word}.\n", encoding="utf-8")
                while rel not in str((await timed("search", {"query": word, "limit": 1}))[1].content):
                    assert time.perf_counter() - t < 10, f"{rel} not found 10 s after an outside edit"
                    await anyio.sleep(0.01)
                outside.append(time.perf_counter() - t)
            out["mcp_write_searchable_p50_ms"] = 1000 * statistics.median(writes)
            out["mcp_outside_edit_found_p50_ms"] = 1000 * statistics.median(outside)

    anyio.run(session)
    return out


def measure(python: str, count: int, rounds: int) -> dict:
    res = subprocess.run([python, str(Path(__file__).resolve()), "--one", str(count), "--rounds", str(rounds)],
                         capture_output=True, text=True, timeout=7200, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{python} {count} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


ROWS = [("plain p50 (ms)", "plain_p50_ms", "<= 5"), ("plain p95 (ms)", "plain_p95_ms", "<= 2x p50"),
        ("packed 1,000 tokens p50 (ms)", "packed_p50_ms", "<= 20"), ("packed p95 (ms)", "packed_p95_ms", ""),
        ("packed 4,000 tokens p50 (ms)", "packed4k_p50_ms", "<= 40"), ("packed 4,000 p95 (ms)", "packed4k_p95_ms", ""),
        ("packed 1,000 tokens, 20 queries asked once: p50 (ms)", "first_packed_p50_ms", ""),
        ("packed 1,000, queries asked once: p95 (ms)", "first_packed_p95_ms", ""),
        ("packed 4,000 tokens, 20 queries asked once: p50 (ms)", "first_packed4k_p50_ms", ""),
        ("packed 4,000, queries asked once: p95 (ms)", "first_packed4k_p95_ms", ""),
        ("300 more queries asked once, 4,000 tokens: p50 (ms)", "long_p50_ms", "<= 40"),
        ("the same: p95 (ms)", "long_p95_ms", "p95 <= 2x p50"),
        ("the same: p99 (ms)", "long_p99_ms", ""), ("the same: max (ms)", "long_max_ms", ""),
        ("the same: full garbage collections among them", "long_full_collections", ""),
        ("the same: longest full collection (ms)", "long_full_collection_max_ms", ""),
        ("after 10 writes (a delta segment): plain p50 (ms)", "plain_after_writes_p50_ms", "<= 5"),
        ("after 10 writes: plain p95 (ms)", "plain_after_writes_p95_ms", "<= 2x p50"),
        ("after 10 writes: packed 1,000 tokens p50 (ms)", "packed_after_writes_p50_ms", "<= 20"),
        ("after 10 writes: packed 4,000 tokens p50 (ms)", "packed4k_after_writes_p50_ms", "<= 40"),
        ("api.write of one file -> searchable (ms)", "change_searchable_p50_ms", "<= 50 at 24,000"),
        ("file written, then index of it -> searchable (ms)", "file_indexed_searchable_p50_ms", "<= 50 at 24,000"),
        ("MCP resident server: plain search p50 (ms)", "mcp_plain_p50_ms", ""),
        ("MCP: plain search p95 (ms)", "mcp_plain_p95_ms", ""),
        ("MCP: packed 1,000 tokens p50 (ms)", "mcp_packed_p50_ms", ""),
        ("MCP: packed 1,000 tokens p95 (ms)", "mcp_packed_p95_ms", "<= 2x p50"),
        ("MCP: `write` -> `search` finds it (ms)", "mcp_write_searchable_p50_ms", "<= 50 at 24,000"),
        ("MCP: outside edit -> found by a search (ms)", "mcp_outside_edit_found_p50_ms", "<= 1,000")]


def table(rows: list[tuple[int, dict, dict | None]]) -> str:
    lines = ["| files | measure (api.search, watermark on) | this tree | baseline | ratio | goal |",
             "|---|---|---|---|---|---|"]
    for count, ours, theirs in rows:
        for label, key, goal in ROWS:
            if key not in ours:
                continue
            other = theirs.get(key) if theirs else None
            ratio = f"{ours[key] / other:.2f}" if other else "-"
            lines.append(f"| {count:,} | {label} | {ours[key]:.3g} | "
                         f"{'-' if other is None else f'{other:.3g}'} | {ratio} | {goal} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="4800,24000")
    parser.add_argument("--baseline", default="", help="python of the tree to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--one", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.rounds)))
        return
    rows = []
    for count in map(int, args.sizes.split(",")):
        ours = measure(sys.executable, count, args.rounds)
        theirs = measure(args.baseline, count, args.rounds) if args.baseline else None
        print(json.dumps({"notes": count, "this": ours, "baseline": theirs}), file=sys.stderr)
        rows.append((count, ours, theirs))
    print(table(rows))


if __name__ == "__main__":
    main()
