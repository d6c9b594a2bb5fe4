"""Index at scale (issues #30, #58): cold `memflow index`, a one-file change, and the
necessary-work yardstick, each a whole process on the same workspace, in the same run.

    .venv/bin/python benchmarks/scale.py --sizes 4800,24000 --vs-reme 4800,24000
    .venv/bin/python benchmarks/scale.py --sizes 24000 --rounds 3   # paired medians, a busy machine
    .venv/bin/python benchmarks/scale.py --sizes 1000,10000,30000,100000 --corpus notes

The workspace is `benchmarks/realistic.py`'s (the default, `--corpus realistic`: a folder per
day over years, notes, session logs, resources and their notes, digest nodes) or the old
`benchmarks/corpus.py` notes (`--corpus notes`: Markdown under daily/ and digest/ only).

The yardstick is one Python process that reads every file `memflow index` indexes (Markdown
under daily/ and digest/, `session/dialog/*.jsonl`, text resources under resource/; checked
equal to `indexed_files`' list before it runs), hashes it, tokenizes it with the project's
tokenizer (a session log's messages as `role: content` lines, JSON-decoded), builds a bm25s
index and saves it: what any keyword index of these files must do. ReMe 0.4.2
(`--vs-reme`) indexes a copy of the same files (`reme_index.py`).

Every figure is a whole process tree: CPU seconds (user + system of the process and the
children it waited for, from wait4), wall seconds, peak RSS (the larger of the child's own,
from wait4, and the sum over it and its workers, sampled every 50 ms) and peak anonymous memory
(the tree's own pages, RssAnon, sampled: what RSS holds less the clean pages of library files,
which the page cache shares and can drop). The cold index runs twice, with its file-parsing
workers (the default) and in one process (MEMFLOW_INDEX_WORKERS=1). The load average is read
before and after each size. Prints Markdown tables; `--json` also writes the raw figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
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
# what `memflow index` reads (indexing.indexed_files): checked equal before the yardstick runs
MARKDOWN_LAYERS = ("daily", "digest")
SESSION_LOGS = "session/dialog"
RESOURCES = "resource"
TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".log", ".json", ".jsonl", ".csv", ".tsv", ".yaml",
                 ".yml", ".html", ".htm")
CHANGE = "\nA new line about zanzibarquokka.\n"


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


def timed(argv: list[str], env: dict | None = None) -> dict:
    """One child process tree, run to its end: `s` wall seconds, `cpu` CPU seconds (user +
    system of the child and the children it waited for, from wait4), `mb` peak RSS MiB (the
    larger of the child's own peak and the sum over it and its workers, sampled every 50 ms),
    `anon` the sampled peak of the tree's anonymous MiB."""
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
    return {"s": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "mb": max(usage.ru_maxrss * 1024, peak) / 2**20, "anon": peak_anon / 2**20}


def listing(root: Path) -> list[str]:
    """The files `memflow index` indexes in `root`, workspace-relative, sorted."""
    found = []
    for folder, suffixes in [*((f, (".md",)) for f in MARKDOWN_LAYERS), (SESSION_LOGS, (".jsonl",)),
                             (RESOURCES, TEXT_SUFFIXES)]:
        for dirpath, dirnames, filenames in os.walk(root / folder):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            found += [f"{rel}/{name}" for name in filenames
                      if not name.startswith(".") and name.lower().endswith(suffixes)]
    return sorted(found)


def yardstick(root: Path) -> None:
    """The necessary work, in this process: read, hash and tokenize every indexed file (a
    session log's messages JSON-decoded, as `role: content` lines), one bm25s index, saved."""
    import bm25s

    from memflow.tasks.ground.tokenize import tokenize

    corpus = []
    for rel in listing(root):
        data = (root / rel).read_bytes()
        hashlib.sha256(data).hexdigest()
        text = data.decode("utf-8")
        if rel.startswith(SESSION_LOGS):
            text = "\n".join(f"{m.get('role', '')}: {m.get('content', '')}"
                             for m in map(json.loads, filter(None, text.split("\n"))))
        corpus.append(tokenize(text))
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    retriever.index(corpus, show_progress=False)
    out = Path(tempfile.mkdtemp(prefix="yardstick-"))
    retriever.save(str(out / "bm25"), show_progress=False)
    shutil.rmtree(out)


def workspace(count: int, corpus: str = "realistic") -> Path:
    """A new workspace of `count` indexed files: `realistic.build`'s or `corpus.build`'s notes."""
    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import init_workspace, layout

    root = Path(tempfile.mkdtemp(prefix=f"bench-scale-{count}-"))
    init_workspace(layout(load_settings(root)))
    if corpus == "realistic":
        import realistic

        realistic.build(root, count)
    else:
        import corpus as notes

        notes.build(root, count)
    return root


def check_listing(root: Path) -> dict:
    """The yardstick's files are `memflow index`'s (`indexed_files`); returns files and MiB
    per layer."""
    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import layout
    from memflow.tasks.index.indexing import indexed_files

    settings = load_settings(root)
    ours = listing(root)
    theirs = sorted(indexed_files(layout(settings), settings.resource_index_max_bytes))
    if ours != theirs:
        raise SystemExit(f"yardstick and memflow index differ: {sorted(set(ours) ^ set(theirs))[:10]}")
    layers: dict = {}
    for rel in ours:
        layer = rel.split("/", 1)[0]
        files, size = layers.get(layer, (0, 0))
        layers[layer] = (files + 1, size + (root / rel).stat().st_size)
    return {layer: (files, round(size / 2**20, 1)) for layer, (files, size) in sorted(layers.items())}


def bytecode(python: Path, *folders: Path) -> None:
    """Compile `python`'s installed packages and `folders` to bytecode, as an install does: with
    PYTHONDONTWRITEBYTECODE set and no __pycache__, every process compiles its imports anew (a
    24,000-file `memflow index` spent ~4 of its ~30 CPU seconds so), which no user pays."""
    script = ("import compileall, sys, sysconfig\n"
              "for folder in [sysconfig.get_paths()['purelib'], *sys.argv[1:]]:\n"
              "    compileall.compile_dir(folder, quiet=2, workers=0)")
    subprocess.run([str(python), "-c", script, *map(str, folders)], check=True)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def changed_file(root: Path) -> str:
    """The file a one-file change edits: the newest day's last note (a person's today)."""
    days = sorted(p for p in (root / "daily").iterdir() if p.is_dir())
    return str(sorted(days[-1].glob("*.md"))[-1].relative_to(root))


def median_run(runs: list[dict]) -> dict:
    """The run of median CPU among `runs` (an odd count keeps a real run), with every run's CPU
    seconds in `cpus`."""
    ranked = sorted(runs, key=lambda r: r["cpu"])
    return {**ranked[(len(ranked) - 1) // 2], "cpus": [round(r["cpu"], 2) for r in runs]}


def measure(count: int, corpus: str, reme: Path | None = None, rounds: int = 1) -> dict:
    """Every figure for one workspace of `count` files. With `rounds` > 1 the yardstick, the
    cold index in one process and the cold index with workers run `rounds` times interleaved
    (their order reversed every other round, so a change in the machine's load falls on all
    three alike) and each keeps its median-CPU run; the ratio to the yardstick is the median
    of the per-round ratios."""
    root = workspace(count, corpus)
    index = [str(MEMFLOW), "-w", str(root), "index"]
    out: dict = {"files": count, "layers": check_listing(root), "load_before": load(), "rounds": rounds}
    runs: dict[str, list[dict]] = {"yard": [], "one": [], "cold": []}
    commands = {"yard": ([sys.executable, str(Path(__file__)), "--yardstick", str(root)], None),
                "one": (index, {"MEMFLOW_INDEX_WORKERS": "1"}), "cold": (index, None)}
    for round_ in range(rounds):
        for key in ("yard", "one", "cold") if round_ % 2 == 0 else ("cold", "one", "yard"):
            shutil.rmtree(root / "metadata" / "index", ignore_errors=True)
            runs[key].append(timed(*commands[key]))
    for key, taken in runs.items():
        out[key] = median_run(taken)
    for key in ("one", "cold"):
        ratios = sorted(r["cpu"] / y["cpu"] for r, y in zip(runs[key], runs["yard"]))
        out[key]["vs_yard"] = ratios[(len(ratios) - 1) // 2]
    if rounds % 2 == 0:  # the last round ran the yardstick last: the one-file change needs an index
        timed(index)
    target = root / changed_file(root)
    target.write_text(target.read_text() + CHANGE)
    out["change"] = timed(index)
    if reme is not None:  # ReMe 0.4.2 on a copy of the same files, its index whole processes too
        other = root.with_name(root.name + "-reme")
        for rel in listing(root):
            (other / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, other / rel)
        side = [str(reme), str(HERE / "reme_index.py"), str(other)]
        out["reme_cold"] = timed([*side, "--cold"])
        copy = other / target.relative_to(root)
        copy.write_text(copy.read_text() + CHANGE)
        out["reme_change"] = timed(side)
        shutil.rmtree(other)
    out["load_after"] = load()
    shutil.rmtree(root)
    return out


def cell(r: dict) -> str:
    return f"{r['cpu']:.2f} | {r['s']:.2f} | {r['mb']:.0f} | {r['anon']:.0f}"


def table(results: list[dict]) -> str:
    lines = ["| files | run | CPU s | wall s | peak RSS MiB | peak anon. MiB | CPU / yardstick | "
             "anon. / ReMe's | RSS / ReMe's |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        reme = r.get("reme_cold")
        runs = [("memflow cold index", "cold"), ("  in one process", "one"), ("yardstick", "yard"),
                ("ReMe 0.4.2 cold", "reme_cold"), ("memflow one-file change", "change"),
                ("ReMe one-file change", "reme_change")]
        for label, key in runs:
            if key not in r:
                continue
            row = r[key]
            versus = reme if key in ("cold", "one") else r.get("reme_change") if key == "change" else None
            vs = (f"{row['anon'] / versus['anon']:.2f} | {row['mb'] / versus['mb']:.2f}" if versus else "- | -")
            ratio = (f"{row['vs_yard']:.2f}" if "vs_yard" in row else
                     f"{row['cpu'] / r['yard']['cpu']:.2f}" if key == "reme_cold" else "-")
            lines.append(f"| {r['files']:,} | {label} | {cell(row)} | {ratio} | {vs} |")
    if any(r.get("rounds", 1) > 1 for r in results):
        lines += ["", "Rounds interleaved: each run's median-CPU run above, its ratio the median of the "
                  "per-round ratios; CPU s of every round:"]
        lines += [f"- {r['files']:,} {key}: {r[key]['cpus']}" for r in results for key in ("yard", "one", "cold")
                  if "cpus" in r[key]]
    lines += ["", "| files | indexed files per layer (files, MiB) | load before, after (1/5/15 min) |",
              "|---|---|---|"]
    for r in results:
        layers = ", ".join(f"{k} {n:,} / {mb}" for k, (n, mb) in r["layers"].items())
        lines.append(f"| {r['files']:,} | {layers} | {r['load_before']}; {r['load_after']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="4800,24000")
    parser.add_argument("--corpus", choices=("realistic", "notes"), default="realistic",
                        help="realistic.py's workspace (default) or corpus.py's notes")
    parser.add_argument("--vs-reme", default="", metavar="SIZES",
                        help="sizes also measured with ReMe 0.4.2 (builds benchmarks/.reme-venv once)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run yardstick and cold indexes this many times, interleaved, and keep "
                             "medians (single runs move with the machine's load)")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    parser.add_argument("--yardstick", metavar="WORKSPACE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.yardstick:
        yardstick(Path(args.yardstick))
        return
    results = []
    with_reme = {int(s) for s in args.vs_reme.split(",") if s}
    bytecode(Path(sys.executable), *(HERE.parent / name for name in ("memflow", "flows", "tasks", "schemas")))
    for count in map(int, args.sizes.split(",")):
        reme = None
        if count in with_reme:
            from run import reme_python

            reme = reme_python()
            bytecode(reme)
        results.append(measure(count, args.corpus, reme, args.rounds))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    print(table(results))


if __name__ == "__main__":
    main()
