"""Search latency three ways on one generated workspace: in-process API, MCP over stdio (a
resident `memflow serve`, driven by the MCP SDK's client), and one CLI process per query; with
BM25 only and with the local embedding model (`--local`, needs the `local` extra).

    .venv/bin/python benchmarks/mcp_latency.py --notes 2300 [--local] [--queries 200]

Prints a Markdown table: p50/p95 in ms and the ratio of each to in-process in the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus import QUERIES, build  # noqa: E402


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def in_process(ws: Path, queries: list[str]) -> list[float]:
    from memflow import api

    api.search(queries[0], ws, limit=5)  # warm: snapshot and (with --local) the model loaded
    times = []
    for query in queries:
        started = time.perf_counter()
        api.search(query, ws, limit=5)
        times.append((time.perf_counter() - started) * 1000)
    return times


def over_mcp(ws: Path, queries: list[str], env: dict) -> list[float]:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "memflow.cli", "-w", str(ws), "serve"],
                                   env=env)
    times: list[float] = []

    async def session():
        async with Client(stdio_client(params, errlog=open(os.devnull, "w"))) as client:  # noqa: SIM115
            await client.call_tool("search", {"query": queries[0], "limit": 5})  # warm
            for query in queries:
                started = time.perf_counter()
                result = await client.call_tool("search", {"query": query, "limit": 5})
                times.append((time.perf_counter() - started) * 1000)
                assert not result.is_error, result.content

    anyio.run(session)
    return times


def per_cli_call(ws: Path, queries: list[str], env: dict) -> list[float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "memflow.cli", "-w", str(ws), "search", query, "--limit", "5"],
                       capture_output=True, check=True, env={**os.environ, **env})
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=2300)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cli-queries", type=int, default=15)
    parser.add_argument("--local", action="store_true", help="with local/all-MiniLM-L6-v2 vectors")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    from memflow import api

    api.init(root)
    build(root, args.notes)
    env = {"PATH": os.environ.get("PATH", ""), "PREFECT_API_URL": "", "HOME": os.environ.get("HOME", "")}
    if args.local:
        (root / "memflow.toml").write_text('embedding_model = "local/all-MiniLM-L6-v2"\n')
    started = time.perf_counter()
    api.index(root)
    print(f"indexed {args.notes} notes in {time.perf_counter() - started:.1f} s ({root})", file=sys.stderr)
    queries = [QUERIES[i % len(QUERIES)] + ("" if i < len(QUERIES) else f" {i}") for i in range(args.queries)]
    rows = [("in-process API", in_process(root, queries)),
            ("MCP over stdio (resident server)", over_mcp(root, queries, env)),
            ("CLI process per query", per_cli_call(root, queries[: args.cli_queries], env))]
    base = percentiles(rows[0][1])[0]
    model = "local/all-MiniLM-L6-v2 + BM25" if args.local else "BM25 only"
    print(f"| {args.notes} notes, {model} | p50 (ms) | p95 (ms) | p50 / in-process |")
    print("|---|---|---|---|")
    for name, times in rows:
        p50, p95 = percentiles(times)
        print(f"| {name} ({len(times)} queries) | {p50:.2f} | {p95:.2f} | {p50 / base:.1f} |")


if __name__ == "__main__":
    main()
