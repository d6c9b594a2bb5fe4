import json
import os
import subprocess
import sys

import numpy as np
from helpers import run_cli

from memflow.tasks.ground.fileops import write_file
from memflow.tasks.ground.lock import workspace_lock
from memflow.tasks.ground.tokenize import tokenize
from memflow.tasks.index import keyword_dir, run_index, run_reindex
from memflow.tasks.index.indexing import open_store
from memflow.tasks.stores import keyword
from memflow.tasks.stores.lance import IndexStore


def seed(lay, n=12):
    for i in range(n):
        write_file(lay, f"daily/2026-01-{i % 5 + 1:02d}/note-{i}.md",
                   f"# Note {i}\n\nTopic {i} mentions apples {i} and [[digest/wiki/n{i}.md#L2]].\n",
                   name=f"Note {i}", description=f"desc {i}")
    write_file(lay, "digest/wiki/n1.md", "# Digest\n\nline two\n", name="Digest one")


def ids(lay, settings):
    """Chunk ids in the tables, read as every reader reads them (level with the snapshot)."""
    return sorted(open_store(lay, settings).chunk_columns(["id"]).column("id").to_pylist())


def all_scores(lay, settings, query):
    index = keyword.load(keyword_dir(lay, settings))
    scores = index.retriever.get_scores([t for t in tokenize(query) if t in index.retriever.vocab_dict])
    alive = index.alive if index.alive is not None else [True] * index.size  # a delta's dead main rows
    return {doc: round(float(s), 5) for doc, s, live in zip(index.docs.column("id").to_pylist(), scores, alive)
            if live}


def test_incremental_index_touches_only_the_changed_note(settings, lay):
    seed(lay)
    first = run_index(settings)
    assert (first.added, first.modified, first.deleted) == (13, 0, 0)
    assert run_index(settings).unchanged == 13
    before = set(ids(lay, settings))
    path = lay.root / "daily/2026-01-01/note-0.md"
    path.write_text(path.read_text() + "\nA new line about pears.\n")
    summary = run_index(settings)
    assert (summary.added, summary.modified, summary.unchanged) == (0, 1, 12)
    after = set(ids(lay, settings))
    assert len(before - after) == 1 and len(after - before) == 1
    store = open_store(lay, settings)
    changed = store.chunks_by_id(sorted(after - before), ["path"])
    assert changed[0]["path"] == "daily/2026-01-01/note-0.md"


def test_touch_without_change_is_unchanged(settings, lay):
    seed(lay, 2)
    run_index(settings)
    os.utime(lay.root / "daily/2026-01-01/note-0.md", ns=(1, 1))
    summary = run_index(settings)
    assert summary.modified == 0 and summary.unchanged == 3


def test_reindex_gives_the_same_chunk_ids(settings, lay):
    seed(lay)
    run_index(settings)
    before = ids(lay, settings)
    run_reindex(settings)
    assert ids(lay, settings) == before


def test_incremental_scores_equal_a_full_rebuild(settings, lay):
    """Oracle: BM25 after edits, adds and deletes scores exactly like a rebuild from scratch."""
    seed(lay)
    run_index(settings)
    (lay.root / "daily/2026-01-02/note-1.md").unlink()
    write_file(lay, "daily/2026-01-03/extra.md", "apples apples pears", name="Extra")
    p = lay.root / "daily/2026-01-04/note-3.md"
    p.write_text(p.read_text().replace("apples", "apples apples"))
    run_index(settings)
    incremental = all_scores(lay, settings, "apples pears topic")
    run_reindex(settings)
    assert all_scores(lay, settings, "apples pears topic") == incremental


def test_bm25_matrix_scores_like_bm25s():
    """Oracle: the vectorised builder scores every query like bm25s's own index()."""
    import bm25s
    import pyarrow as pa

    texts = ["the socket retries three times", "", "retries retries retries and backoff",
             "每天骑自行车上班", "the the the", "socket ECONNREFUSED on port 5432 after restart",
             "自行车 bicycle commute"] * 3 + ["one more unique document about zanzibar"]
    corpus = [tokenize(t) for t in texts]
    reference = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    reference.index(corpus, show_progress=False)
    ours = keyword.bm25_retriever(pa.array(corpus, pa.list_(pa.string())))
    for query in ["socket retries", "retries", "自行车上班", "three", "zanzibar port", "bicycle 5432"]:
        terms = [t for t in tokenize(query) if t in ours.vocab_dict]
        assert terms, query
        np.testing.assert_allclose(ours.get_scores(terms), reference.get_scores(terms), rtol=1e-6)
    assert keyword.bm25_matrix(pa.array([[], []], pa.list_(pa.string()))) is None


def test_saved_postings_load_in_bm25s(tmp_path):
    """The snapshot's BM25 files, written without bm25s, are bm25s's saved format: bm25s loads
    them and scores like the reader the search uses."""
    import bm25s
    import pyarrow as pa

    texts = ["socket retries three times", "retries and backoff", "每天骑自行车上班", "port 5432 socket"]
    parts = keyword.bm25_parts(pa.array([tokenize(t) for t in texts], pa.list_(pa.string())))
    keyword.save_postings(tmp_path / "bm25", parts)
    theirs = bm25s.BM25.load(str(tmp_path / "bm25"))
    ours = keyword.Postings.read(tmp_path / "bm25")
    for query in ["socket retries", "自行车", "port backoff"]:
        terms = [t for t in tokenize(query) if t in ours.vocab_dict]
        np.testing.assert_allclose(ours.get_scores(terms), theirs.get_scores(terms), rtol=1e-6)


def test_deleted_file_leaves_no_rows(settings, lay):
    seed(lay, 3)
    run_index(settings)
    (lay.root / "daily/2026-01-01/note-0.md").unlink()
    assert run_index(settings).deleted == 1
    store = open_store(lay, settings)
    assert "daily/2026-01-01/note-0.md" not in store.catalog()
    paths = set(store.chunk_columns(["path"]).column("path").to_pylist())
    assert "daily/2026-01-01/note-0.md" not in paths


def test_tables_hold_links_and_frontmatter(settings, lay):
    seed(lay, 2)
    run_index(settings)
    store = IndexStore(lay.index_dir / "lance")
    links = store.links.to_arrow().to_pylist()
    assert {"source": "daily/2026-01-01/note-0.md", "line": 8, "target": "digest/wiki/n0.md",
            "anchor": "L2", "label": "", "kind": "link"} in links
    chunk = store.chunk_columns(["path", "name", "description", "kind", "date", "layer"]).to_pylist()
    first = next(c for c in chunk if c["path"] == "daily/2026-01-01/note-0.md")
    assert first["name"] == "Note 0" and first["description"] == "desc 0"
    assert first["layer"] == "daily" and str(first["date"]) == "2026-01-01"


def test_day_index_is_indexed_as_its_kind(settings, lay):
    from datetime import date

    from memflow.tasks.capture.dayindex import refresh_day_index

    seed(lay, 2)
    refresh_day_index(lay, date(2026, 1, 1))
    run_index(settings)
    kinds = dict(IndexStore(lay.index_dir / "lance").catalog().items())
    store = IndexStore(lay.index_dir / "lance")
    rows = store.files.to_arrow().to_pylist()
    assert {r["path"]: r["kind"] for r in rows}["daily/2026-01-01.md"] == "day_index"
    assert kinds


def test_cli_index_reports_modified_and_second_writer_gets_75(settings, lay):
    seed(lay, 3)
    ws = str(lay.root)
    res = run_cli("-w", ws, "index")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().startswith("indexed: added=4 modified=0 deleted=0 unchanged=0 chunks=")
    (lay.root / "digest/wiki/n1.md").write_text("changed\n")
    res = run_cli("-w", ws, "index", "--json")
    assert json.loads(res.stdout)["modified"] == 1
    with workspace_lock(lay.state_dir, "dream"):
        res = run_cli("-w", ws, "--wait", "0", "index")
    assert res.returncode == 75 and res.stderr.startswith("busy: dream")


KILLER = """
import os, signal, sys
from memflow.schemas.settings import load_settings
from memflow.tasks.index import indexing, run_index
from memflow.tasks.stores.lance import IndexStore
indexing.BATCH = 2
real = IndexStore.put_files
calls = []
def put_files(self, rows):
    calls.append(1)
    if len(calls) == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    real(self, rows)
IndexStore.put_files = put_files
run_index(load_settings(sys.argv[1]))
"""


def test_index_killed_midway_then_rerun_agrees(settings, lay):
    seed(lay, 12)
    proc = subprocess.run([sys.executable, "-c", KILLER, str(lay.root)], capture_output=True)
    assert proc.returncode == -9
    partial = IndexStore(lay.index_dir / "lance").catalog()
    assert 0 < len(partial) < 13
    run_index(settings)
    store = IndexStore(lay.index_dir / "lance")
    files = set(store.catalog())
    chunk_paths = set(store.chunk_columns(["path"]).column("path").to_pylist())
    keyword_ids = set(keyword.load(keyword_dir(lay, settings)).docs.column("id").to_pylist())
    assert files == chunk_paths == {p.relative_to(lay.root).as_posix()
                                   for p in lay.root.rglob("*.md") if "metadata" not in p.parts}
    assert keyword_ids == set(ids(lay, settings))
    assert len(ids(lay, settings)) == len(set(ids(lay, settings)))  # no duplicated chunks from the killed batch
    assert np.all(np.array([1]))


def test_rows_are_converted_to_arrow_as_from_pylist_converts_them():
    from datetime import date

    import pyarrow as pa

    from memflow.schemas.tables import CHUNKS, FILES, LINKS
    from memflow.tasks.stores.lance import rows_batch, rows_table

    chunks = [{"id": "a", "path": "daily/x.md", "layer": "daily", "kind": "note", "date": date(2026, 1, 2),
               "start_line": 1, "end_line": 9, "heading_path": "# T", "text": "héllo 中文", "name": "n",
               "description": "", "tags": ["t"], "terms": ["hello", "中文"], "line_terms": "hello\n中文"},
              {"id": "b", "path": "session/dialog/s.jsonl", "layer": "session", "date": None, "start_line": 3,
               "end_line": 3, "text": "", "tags": [], "terms": [], "extra": 1}]  # keys missing: null
    assert rows_batch(chunks, CHUNKS).equals(pa.RecordBatch.from_pylist(chunks, schema=CHUNKS))
    links = [{"source": "a.md", "line": 2, "target": "b.md", "anchor": "L1", "label": "", "kind": "link"}]
    assert rows_table(links, LINKS).equals(pa.Table.from_pylist(links, schema=LINKS))
    assert rows_table([], FILES).equals(pa.Table.from_pylist([], schema=FILES))
