"""Benchmarks: memory-flows vs ReMe 0.4.2 (BM25-only), in process, same corpus, same run.

    .venv/bin/python benchmarks/run.py --sizes 2300,10000 --vs-reme

Each (system, size) runs in a fresh process (so peak RSS is its own). `--vs-reme` builds
benchmarks/.reme-venv with `reme-ai[as]==0.4.2.0` (its plain package does not import) on first
use. Prints a Markdown table: memory-flows figures and their ratio to ReMe's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
REME_VENV = HERE / ".reme-venv"
ROWS = [("cold index (s)", "cold_index_s", "<= 1/3"), ("no-op run (s)", "noop_s", "<= 1"),
        ("one file changed -> searchable (s)", "change_searchable_s", "<= 1/5"),
        ("BM25 search p50 (ms)", "search_bm25_p50_ms", "<= 1"),
        ("BM25 search p95 (ms)", "search_bm25_p95_ms", ""),
        ("peak RSS (MB)", "peak_rss_mb", "<= 1")]


def reme_python() -> Path:
    python = REME_VENV / "bin" / "python"
    if not python.exists():
        venv.create(REME_VENV, with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "reme-ai[as]==0.4.2.0"], check=True)
    return python


def measure(python: Path, script: str, size: int) -> dict:
    res = subprocess.run([str(python), str(HERE / script), str(size)], capture_output=True, text=True,
                         timeout=3600)
    if res.returncode != 0:
        raise RuntimeError(f"{script} {size} failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def table(results: list[tuple[int, dict, dict | None]]) -> str:
    lines = ["| notes | measure | memory-flows | ReMe 0.4.2 | ratio | goal |", "|---|---|---|---|---|---|"]
    for size, ours, theirs in results:
        for label, key, goal in ROWS:
            mine = ours[key]
            other = theirs.get(key) if theirs else None
            ratio = f"{mine / other:.2f}" if other else "-"
            lines.append(f"| {size} | {label} | {mine:.3g} | {other if other is None else f'{other:.3g}'} | {ratio} | {goal} |")
        extra = (f"| {size} | search + link expansion p50 (ms) | {ours['search_bm25+links_p50_ms']:.3g} | - | - | |\n"
                 f"| {size} | search, plain (API, 5 results) p50 (ms) | {ours['search_plain_p50_ms']:.3g} | - | - | |\n"
                 f"| {size} | search packed to 1,000 tokens + time signals p50 (ms) | "
                 f"{ours['search_packed_p50_ms']:.3g} | - | {ours['search_packed_p50_ms'] / ours['search_plain_p50_ms']:.2f} of plain | <= 1.5 |\n"
                 f"| {size} | watermark (ms) | {ours['watermark_ms']:.3g} | - | - | |")
        lines.append(extra)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="2300,10000")
    parser.add_argument("--vs-reme", action="store_true")
    args = parser.parse_args()
    results = []
    for size in [int(s) for s in args.sizes.split(",")]:
        ours = measure(Path(sys.executable), "memflow_side.py", size)
        theirs = measure(reme_python(), "reme_side.py", size) if args.vs_reme else None
        print(json.dumps({"memory-flows": ours, "reme": theirs}), file=sys.stderr)
        results.append((size, ours, theirs))
    print(table(results))


if __name__ == "__main__":
    main()
