"""Search as callers get it on a workspace kept daily for years (issue #58): `memflow.api.search`
plain and packed to 1,000 tokens, and the index freshness check alone, p50/p95 in CPU time
(`time.process_time`) and wall time, on a `benchmarks/realistic.py` workspace indexed once.

    .venv/bin/python benchmarks/realistic_search.py --files 24000 --root /tmp/ws24k
    .venv/bin/python benchmarks/realistic_search.py --files 72000 --root /tmp/ws72k --profile

`--root` is generated (and indexed) when it does not exist and reused when it does, so a second
run measures the same files without paying for them again; `--python` runs the measurement in
another tree's interpreter (the same workspace, indexed by whichever tree indexed it first:
reindex with `--reindex` when the trees' index formats differ). One JSON line per run.
`--writes N` then times N write -> searchable (`api.write`, then the search that finds the new
word; new files and overwrites alternately, no `memflow index` between): it changes the
workspace, so give it a copy (`cp -a`). `--vectors` first turns vectors on in that copy
(`--model`, `local/all-MiniLM-L6-v2` unless told, loaded before the timing, as in a resident process): the chunks
indexed so far get stand-in vectors through the embedding cache (a pseudo-random unit vector
per text, seeded by its hash: embedding 45,000 chunks would take hours here, and a write's work
does not depend on their values), and the model embeds what each write adds.
Queries: two or three words of the generator's vocabulary, seeded (a name or an identifier in
a third of them), none asked twice in a row; each is asked `--rounds` times.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def queries(seed: int, count: int) -> list[str]:
    from realistic import Vocabulary

    vocab = Vocabulary(random.Random(1))  # the generator's first draw with its default seed
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        words = rng.sample(vocab.words[100:6000], rng.randint(2, 3))
        if rng.random() < 0.33:
            words[0] = rng.choice(vocab.names + vocab.idents)
        out.append(" ".join(words))
    return out


def timed(fn, values: int | list, rounds: int) -> dict:
    """p50/p95 of CPU and wall milliseconds of `fn(v)` over every value, `rounds` times; with
    more than one round, also the CPU p50 of the first round (each value met for the first
    time: what a process has not seen yet) and of the others (asked again)."""
    cpu, wall = [], []
    for _ in range(rounds):
        for value in values if isinstance(values, list) else range(values):
            c, w = time.process_time(), time.perf_counter()
            fn(value)
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - w)
    out = {}
    if rounds > 1:
        first = len(cpu) // rounds
        out["cpu_first_p50_ms"] = round(1000 * statistics.median(cpu[:first]), 3)
        out["cpu_again_p50_ms"] = round(1000 * statistics.median(cpu[first:]), 3)
    for name, series in (("cpu", cpu), ("wall", wall)):
        series.sort()
        out[f"{name}_p50_ms"] = round(1000 * statistics.median(series), 3)
        out[f"{name}_p95_ms"] = round(1000 * series[int(0.95 * (len(series) - 1))], 3)
    return out


def prepare(root: Path, files: int, reindex: bool) -> dict:
    from realistic import build

    from memflow import api

    out: dict = {}
    if not root.exists():
        started = time.perf_counter()
        out["generated"] = build(root, files)
        out["generate_s"] = round(time.perf_counter() - started, 1)
    if reindex or not (root / "metadata/index/watermark.json").exists():
        started, cpu = time.perf_counter(), time.process_time()
        summary = api.reindex(root) if reindex else api.index(root)
        out["index_wall_s"] = round(time.perf_counter() - started, 1)
        out["index_cpu_s"] = round(time.process_time() - cpu, 1)
        out["indexed_files"] = getattr(summary, "total_files", None)
    return out


def measure(root: Path, rounds: int, profile: bool) -> dict:
    from memflow import api
    from memflow.tasks.ground.workspace import layout
    from memflow.tasks.index import watermark

    lay = layout(api.settings_for(root))
    asked = queries(7, 30)
    api.search(asked[0], root)  # the process's first search loads the snapshot: not timed
    api.search(asked[0], root, budget_tokens=1000)
    try:  # the check a search makes, with its hits (this tree), beside the check alone
        from memflow.tasks.recall.hybrid import indexed_mtimes, open_index

        index = open_index(lay, api.settings_for(root))
        hits = [r.path for r in api.search(asked[1], root).results]
        with_hits = {"freshness_with_hits": timed(lambda _: watermark(lay, hits=indexed_mtimes(index, hits)), 200, rounds)}
    except ImportError:  # a tree whose check does not take the hits
        with_hits = {}
    out = {"freshness": timed(lambda _: watermark(lay), 200, rounds), **with_hits,
           "plain": timed(lambda q: api.search(q, root), asked, rounds),
           "packed_1000": timed(lambda q: api.search(q, root, budget_tokens=1000), asked, rounds)}
    mark = api.search(asked[0], root).watermark
    out["watermark"] = {k: v for k, v in mark.items() if k != "unseen"}
    out["hits_per_query"] = statistics.mean(len(api.search(q, root).results) for q in asked[:10])
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for q in asked:
            api.search(q, root, budget_tokens=1000)
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(35)
    return out


def token(n: int) -> str:
    """A one-token word new to the workspace for write `n` (letters only: digits would split it)."""
    letters = ""
    while True:
        n, r = divmod(n, 26)
        letters += chr(ord("a") + r)
        if not n:
            return f"zqx{letters}vwq"


def writes(root: Path, count: int) -> dict:
    """Write -> searchable: `api.write` then the search that finds the new word, alternating a
    new file in the last day folder and an overwrite of an existing note (spread over the
    years); p50 of the first and the last 50 of each kind, with no `memflow index` between."""
    from memflow import api

    notes = sorted(p.relative_to(root).as_posix() for p in (root / "daily").glob("*/*.md"))
    last_day = sorted(d.name for d in (root / "daily").iterdir() if d.is_dir())[-1]
    rng = random.Random(3)
    series: dict[str, list[float]] = {"new": [], "overwrite": [], "new_cpu": [], "overwrite_cpu": []}
    for n in range(count):
        word = token(n)
        if n % 2:
            rel = rng.choice(notes)
            content = (root / rel).read_text(encoding="utf-8") + f"\nA new line about {word}.\n"
            kind = "overwrite"
        else:
            rel = f"daily/{last_day}/bench-write-{n}.md"
            content = f"# Bench write {n}\n\nA new note about {word}.\n"
            kind = "new"
        c, t = time.process_time(), time.perf_counter()
        api.write(rel, content, workspace=root)
        found = api.search(word, root, limit=1).results
        series[kind].append(time.perf_counter() - t)
        series[f"{kind}_cpu"].append(time.process_time() - c)
        assert found and found[0].path == rel, f"{rel} not found after write {n}: {[r.path for r in found]}"
    out: dict = {"writes": count}
    for kind, values in series.items():
        head, tail = values[:50], values[-50:]
        out[f"{kind}_first50_p50_ms"] = round(1000 * statistics.median(head), 1)
        out[f"{kind}_last50_p50_ms"] = round(1000 * statistics.median(tail), 1)
        out[f"{kind}_p50_ms"] = round(1000 * statistics.median(values), 1)
        out[f"{kind}_p95_ms"] = round(1000 * sorted(values)[int(0.95 * (len(values) - 1))], 1)
    return out


VECTOR_MODEL = "local/all-MiniLM-L6-v2"


def with_vectors(root: Path, model: str = VECTOR_MODEL) -> dict:
    """Vectors on in `root` with `model` (see the module's text); returns the seeding's figures."""
    import hashlib

    import numpy as np

    from memflow import api
    from memflow.tasks.ground.local_embeddings import embed_local
    from memflow.tasks.index.vectors import embedding_input, seed_embedding_cache, text_sha
    from memflow.tasks.stores.lance import IndexStore

    started = time.perf_counter()
    (root / "memflow.toml").write_text(f'embedding_model = "{model}"\n', encoding="utf-8")
    settings = api.settings_for(root)
    rows = IndexStore(root / "metadata/index/lance").chunk_columns(["text", "name", "description"]).to_pylist()
    dims = len(embed_local(model.removeprefix("local/"), ["warm-up"])[0])  # the model loads here
    stand_in = {}
    for row in rows:
        sha = text_sha(embedding_input(row))
        rng = np.random.default_rng(int(hashlib.sha256(sha.encode()).hexdigest()[:16], 16))
        vector = rng.standard_normal(dims)
        stand_in[sha] = (vector / np.linalg.norm(vector)).tolist()
    seed_embedding_cache(settings, model, dims, stand_in)
    summary = api.index(root)
    return {"stand_in_vectors": len(stand_in), "embedded_by_model": summary.vectors,
            "vectors_setup_s": round(time.perf_counter() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=24000)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reindex", action="store_true")
    parser.add_argument("--writes", type=int, default=0,
                        help="then time this many write -> searchable (changes the workspace)")
    parser.add_argument("--profile", action="store_true", help="cProfile of the packed searches, on stderr")
    parser.add_argument("--writes-only", action="store_true", help="time the writes only (no search figures)")
    parser.add_argument("--python", help="measure in this interpreter (another tree's venv)")
    parser.add_argument("--vectors", action="store_true",
                        help="turn vectors on in the workspace (a copy) before the writes")
    parser.add_argument("--model", default=VECTOR_MODEL,
                        help=f"the embedding model --vectors turns on (default {VECTOR_MODEL}; "
                             "local/static-all-MiniLM-L6-v2: the static one)")
    args = parser.parse_args()
    if args.python:
        argv = [a for a in sys.argv[1:] if not a.startswith("--python")]
        if args.python in argv:
            argv.remove(args.python)
        sys.exit(subprocess.call([args.python, __file__, *argv]))
    out = {"files": args.files, "root": str(args.root), **prepare(args.root, args.files, args.reindex)}
    if not args.writes_only:
        out.update(measure(args.root, args.rounds, args.profile))
    if args.vectors:
        out.update(with_vectors(args.root, args.model))
    if args.writes:
        out["write_searchable"] = writes(args.root, args.writes)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
