"""Where a cold index's peak resident memory is (issue #30): one cold `memflow index` in one
process (MEMFLOW_INDEX_WORKERS=1) on the generated workspace of `scale.py`, its memory map
(/proc/PID/smaps) read every 50 ms, and the reading with the largest RSS broken down: the
process's own pages (anonymous and heap) and each mapped file's resident pages, with how many of
those are clean (pages of the file as it is on disk, which the page cache holds once for every
process and can drop) and how many the process wrote (relocations, a library's data).

    .venv/bin/python benchmarks/index_maps.py --files 4800
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
MEMFLOW = Path(sys.executable).with_name("memflow")
_MAPPING_RE = re.compile(r"^[0-9a-f]+-[0-9a-f]+ ")


def reading(pid: int) -> tuple[int, Counter, Counter]:
    """(RSS KiB, resident KiB per mapping name, clean KiB per mapping name) of `pid` now."""
    rss, clean = Counter(), Counter()
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        if _MAPPING_RE.match(line):
            parts = line.split()
            name = parts[5] if len(parts) > 5 else "[anon]"
        elif line.startswith("Rss:"):
            rss[name] += int(line.split()[1])
        elif line.startswith(("Shared_Clean:", "Private_Clean:")):
            clean[name] += int(line.split()[1])
    return sum(rss.values()), rss, clean


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=4800)
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    from scale import workspace

    root = workspace(args.files, "notes")  # the workspace its figures in docs/benchmarks.md were read on
    try:
        env = dict(os.environ, MEMFLOW_INDEX_WORKERS="1")
        child = subprocess.Popen([str(MEMFLOW), "-w", str(root), "index"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = (0, Counter(), Counter())
        while child.poll() is None:
            try:
                now = reading(child.pid)
            except OSError:  # ended between the poll and the read
                break
            best = max(best, now, key=lambda r: r[0])
            time.sleep(0.05)
        if child.wait() != 0:
            raise SystemExit(f"memflow index failed ({child.returncode})")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    total, rss, clean = best
    own = sum(v for k, v in rss.items() if not k.startswith("/"))
    files = total - own
    mib = lambda kib: f"{kib / 1024:.0f}"  # noqa: E731
    print(f"cold index of {args.files} files in one process, largest reading: RSS {mib(total)} MiB")
    print("| part | resident MiB | clean MiB | written MiB |\n|---|---|---|---|")
    print(f"| own pages (anonymous, heap, stacks) | {mib(own)} | - | {mib(own)} |")
    file_clean = sum(v for k, v in clean.items() if k.startswith("/"))
    print(f"| mapped files | {mib(files)} | {mib(file_clean)} | {mib(files - file_clean)} |")
    for name, kib in [(k, v) for k, v in rss.most_common() if k.startswith("/")][:args.top]:
        print(f"| {Path(name).name} | {mib(kib)} | {mib(clean[name])} | {mib(kib - clean[name])} |")


if __name__ == "__main__":
    main()
