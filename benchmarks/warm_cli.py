"""Warm CLI against cold CLI (issue #58, item 4), one run on a generated workspace
(benchmarks/corpus.py): wall time and the CLI process's own CPU time of `memflow search` and of
`memflow write` (a new note each call) with `memflow serve --transport socket` running, of the
same calls run cold, and of a bare `python -c pass` (the floor any CLI process pays on this
machine at this load). BM25 only, or with `--model` (e.g. local/all-MiniLM-L6-v2) vectors on:
the workspace is indexed with it first, and a cold write then loads the model to embed its note.

    .venv/bin/python benchmarks/warm_cli.py --files 300 --calls 10
    .venv/bin/python benchmarks/warm_cli.py --files 40 --calls 8 --model local/all-MiniLM-L6-v2
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
MEMFLOW = Path(sys.executable).with_name("memflow")


def timed(argv: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU seconds) of one child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if status:
        raise RuntimeError(f"{argv} failed: {proc.stderr.read().decode()[-2000:]}")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def main() -> None:
    from corpus import build

    from memflow import api

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--model", default="", help="an embedding model: vectors on (default: BM25 only)")
    args = parser.parse_args()
    ws = Path(tempfile.mkdtemp(prefix="bench-warm-")) / "ws"
    api.init(ws)
    build(ws, args.files)
    env = {**os.environ, "MEMFLOW_EMBEDDING_MODEL": args.model}
    subprocess.run([str(MEMFLOW), "-w", str(ws), "index"], env={**env, "MEMFLOW_WARM": "0"}, check=True,
                   capture_output=True)
    search = [str(MEMFLOW), "-w", str(ws), "search", "deploy rollback budget"]
    written = iter(range(10**6))

    def write() -> list[str]:
        n = next(written)
        return [str(MEMFLOW), "-w", str(ws), "write", f"daily/2031-01-{1 + n % 28:02d}/call-{n}.md", "--content",
                f"# Call {n}\n\nThe courier left parcel {n} with the neighbour at number {n % 90}.\n"]

    server = subprocess.Popen([str(MEMFLOW), "-w", str(ws), "serve", "--transport", "socket"],
                              env=env, stderr=subprocess.PIPE, text=True)
    try:
        if "CLI socket" not in server.stderr.readline():
            raise RuntimeError("memflow serve did not start")
        warm_env = {**env, "MEMFLOW_WARM": "require"}
        cold_env = {**env, "MEMFLOW_WARM": "0"}
        timed(search, warm_env)  # the server's first search opens its snapshot (and loads the model)
        timed(write(), warm_env)  # its first write (the model's first few-text call)
        rows = {"CLI search, `memflow serve` running": [timed(search, warm_env) for _ in range(args.calls)],
                "CLI search, cold (MEMFLOW_WARM=0)": [timed(search, cold_env) for _ in range(max(3, args.calls // 3))],
                "CLI write, `memflow serve` running": [timed(write(), warm_env) for _ in range(args.calls)],
                "CLI write, cold (MEMFLOW_WARM=0)": [timed(write(), cold_env) for _ in range(max(3, args.calls // 3))],
                "`python -c pass`": [timed([sys.executable, "-c", "pass"], env) for _ in range(args.calls)]}
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(ws.parent)
    print(f"## Warm CLI, {args.files} files, {'vectors on: ' + args.model if args.model else 'BM25 only'}, "
          f"load {' '.join(Path('/proc/loadavg').read_text().split()[:3])}\n")
    print("| call | n | wall p50 ms | CPU p50 ms (the calling process) |\n| --- | --- | --- | --- |")
    for label, values in rows.items():
        print(f"| {label} | {len(values)} | {1000 * statistics.median(v[0] for v in values):.0f} | "
              f"{1000 * statistics.median(v[1] for v in values):.0f} |")


if __name__ == "__main__":
    main()
