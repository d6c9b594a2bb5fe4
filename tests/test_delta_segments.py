"""Delta segments (stores.segments): scores after random edit sequences equal a full rebuild's,
and the generation/CURRENT guarantees hold with deltas (a base outlives every delta on it)."""

from __future__ import annotations

import os
import random
import time

import numpy as np
import pyarrow as pa
import pytest

from memflow.tasks.stores import keyword, segments

SEEDS = [int(s) for s in os.environ.get("MEMFLOW_SEEDS", "1,2,3,4,5").split(",")]
DOC_TYPES = {"id": pa.string(), "path": pa.string(), "layer": pa.string(), "kind": pa.string(),
             "date": pa.date32(), "start_line": pa.int32(), "end_line": pa.int32(),
             "heading_path": pa.string(), "text": pa.string(), "name": pa.string(),
             "description": pa.string(), "tags": pa.list_(pa.string()), "line_terms": pa.string(),
             "superseded_lines": pa.list_(pa.int32()),
             "superseded_until": pa.list_(pa.date32()), "superseded_parts": pa.list_(pa.int16())}


def vocabulary(rng: random.Random, size: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return sorted({"".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(size)})


def file_rows(rng: random.Random, path: str, words: list[str], counted: float = 1.0) -> list[dict]:
    """One file's chunks: 1-3 chunks of Zipf-ish terms (a few words are common, most rare);
    with probability `counted` the file's terms make the BM25 statistics (else it is derived)."""
    rows, kept = [], rng.random() < counted
    for n in range(rng.randint(1, 3)):
        terms = [words[min(int(rng.paretovariate(0.8)) - 1, len(words) - 1)] for _ in range(rng.randint(1, 30))]
        rows.append({"id": f"{path}#{n}#{rng.random()}", "path": path, "layer": "daily", "kind": "note",
                     "date": None, "start_line": n * 10 + 1, "end_line": n * 10 + 9, "heading_path": "",
                     "text": " ".join(terms), "name": "", "description": "", "tags": [],
                     "line_terms": " ".join(terms), "superseded_lines": [],
                     "superseded_until": [], "superseded_parts": [], "terms": terms, "counted": kept})
    return rows


def counted_of(rows: list[dict]) -> np.ndarray:
    return np.array([r["counted"] for r in rows], dtype=bool)


def tables(rows: list[dict], files: dict[str, list[dict]] | None = None):
    docs = pa.table({c: pa.array([r[c] for r in rows], t) for c, t in DOC_TYPES.items()})
    terms = pa.array([r["terms"] for r in rows], pa.list_(pa.string()))
    paths = sorted({r["path"] for r in rows} | set(files or {}))
    links = pa.table({"source": pa.array(paths[:1], pa.string()), "line": pa.array([1] * len(paths[:1]), pa.int32()),
                      "target": pa.array(paths[-1:], pa.string()), "anchor": pa.array([""] * len(paths[:1]), pa.string()),
                      "label": pa.array([""] * len(paths[:1]), pa.string()),
                      "kind": pa.array(["link"] * len(paths[:1]), pa.string())})
    n = len(paths)
    files_t = pa.table({"path": pa.array(paths, pa.string()), "layer": pa.array(["daily"] * n, pa.string()),
                        "kind": pa.array(["note"] * n, pa.string()), "size": pa.array([1] * n, pa.int64()),
                        "mtime_ns": pa.array([1] * n, pa.int64()), "sha256": pa.array(paths, pa.string()),
                        "pipeline": pa.array(["p"] * n, pa.string()), "name": pa.array(paths, pa.string()),
                        "description": pa.array([""] * n, pa.string())})
    return docs, terms, links, files_t


def scores_by_id(index: keyword.KeywordIndex, query: list[str]) -> dict[str, float]:
    hits = keyword.top_k(index, query, 10_000)
    ids = index.docs.column("id")
    return {ids[row].as_py(): score for row, score in hits}


@pytest.mark.parametrize("seed", SEEDS)
def test_scores_with_delta_segments_equal_a_full_rebuild(tmp_path, seed):
    """Statistics over the counted rows only (some files derived, sometimes all: then every row
    counts) are merged exactly too."""
    rng = random.Random(seed)
    words = vocabulary(rng, 400)
    share = rng.choice([1.0, 0.7, 0.3, 0.0])
    state = {f"daily/f{n}.md": file_rows(rng, f"daily/f{n}.md", words, share) for n in range(120)}
    main_dir, oracle_dir = tmp_path / "delta", tmp_path / "oracle"
    every = [r for rows in state.values() for r in rows]
    docs, terms, links, files = tables(every)
    keyword.build(main_dir, docs, None, {"tokenizer": "t"}, links, files,
                  parts=keyword.bm25_parts(terms, counted_of(every)))
    index = keyword.current(main_dir)
    for step in range(25):
        changed = set(rng.sample(sorted(state), rng.randint(1, 4)))
        for path in sorted(changed):
            if rng.random() < 0.25:
                state.pop(path)
            else:
                state[path] = file_rows(rng, path, words, share)
        if rng.random() < 0.3:  # a new file
            path = f"daily/new{step}.md"
            state[path] = file_rows(rng, path, words, share)
            changed.add(path)
        new = [r for p in sorted(changed) for r in state.get(p, [])]
        d, t, lk, fl = tables(new, {p: [] for p in changed if p in state}) if new else tables([])
        lk = lk.filter(pa.array([s in changed for s in lk.column("source").to_pylist()], pa.bool_()))
        segments.publish_delta(main_dir, index, changed, d, t, lk, fl, counted=counted_of(new))
        index = keyword.current(main_dir)
        assert index.main is not None and index.alive is not None
        every = [r for rows in state.values() for r in rows]
        o_docs, o_terms, o_links, o_files = tables(every)
        full = keyword.build(oracle_dir, o_docs, None, {"tokenizer": "t"}, o_links, o_files,
                             parts=keyword.bm25_parts(o_terms, counted_of(every)))
        oracle = keyword.load(oracle_dir)
        assert oracle.generation == full.name
        assert index.retriever.num_docs == oracle.retriever.num_docs == sum(map(len, state.values()))
        assert index.retriever.stat_docs == oracle.retriever.stat_docs == (
            int(counted_of(every).sum()) or len(every))
        for _ in range(8):
            query = rng.sample(words[:60], rng.randint(1, 4)) + rng.sample(words, 2)
            got, want = scores_by_id(index, query), scores_by_id(oracle, query)
            assert got.keys() == want.keys()
            assert all(got[k] == want[k] for k in want), max(abs(got[k] - want[k]) for k in want)
            assert keyword.idf(index, query) == pytest.approx(keyword.idf(oracle, query), rel=1e-12)
        live_ids = {index.docs.column("id")[n].as_py() for n in np.flatnonzero(index.alive)}
        assert live_ids == set(oracle.docs.column("id").to_pylist())
        assert sorted(index.live_files().column("path").to_pylist()) == sorted(oracle.files.column("path").to_pylist())


def test_a_delta_reuses_the_main_segment_and_keeps_its_base(tmp_path):
    rng = random.Random(7)
    words = vocabulary(rng, 50)
    rows = [r for n in range(20) for r in file_rows(rng, f"daily/f{n}.md", words)]
    folder = tmp_path / "kw"
    base = keyword.build(folder, *tables(rows)[:2], {"tokenizer": "t"}, *tables(rows)[2:])
    index = keyword.current(folder)
    for step in range(4):  # several deltas, each cumulative on the same base
        new = file_rows(rng, "daily/f1.md", words)
        d, t, lk, fl = tables(new)
        segments.publish_delta(folder, index, {"daily/f1.md"}, d, t, lk, fl)
        again = keyword.current(folder)
        assert again.main is (index.main or index)  # only the delta was read
        assert segments.delta_rows(again) == len(new)
        index = again
    later = time.time() + keyword.GRACE_SECONDS + 1
    current = keyword.current_dir(folder)
    expired = keyword.expired_generations(folder, int(current.name[4:]), later)
    assert base not in expired and current not in expired  # the base outlives its deltas
    keyword.drop_old_generations(folder)
    assert sorted(p.name for p in folder.glob("gen-*")) == sorted([base.name, current.name])
    assert keyword.load(folder).size == index.size
    assert keyword.layer_counts(folder) == {"daily": int(index.alive.sum())}
