"""Index at scale (issue #30): cold `memflow index`, a one-file change, and the necessary-work
yardstick, each a whole process on the same generated workspace, in the same run.

    .venv/bin/python benchmarks/scale.py --sizes 1000,10000,30000,100000
    .venv/bin/python benchmarks/scale.py --sizes 4800,24000 --vs-reme 4800,24000

The yardstick is one Python process that reads every file, hashes it, tokenizes it with the
project's tokenizer, builds a bm25s index and saves it: what any keyword index of these files
must do. Prints Markdown tables: seconds, peak RSS (the larger of the child's own, from wait4,
and the sum over it and its workers, sampled), time per file and the cold index's ratios to the
yardstick; the cold index runs twice, with its file-parsing workers (the default) and in one
process (MEMFLOW_INDEX_WORKERS=1), each with its CPU seconds. With ReMe, also the sampled peak
of anonymous memory (RSS less the mapped pages of library files) of both.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
MEMFLOW = Path(sys.executable).with_name("memflow")


def tree_rss(pid: int) -> tuple[int, int]:
    """(resident bytes, of them anonymous bytes) of `pid` and every process under it, now
    (Linux /proc). Anonymous memory is the process's own (heap, stacks, written pages); the
    rest of RSS is mapped file pages (shared libraries' code and data read from disk), which
    the page cache shares between processes and can drop."""
    parents: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry.name))
    total = anon = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        total += int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
        anon += int(fields.get("RssAnon", "0 kB").split()[0]) * 1024
        todo.extend(parents.get(p, []))
    return total, anon


def timed(argv: list[str], env: dict | None = None, usage_out: dict | None = None) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one child process: the larger of its own peak (wait4)
    and the sum over it and its worker processes, sampled every 50 ms. `usage_out` gets the
    CPU seconds (user + system) of the child and the children it waited for, and `anon` the
    sampled peak of the tree's anonymous memory in MiB (RSS less mapped file pages)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=None if env is None else {**os.environ, **env})
    peak = peak_anon = 0
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        rss, anon = tree_rss(proc.pid)
        peak, peak_anon = max(peak, rss), max(peak_anon, anon)
        time.sleep(0.05)
    wall = time.perf_counter() - started
    if status != 0:
        raise RuntimeError(f"{argv} failed: {proc.stderr.read().decode()[-2000:]}")
    if usage_out is not None:
        usage_out["cpu"] = usage.ru_utime + usage.ru_stime
        usage_out["anon"] = peak_anon / 2**20
    return wall, max(usage.ru_maxrss * 1024, peak) / 2**20


def yardstick(root: Path) -> None:
    """The necessary work, in this process."""
    import bm25s

    from memflow.tasks.ground.tokenize import tokenize

    corpus = []
    for path in sorted(p for folder in ("daily", "digest") for p in (root / folder).rglob("*.md")):
        data = path.read_bytes()
        hashlib.sha256(data).hexdigest()
        corpus.append(tokenize(data.decode("utf-8")))
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    retriever.index(corpus, show_progress=False)
    out = Path(tempfile.mkdtemp(prefix="yardstick-"))
    retriever.save(str(out / "bm25"), show_progress=False)
    shutil.rmtree(out)


def workspace(count: int) -> Path:
    from corpus import build

    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import init_workspace, layout

    root = Path(tempfile.mkdtemp(prefix=f"bench-scale-{count}-"))
    init_workspace(layout(load_settings(root)))
    build(root, count)
    return root


def measure(count: int, reme: Path | None = None) -> dict:
    root = workspace(count)
    index = [str(MEMFLOW), "-w", str(root), "index"]
    out = {"files": count}
    out["yard_s"], out["yard_mb"] = timed([sys.executable, str(Path(__file__)), "--yardstick", str(root)])
    cpu: dict = {}
    out["one_s"], out["one_mb"] = timed(index, {"MEMFLOW_INDEX_WORKERS": "1"}, cpu)
    out["one_cpu"] = cpu["cpu"]
    shutil.rmtree(root / "metadata" / "index")
    out["cold_s"], out["cold_mb"] = timed(index, usage_out=cpu)
    out["cold_cpu"], out["cold_anon"] = cpu["cpu"], cpu["anon"]
    change = "\nA new line about zanzibarquokka.\n"
    target = root / "daily/2026-01-02/n1.md"
    target.write_text(target.read_text() + change)
    out["change_s"], out["change_mb"] = timed(index, usage_out=cpu)
    out["change_anon"] = cpu["anon"]
    if reme is not None:  # ReMe 0.4.2 on a copy of the same files, its index whole processes too
        other = root.with_name(root.name + "-reme")
        for folder in ("daily", "digest"):
            shutil.copytree(root / folder, other / folder)
        side = [str(reme), str(HERE / "reme_index.py"), str(other)]
        out["reme_cold_s"], out["reme_cold_mb"] = timed([*side, "--cold"], usage_out=cpu)
        out["reme_cold_anon"] = cpu["anon"]
        (other / "daily/2026-01-02/n1.md").write_text((other / "daily/2026-01-02/n1.md").read_text() + change)
        out["reme_change_s"], out["reme_change_mb"] = timed(side, usage_out=cpu)
        out["reme_change_anon"] = cpu["anon"]
        shutil.rmtree(other)
    shutil.rmtree(root)
    return out


def table(results: list[dict]) -> str:
    base = next((r for r in results if r["files"] == 10000), results[0])
    per_base = base["cold_s"] / base["files"]
    lines = ["| files | cold index (s) | peak RSS (MiB) | ms/file (vs 10k) | one-file change (s) | "
             "its RSS (MiB) | yardstick (s) | its RSS (MiB) | cold / yardstick (time, RSS) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        per = r["cold_s"] / r["files"]
        lines.append(f"| {r['files']:,} | {r['cold_s']:.2f} | {r['cold_mb']:.0f} | {1000 * per:.3f} "
                     f"({per / per_base:.2f}) | {r['change_s']:.2f} | {r['change_mb']:.0f} | "
                     f"{r['yard_s']:.2f} | {r['yard_mb']:.0f} | {r['cold_s'] / r['yard_s']:.2f}, "
                     f"{r['cold_mb'] / r['yard_mb']:.2f} |")
    lines += ["", "| files | cold index, workers (s, CPU s, MiB) | in one process (s, CPU s, MiB) | "
              "workers / one process (time, RSS) | one process / yardstick (time) |", "|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['files']:,} | {r['cold_s']:.2f}, {r['cold_cpu']:.2f}, {r['cold_mb']:.0f} | "
                     f"{r['one_s']:.2f}, {r['one_cpu']:.2f}, {r['one_mb']:.0f} | "
                     f"{r['cold_s'] / r['one_s']:.2f}, {r['cold_mb'] / r['one_mb']:.2f} | "
                     f"{r['one_s'] / r['yard_s']:.2f} |")
    reme = [r for r in results if "reme_cold_s" in r]
    if reme:
        lines += ["", "| files | vs ReMe 0.4.2, cold index (time, RSS, anon.) | one-file change (time, RSS, anon.) | "
                  "memory-flows anon. (cold, change MiB) | ReMe cold (s, MiB, anon.) | ReMe change (s, MiB, anon.) |",
                  "|---|---|---|---|---|---|"]
        for r in reme:
            lines.append(f"| {r['files']:,} | {r['cold_s'] / r['reme_cold_s']:.2f}, {r['cold_mb'] / r['reme_cold_mb']:.2f}, "
                         f"{r['cold_anon'] / r['reme_cold_anon']:.2f} | {r['change_s'] / r['reme_change_s']:.2f}, "
                         f"{r['change_mb'] / r['reme_change_mb']:.2f}, {r['change_anon'] / r['reme_change_anon']:.2f} | "
                         f"{r['cold_anon']:.0f}, {r['change_anon']:.0f} | "
                         f"{r['reme_cold_s']:.1f}, {r['reme_cold_mb']:.0f}, {r['reme_cold_anon']:.0f} | "
                         f"{r['reme_change_s']:.1f}, {r['reme_change_mb']:.0f}, {r['reme_change_anon']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,30000,100000")
    parser.add_argument("--vs-reme", default="", metavar="SIZES",
                        help="sizes also measured with ReMe 0.4.2 (builds benchmarks/.reme-venv once)")
    parser.add_argument("--yardstick", metavar="WORKSPACE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.yardstick:
        yardstick(Path(args.yardstick))
        return
    results = []
    with_reme = {int(s) for s in args.vs_reme.split(",") if s}
    for count in map(int, args.sizes.split(",")):
        reme = None
        if count in with_reme:
            from run import reme_python

            reme = reme_python()
        results.append(measure(count, reme))
        print(results[-1], file=sys.stderr, flush=True)
    print(table(results))


if __name__ == "__main__":
    main()
