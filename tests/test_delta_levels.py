"""Flat writes (issue #58): each small change is its own immutable delta segment, merged in
levels, so a write's cost does not grow with the writes before it. Many writes leave a few
segments per level and score like a full rebuild; a reader reads only the segments new since
its last read; a segment left by a writer that died before publishing is never read and is
removed by the next publish; whole workspaces written through `index_paths` many times equal a
reindex."""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import reindexed_copy
from test_delta_segments import counted_of, file_rows, scores_by_id, tables, vocabulary
from test_index_paths import note, scores, word

from memflow.tasks.ground.workspace import layout
from memflow.tasks.index import index_paths, indexing, run_index
from memflow.tasks.stores import keyword, levels, segments


def built(folder, state):
    every = [r for rows in state.values() for r in rows]
    docs, terms, links, files = tables(every)
    keyword.build(folder, docs, None, {"tokenizer": "t"}, links, files,
                  parts=keyword.bm25_parts(terms, counted_of(every)))
    return keyword.load(folder)


def write(folder, index, rng, words, state, path):
    state[path] = file_rows(rng, path, words)
    d, t, lk, fl = tables(state[path])
    segments.publish_delta(folder, index, {path}, d, t, lk, fl, counted=counted_of(state[path]))
    return keyword.current(folder)


def test_many_writes_are_merged_in_levels_and_score_like_a_rebuild(tmp_path):
    rng = random.Random(11)
    words = vocabulary(rng, 300)
    state = {f"daily/f{n}.md": file_rows(rng, f"daily/f{n}.md", words) for n in range(80)}
    folder = tmp_path / "kw"
    keyword.build(folder, *tables([r for rows in state.values() for r in rows])[:2], {"tokenizer": "t"},
                  *tables([r for rows in state.values() for r in rows])[2:])
    index = keyword.current(folder)
    fan = segments.MERGE_FAN
    for n in range(1, 150):
        path = f"daily/f{rng.randrange(120)}.md"  # overwrites and new files
        index = write(folder, index, rng, words, state, path)
        levels = [s.level for s in index.segments]
        assert levels == sorted(levels, reverse=True)  # oldest (largest) first
        assert all(levels.count(level) < fan for level in set(levels))  # merged once fan are alike
        digits, rest = [], n  # the segments a counter in base `fan` predicts: one per unit of each digit
        while rest:
            digits.append(rest % fan)
            rest //= fan
        assert len(levels) == sum(digits)
    on_disk = sorted(p.name for p in folder.glob(f"{segments.PREFIX}*"))
    named = {s.name for s in index.segments}
    assert named <= set(on_disk)  # merged-away ones go once no generation read in the grace period names them
    oracle = built(tmp_path / "oracle", state)
    for _ in range(20):
        query = rng.sample(words[:50], rng.randint(1, 3)) + rng.sample(words, 2)
        assert scores_by_id(index, query) == scores_by_id(oracle, query)
    live = sorted(index.docs.column("id")[n].as_py() for n in np.flatnonzero(index.alive))
    assert live == sorted(oracle.docs.column("id").to_pylist())
    assert sorted(index.live_files().column("path").to_pylist()) == sorted(state)
    assert keyword.layer_counts(folder) == {"daily": len(live)}
    fresh = keyword.load(folder)  # a new process: every segment read, every mask worked out again
    assert [s.name for s in fresh.segments] == [s.name for s in index.segments]
    assert np.array_equal(fresh.alive, index.alive)
    assert np.array_equal(fresh.link_new, index.link_new) and np.array_equal(fresh.file_new, index.file_new)


def test_a_reader_reads_only_the_segments_new_since(tmp_path):
    rng = random.Random(3)
    words = vocabulary(rng, 60)
    state = {f"daily/f{n}.md": file_rows(rng, f"daily/f{n}.md", words) for n in range(30)}
    folder = tmp_path / "kw"
    index = built(folder, state)
    for n in range(segments.MERGE_FAN - 2):
        index = write(folder, index, rng, words, state, f"daily/f{n}.md")
    before = index.segments
    index = write(folder, index, rng, words, state, "daily/f0.md")  # no merge yet (f0 again)
    assert len(index.segments) == len(before) + 1
    assert all(a is b for a, b in zip(index.segments, before))  # the same objects: not read again
    older = sorted(folder.glob("gen-*"), key=lambda g: int(g.name[4:]))[-2]
    # an older generation read after a newer one: the newer one's masks are not the older's
    assert np.array_equal(keyword._load_generation(older, index).alive, keyword._load_generation(older).alive)
    index = write(folder, index, rng, words, state, "daily/f9.md")  # the merge: one new segment
    assert len(index.segments) == 1 and index.segments[0].level == 1


def test_a_segment_left_by_a_writer_that_died_is_never_read_and_is_removed(tmp_path, monkeypatch):
    rng = random.Random(5)
    words = vocabulary(rng, 60)
    state = {f"daily/f{n}.md": file_rows(rng, f"daily/f{n}.md", words) for n in range(30)}
    folder = tmp_path / "kw"
    index = write(folder, built(folder, state), rng, words, state, "daily/f1.md")
    published = keyword.current_dir(folder)

    def died(*args, **kwargs):
        raise KeyboardInterrupt("killed before publishing")

    monkeypatch.setattr(keyword, "publish", died)
    with pytest.raises(KeyboardInterrupt):
        write(folder, index, rng, ["zzqx"], {}, "daily/f2.md")
    monkeypatch.undo()
    orphan = [p for p in folder.glob(f"{segments.PREFIX}*") if p.name not in {s.name for s in index.segments}]
    assert len(orphan) == 1
    (orphan[0] / "rows.arrow").write_bytes(b"torn")  # and torn, as a crash mid-write leaves it
    keyword._OPEN.clear()
    keyword._SWEPT.clear()
    levels._READ.clear()  # a new process
    assert keyword.current_dir(folder) == published
    reader = keyword.current(folder)
    assert keyword.top_k(reader, ["zzqx"], 5) == []  # its word is nowhere
    assert reader.size == index.size
    after = write(folder, reader, rng, words, state, "daily/f3.md")
    assert not orphan[0].exists()  # the next publish (the first of this process) removed it
    assert len(after.segments) == 2


def test_many_writes_through_index_paths_equal_a_reindex(settings, lay, tmp_path):
    rng = random.Random(17)
    vocab = sorted({word(rng) for _ in range(800)})
    names = [f"daily/2026-03-{1 + n % 5:02d}/{word(rng)}-{n}.md" for n in range(30)]
    for path in names[:20]:
        (lay.root / path).parent.mkdir(parents=True, exist_ok=True)
        (lay.root / path).write_text(note(rng, vocab, names), encoding="utf-8")
    run_index(settings)
    for step in range(40):
        path = rng.choice(names)
        target = lay.root / path
        if target.exists() and rng.random() < 0.15:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(note(rng, vocab, names), encoding="utf-8")
        index_paths(settings, [path])
    index = keyword.current(indexing.keyword_dir(lay, settings))
    assert index.main is not None and len(index.segments) >= 2  # still a delta, in several segments
    assert max(s.level for s in index.segments) >= 2  # merged at least twice over
    oracle = reindexed_copy(settings, tmp_path / "oracle")
    queries = [rng.sample(vocab[:60], rng.randint(1, 3)) + rng.sample(vocab, 2) for _ in range(15)]
    assert scores(settings, queries) == scores(oracle, queries)
    theirs = keyword.current(indexing.keyword_dir(layout(oracle), oracle))
    key = lambda table: sorted(map(repr, table.to_pylist()))  # noqa: E731
    assert key(index.live_links()) == key(theirs.live_links())
    files = [x.live_files().drop_columns(["mtime_ns"]) for x in (index, theirs)]
    assert key(files[0]) == key(files[1])
    run_index(settings)  # `memflow index` compacts every segment into a main segment
    compacted = keyword.current(indexing.keyword_dir(lay, settings))
    assert compacted.main is None and not compacted.segments
    assert scores(settings, queries) == scores(oracle, queries)


def test_vectors_are_carried_through_merged_segments(tmp_path):
    """Each row keeps its own vector through every merge: the nearest rows by vector are those
    a brute-force pass over the live rows' vectors finds, with the same similarities."""
    rng = random.Random(23)
    gen = np.random.default_rng(23)
    words = vocabulary(rng, 80)
    state = {f"daily/f{n}.md": file_rows(rng, f"daily/f{n}.md", words) for n in range(40)}
    vector = {}  # chunk id -> its vector

    def vectors_of(rows):
        for row in rows:
            vector[row["id"]] = gen.standard_normal(8).astype(np.float32)
        return np.array([vector[r["id"]] for r in rows], dtype=np.float32).reshape(-1, 8)

    folder = tmp_path / "kw"
    every = [r for rows in state.values() for r in rows]
    docs, terms, links, files = tables(every)
    keyword.build(folder, docs, terms, {"tokenizer": "t", "vectors": {"model": "m", "dims": 8}}, links, files,
                  vectors=vectors_of(every), has_vector=np.ones(len(every), dtype=bool))
    index = keyword.current(folder)
    for step in range(21):
        path = f"daily/f{rng.randrange(50)}.md"
        state[path] = file_rows(rng, path, words)
        d, t, lk, fl = tables(state[path])
        segments.publish_delta(folder, index, {path}, d, t, lk, fl, vectors=vectors_of(state[path]),
                               has_vector=np.ones(len(state[path]), dtype=bool))
        index = keyword.current(folder)
    assert max(s.level for s in index.segments) >= 2 and index.delta_vectors is not None
    query = gen.standard_normal(8).astype(np.float32)
    live = {r["id"] for rows in state.values() for r in rows}
    unit = {cid: v / np.linalg.norm(v) for cid, v in vector.items() if cid in live}
    want = sorted(unit, key=lambda cid: -float(unit[cid] @ (query / np.linalg.norm(query))))[:10]
    got = keyword.nearest(index, query, 10)
    ids = index.docs.column("id")
    assert [ids[row].as_py() for row, _ in got] == want
    for row, similarity in got:
        want_similarity = float(unit[ids[row].as_py()] @ (query / np.linalg.norm(query)))
        assert similarity == pytest.approx(want_similarity, rel=1e-5)


def test_files_indexed_by_name_are_appended_a_line_per_write(settings, lay):
    """The named files are a line per indexing call, not a file rewritten whole per write; a
    line still being appended (no newline yet) is read once it is complete; a full run empties
    them."""
    from memflow.tasks.index import freshness

    day = lay.root / "daily/2026-03-01"
    day.mkdir(parents=True, exist_ok=True)
    (day / "a.md").write_text("# A\n\n- alpha\n", encoding="utf-8")
    run_index(settings)
    for name in ("b.md", "c.md"):
        (day / name).write_text(f"# {name}\n\n- beta\n", encoding="utf-8")
        index_paths(settings, [f"daily/2026-03-01/{name}"])
    named = lay.index_dir / freshness.NAMED
    assert len(named.read_text(encoding="utf-8").splitlines()) == 2
    assert set(freshness.named_paths(lay, {})) == {"daily/2026-03-01/b.md", "daily/2026-03-01/c.md"}
    with named.open("a", encoding="utf-8") as handle:
        handle.write('{"daily/2026-03-01/d.md": 5')  # an append under way
    assert "daily/2026-03-01/d.md" not in freshness.named_paths(lay, {})
    with named.open("a", encoding="utf-8") as handle:
        handle.write("}\n")
    assert freshness.named_paths(lay, {})["daily/2026-03-01/d.md"] == 5
    run_index(settings, delta=False)  # a full run: nothing indexed by name since
    assert freshness.named_paths(lay, {}) == {}
