"""Indexing is linear in a text resource's bytes, not in its lines (issue 57):

    .venv/bin/python benchmarks/chunk_linear.py [--mb 6] [--ext txt]

Writes two resources of the same size into two fresh workspaces under a tmp folder: one of
3 million short lines (a word of one letter per line, as a log of single values) and one of
60,000 lines of words, then indexes each cold in its own `memflow index` process (BM25 only,
the default settings). Prints the seconds, chunk counts and the ratio short / long (the target:
<= 2). `--ext md` writes the same text as Markdown resources (the note chunker).
"""

from __future__ import annotations

import argparse
import random
import resource as rusage
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEMFLOW = [sys.executable, "-m", "memflow.cli"]


def lines_of(count: int, size: int, rng: random.Random, words: bool) -> str:
    """`count` lines making `size` bytes with their newlines: random letters, or random words
    made of letters (a vocabulary the benchmark draws, not a list)."""
    width = size // count - 1
    if not words:
        return "".join(rng.choice("bcdefghjklmnopqruvwxyz") * width + "\n" for _ in range(count))
    vocabulary = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
                  for _ in range(5000)]
    out = []
    for _ in range(count):
        line = ""
        while len(line) < width:
            line += rng.choice(vocabulary) + " "
        out.append(line[:width].rstrip().ljust(width, "x") + "\n")
    return "".join(out)


def index_cold(root: Path, name: str, text: str) -> tuple[float, float, int]:
    """A fresh workspace holding one resource, indexed in its own process: (wall seconds, CPU
    seconds of that process and its workers, chunks). CPU time is the figure to compare on a
    shared machine: wall time there counts other people's work too."""
    subprocess.run([*MEMFLOW, "-w", str(root), "init"], check=True, capture_output=True)
    (root / "resource" / name).write_text(text, encoding="utf-8")
    before, began = _cpu(), time.perf_counter()
    done = subprocess.run([*MEMFLOW, "-w", str(root), "index"], check=True, capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - began, _cpu() - before
    chunks = re.search(r"chunks=(\d+)", done.stdout)
    return seconds, cpu, int(chunks.group(1)) if chunks else -1


def _cpu() -> float:
    used = rusage.getrusage(rusage.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=6.0)
    parser.add_argument("--ext", default="txt")
    args = parser.parse_args()
    size, rng = int(args.mb * 1_000_000), random.Random(57)
    cases = [("short", 3_000_000 * size // 6_000_000, False), ("long", 60_000 * size // 6_000_000, True)]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, count, words in cases:
            text = lines_of(count, size, rng, words)
            seconds, cpu, chunks = index_cold(Path(tmp) / label, f"{label}.{args.ext}", text)
            results[label] = seconds, cpu
            print(f"{label}: {count:,} lines, {len(text.encode()):,} bytes, {chunks:,} chunks, "
                  f"index {seconds:.2f} s wall, {cpu:.2f} s CPU")
    (short_wall, short_cpu), (long_wall, long_cpu) = results["short"], results["long"]
    print(f"ratio short/long: {short_wall / long_wall:.2f} wall, {short_cpu / long_cpu:.2f} CPU (target <= 2)")


if __name__ == "__main__":
    main()
