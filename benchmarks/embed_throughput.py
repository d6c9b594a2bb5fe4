"""Vectors a user can leave on (issue #58, item 3), all in one run on one generated workspace
(benchmarks/corpus.py), with `local/all-MiniLM-L6-v2` (the `local` extra) or another local model
(`--model local/static-all-MiniLM-L6-v2`: distilled into the per-user cache before the timings):

1. embedding throughput: the index's embedding stage (`backfill_vectors`, model already loaded)
   against the model's own bare `encode` on the same texts (what the stage embeds: each chunk's
   embedding input, once per distinct text), alternated over `--rounds` rounds;
2. cold `memflow index` with vectors on against BM25 only (each a whole process, wall and CPU);
3. search: hybrid `api.search` in a resident process (model loaded; a query seen before and new
   ones), and the first answer of a fresh `memflow search` process with vectors on: a query
   searched before (its vector on disk: no model load), a new one (model load), and with
   `memflow serve` running (the warm CLI).

    .venv/bin/python benchmarks/embed_throughput.py --files 60 --rounds 2
    .venv/bin/python benchmarks/embed_throughput.py --files 300 --rounds 1 --model local/static-all-MiniLM-L6-v2
    .venv/bin/python benchmarks/embed_throughput.py --files 4800 --rounds 1 --corpus realistic \
        --model local/static-all-MiniLM-L6-v2

Prints Markdown tables. Figures on this shared 2-core machine move with its load: read the
ratios, each from pairs measured back to back.
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
MODEL = "local/all-MiniLM-L6-v2"
QUERIES = ["handleWebSocketReconnect timeout", "deploy rollback budget", "P99 latency dashboard",
           "invoice billing tenant", "backup restore node", "缓存 服务器", "kernel patch review",
           "garden recipe hotel"]


def workspace(files: int, corpus: str = "notes") -> Path:
    """corpus.py's notes, or realistic.py's workspace (a folder per day, sessions, digests)."""
    from memflow import api

    root = Path(tempfile.mkdtemp(prefix=f"bench-embed-{files}-"))
    api.init(root)
    if corpus == "realistic":
        import realistic

        realistic.build(root, files)
    else:
        from corpus import build

        build(root, files)
    return root


def cpu_of(argv: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU seconds) of one child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if status:
        raise RuntimeError(f"{argv} failed: {proc.stderr.read().decode()[-2000:]}")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def cold_index(root: Path) -> dict:
    out = {}
    for name, model in (("bm25", ""), ("vectors", MODEL)):
        copy = Path(tempfile.mkdtemp(prefix="bench-embed-cold-")) / "ws"
        shutil.copytree(root, copy)
        out[name] = cpu_of([str(MEMFLOW), "-w", str(copy), "index"],
                           {"MEMFLOW_EMBEDDING_MODEL": model, "MEMFLOW_WARM": "0"})
        shutil.rmtree(copy.parent)
    return out


def bare_encode(model, texts: list[str]):
    """The model's own `encode` of the texts, unit vectors (sentence-transformers' or model2vec's)."""
    from memflow.tasks.ground.static_embeddings import is_static

    if is_static(MODEL.removeprefix("local/")):
        return model.encode(texts, normalize=True, use_multiprocessing=False)
    return model.encode(texts, normalize_embeddings=True, show_progress_bar=False)


def throughput(root: Path, rounds: int) -> list[tuple[int, float, float, float, float]]:
    """Per round: (texts, bare encode chunks/s, index stage chunks/s), per wall second and
    per CPU second of this process (all its threads; the fair figure on a shared machine)."""
    from memflow import api
    from memflow.tasks.ground.local_embeddings import _model
    from memflow.tasks.ground.workspace import layout
    from memflow.tasks.index.indexing import open_store
    from memflow.tasks.index.vectors import backfill_vectors, embedding_input

    base = Path(tempfile.mkdtemp(prefix="bench-embed-stage-")) / "ws"
    shutil.copytree(root, base)
    bm25 = api.settings_for(base, embedding_model="")
    api.index(bm25)
    rows = open_store(layout(bm25), bm25).chunk_columns(["id", "text", "name", "description"]).to_pylist()
    texts = list(dict.fromkeys(embedding_input(r) for r in rows))
    model = _model(MODEL.removeprefix("local/"))
    bare_encode(model, texts[:8])  # first-call costs out of both timings
    results = []
    for n in range(rounds):
        started, cpu = time.perf_counter(), time.process_time()
        bare_encode(model, texts)
        bare = len(texts) / (time.perf_counter() - started)
        bare_cpu = len(texts) / (time.process_time() - cpu)
        copy = base.parent / f"round{n}"
        shutil.copytree(base, copy)
        settings = api.settings_for(copy, embedding_model=MODEL)
        store = open_store(layout(settings), settings)
        started, cpu = time.perf_counter(), time.process_time()
        embedded = backfill_vectors(store, settings)
        stage = embedded / (time.perf_counter() - started)
        stage_cpu = embedded / (time.process_time() - cpu)
        results.append((len(texts), bare, stage, bare_cpu, stage_cpu))
    shutil.rmtree(base.parent)
    return results


def searches(root: Path) -> dict:
    """Hybrid search timings with vectors on (the workspace indexed with vectors)."""
    from memflow import api

    env = {"MEMFLOW_EMBEDDING_MODEL": MODEL, "MEMFLOW_WARM": "0"}
    subprocess.run([str(MEMFLOW), "-w", str(root), "index"], env={**os.environ, **env}, check=True,
                   capture_output=True)
    settings = api.settings_for(root, embedding_model=MODEL)
    out = {}
    for query in QUERIES:  # a resident process: a new query costs its encode, then it is cached
        started = time.perf_counter()
        api.search(query, settings)
        out.setdefault("new", []).append(time.perf_counter() - started)
    for _ in range(5):
        for query in QUERIES:
            started = time.perf_counter()
            api.search(query, settings)
            out.setdefault("seen", []).append(time.perf_counter() - started)
    out["cli_seen"] = [cpu_of([str(MEMFLOW), "-w", str(root), "search", QUERIES[0]], env)[0]]
    out["cli_new"] = [cpu_of([str(MEMFLOW), "-w", str(root), "search", "a query never searched"], env)[0]]
    server = subprocess.Popen([str(MEMFLOW), "-w", str(root), "serve", "--transport", "socket"],
                              env={**os.environ, "MEMFLOW_EMBEDDING_MODEL": MODEL},
                              stderr=subprocess.PIPE, text=True)
    try:
        if "CLI socket" not in server.stderr.readline():
            raise RuntimeError("memflow serve did not start")
        warm = {**env, "MEMFLOW_WARM": "require"}
        cpu_of([str(MEMFLOW), "-w", str(root), "search", QUERIES[1]], warm)  # the server's first
        out["cli_warm"] = [cpu_of([str(MEMFLOW), "-w", str(root), "search", q], warm)[0] for q in QUERIES]
    finally:
        server.terminate()
        server.wait(30)
    return out


def main() -> None:
    global MODEL
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--corpus", choices=("notes", "realistic"), default="notes",
                        help="corpus.py's notes (default) or realistic.py's workspace (issue #58's 4,800 files)")
    parser.add_argument("--model", default=MODEL, help=f"a local model (default {MODEL})")
    args = parser.parse_args()
    MODEL = args.model
    root = workspace(args.files, args.corpus)
    print("load average (1, 5, 15 min) at the start: %.1f %.1f %.1f\n" % os.getloadavg())
    print(f"## Embedding throughput, {MODEL}, {args.files} files ({args.corpus})\n")
    print("| round | texts | bare encode chunks/s (wall, CPU) | index stage chunks/s (wall, CPU) "
          "| stage / bare (wall, CPU) |")
    print("| --- | --- | --- | --- | --- |")
    for n, (texts, bare, stage, bare_cpu, stage_cpu) in enumerate(throughput(root, args.rounds), 1):
        print(f"| {n} | {texts} | {bare:.2f}, {bare_cpu:.2f} | {stage:.2f}, {stage_cpu:.2f} | "
              f"{stage / bare:.2f}x, {stage_cpu / bare_cpu:.2f}x |", flush=True)
    cold = cold_index(root)
    print(f"\n## Cold `memflow index`, {args.files} files\n")
    print("| index | wall s | CPU s |\n| --- | --- | --- |")
    for name, (wall, cpu) in cold.items():
        print(f"| {name} | {wall:.1f} | {cpu:.1f} |")
    print(f"| vectors / bm25 | {cold['vectors'][0] / cold['bm25'][0]:.1f}x | "
          f"{cold['vectors'][1] / cold['bm25'][1]:.1f}x |", flush=True)
    timings = searches(root)
    print("\n## Hybrid search, vectors on\n")
    print("| what | n | p50 ms | max ms |\n| --- | --- | --- | --- |")
    names = {"seen": "resident process, query seen before", "new": "resident process, new query",
             "cli_seen": "fresh CLI process, query searched before (vector on disk)",
             "cli_new": "fresh CLI process, new query (loads the model)",
             "cli_warm": "CLI with `memflow serve` running"}
    for key, label in names.items():
        values = timings[key]
        print(f"| {label} | {len(values)} | {1000 * statistics.median(values):.1f} | "
              f"{1000 * max(values):.1f} |")
    print("\nload average (1, 5, 15 min) at the end: %.1f %.1f %.1f" % os.getloadavg())
    shutil.rmtree(root)


if __name__ == "__main__":
    main()
