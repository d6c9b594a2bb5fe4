"""A write indexed by name is searchable before the LanceDB tables take it (issue #27): the
delta segment holds its rows and every reader of the tables brings them level first. After
random edit sequences of generated notes, the tables read through `open_store` equal a
reindex's; a sync killed half-way is done again; scans, forget and full builds see the writes."""

from __future__ import annotations

import json
import os
import random
import string

import pytest
from helpers import reindexed_copy

from memflow import api
from memflow.tasks.ground.workspace import layout
from memflow.tasks.index import index_paths, indexing, run_index
from memflow.tasks.stores import keyword, segments
from memflow.tasks.stores.lance import IndexStore

SEEDS = [int(s) for s in os.environ.get("MEMFLOW_SEEDS", "4,5").split(",")]


def word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))


def note(rng: random.Random, vocab: list[str], names: list[str]) -> str:
    lines = [f"- {' '.join(rng.choice(vocab) for _ in range(rng.randint(3, 10)))} [[{rng.choice(names)}]]"
             for _ in range(rng.randint(1, 6))]
    return f"---\nname: {rng.choice(vocab)}\n---\n# {rng.choice(vocab)}\n\n" + "\n".join(lines) + "\n"


def tables(store: IndexStore) -> tuple:
    """Everything the tables hold, in an order that does not depend on how rows were written."""
    chunks = store.chunk_columns(["id", "path", "start_line", "end_line", "text", "terms"]).to_pylist()
    links = store.link_table().to_pylist()
    files = store.file_columns(["path", "size", "sha256", "pipeline", "name", "description", "layer", "kind"]).to_pylist()
    key = lambda rows: sorted(map(repr, rows))  # noqa: E731
    return key(chunks), key(links), key(files)


def current(settings):
    return keyword.current(indexing.keyword_dir(layout(settings), settings))




@pytest.mark.parametrize("seed", SEEDS)
def test_tables_read_through_open_store_equal_a_reindex(settings, lay, tmp_path, seed):
    rng = random.Random(seed)
    vocab = sorted({word(rng) for _ in range(2000)})
    names = [f"daily/2026-03-{1 + n % 7:02d}/{word(rng)}-{n}.md" for n in range(30)]
    present = set(rng.sample(names, 20))
    for path in present:
        (lay.root / path).parent.mkdir(parents=True, exist_ok=True)
        (lay.root / path).write_text(note(rng, vocab, names), encoding="utf-8")
    run_index(settings)
    behind = 0
    for step in range(6):
        changed = rng.sample(names, rng.randint(1, 3))
        for path in changed:
            if path in present and rng.random() < 0.3:
                (lay.root / path).unlink()
                present.discard(path)
            else:
                (lay.root / path).parent.mkdir(parents=True, exist_ok=True)
                (lay.root / path).write_text(note(rng, vocab, names), encoding="utf-8")
                present.add(path)
        if rng.random() < 0.5:
            index_paths(settings, changed)
        else:  # a workspace scan (`memflow index`) takes a small change the same way
            summary = run_index(settings)
            assert summary.added + summary.modified + summary.deleted > 0
        gen = keyword.current_dir(indexing.keyword_dir(lay, settings))
        behind += segments.tables_lag(gen)
        # what search reads is current whatever the tables hold
        live = {p for p, alive in zip(current(settings).docs.column("path").to_pylist(),
                                      current(settings).alive if current(settings).alive is not None
                                      else [True] * current(settings).size) if alive}
        assert live == present
        if step % 2:
            oracle = reindexed_copy(settings, tmp_path / f"oracle-{step}")
            mine, theirs = tables(indexing.open_store(lay, settings)), tables(IndexStore(layout(oracle).index_dir / "lance"))
            assert set(mine[2]) - set(theirs[2]) == set() and set(theirs[2]) - set(mine[2]) == set()
            assert mine == theirs
            assert not segments.tables_lag(gen)  # marked level: the next reader writes nothing
            assert not indexing.sync_tables(IndexStore(lay.index_dir / "lance"), lay, settings)
    assert behind > 0  # the write-behind path was taken


SCAN = """
import sys
from memflow.schemas.settings import load_settings
from memflow.tasks.index import run_index
summary = run_index(load_settings(sys.argv[1]))
print(summary.modified, "lancedb" in sys.modules)
"""


def test_an_index_scan_after_a_small_change_leaves_lancedb_closed(settings, lay, tmp_path):
    """`memflow index` after an edit publishes the change as a delta the tables lack, without
    importing LanceDB (about half of its run at 4,800 files); the next reader levels them."""
    import subprocess
    import sys

    (lay.root / "daily/2026-01-01").mkdir(parents=True)
    for n in range(6):
        (lay.root / f"daily/2026-01-01/n{n}.md").write_text(f"# Note {n}\n\n- plain words {n}\n", encoding="utf-8")
    run_index(settings)
    (lay.root / "daily/2026-01-01/n2.md").write_text("# Note 2\n\n- a grebe dived twice\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", SCAN, str(lay.root)], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["1", "False"]
    assert segments.tables_lag(keyword.current_dir(indexing.keyword_dir(lay, settings)))
    assert [r.path for r in api.search("grebe", settings).results] == ["daily/2026-01-01/n2.md"]
    oracle = reindexed_copy(settings, tmp_path / "oracle")
    assert tables(indexing.open_store(lay, settings)) == tables(IndexStore(layout(oracle).index_dir / "lance"))


def test_a_sync_killed_half_way_is_done_again(settings, lay, tmp_path, monkeypatch):
    (lay.root / "daily/2026-01-01").mkdir(parents=True)
    for n in range(6):
        (lay.root / f"daily/2026-01-01/n{n}.md").write_text(f"# Note {n}\n\n- plain words {n}\n", encoding="utf-8")
    run_index(settings)
    (lay.root / "daily/2026-01-01/n2.md").write_text("# Note 2\n\n- qwertzuiop now\n", encoding="utf-8")
    (lay.root / "daily/2026-01-01/n4.md").unlink()
    index_paths(settings, ["daily/2026-01-01/n2.md", "daily/2026-01-01/n4.md"])
    gen = keyword.current_dir(indexing.keyword_dir(lay, settings))
    assert segments.tables_lag(gen)
    raw = IndexStore(lay.index_dir / "lance")
    assert "daily/2026-01-01/n4.md" in raw.catalog()  # behind: a plain open sees the old rows

    def killed(self, rows):
        raise KeyboardInterrupt("killed after the chunks and links were written")

    monkeypatch.setattr(IndexStore, "put_files", killed)
    with pytest.raises(KeyboardInterrupt):
        indexing.open_store(lay, settings)
    monkeypatch.undo()
    assert segments.tables_lag(gen)  # not marked: the next reader does it again
    store = indexing.open_store(lay, settings)
    oracle = reindexed_copy(settings, tmp_path / "oracle")
    assert tables(store) == tables(IndexStore(layout(oracle).index_dir / "lance"))


def test_scan_forget_and_full_build_see_writes_the_tables_lack(settings, lay):
    (lay.root / "daily/2026-01-01").mkdir(parents=True)
    for n in range(6):
        (lay.root / f"daily/2026-01-01/n{n}.md").write_text(f"# Note {n}\n\n- plain words {n}\n", encoding="utf-8")
    run_index(settings)
    api.write("daily/2026-01-01/n1.md", "# Note 1\n\n- the plover nests in gravel\n", workspace=settings)
    api.write("daily/2026-01-01/n7.md", "# Note 7\n\n- a wheatear on the wall\n", workspace=settings)
    assert segments.tables_lag(keyword.current_dir(indexing.keyword_dir(lay, settings)))
    assert api.search("plover", settings).results[0].path == "daily/2026-01-01/n1.md"
    summary = run_index(settings)  # a scan: nothing to do, and the tables are level after it
    assert (summary.added, summary.modified) == (0, 0)
    assert "daily/2026-01-01/n7.md" in IndexStore(lay.index_dir / "lance").catalog()
    indexing.rebuild_keyword(indexing.open_store(lay, settings), lay, settings)  # a full build from the tables
    for query, path in (("plover", "daily/2026-01-01/n1.md"), ("wheatear", "daily/2026-01-01/n7.md")):
        assert [r.path for r in api.search(query, settings).results] == [path]
    api.write("daily/2026-01-01/n3.md", "# Note 3\n\n- a dotterel passed by\n", workspace=settings)
    assert segments.tables_lag(keyword.current_dir(indexing.keyword_dir(lay, settings)))
    api.forget(settings, match="dotterel")
    assert not api.search("dotterel", settings).results
    assert "dotterel" not in repr(IndexStore(lay.index_dir / "lance").chunk_columns(["text"]).to_pylist())
    assert [r.path for r in api.search("wheatear", settings).results] == ["daily/2026-01-01/n7.md"]


def test_a_delta_the_tables_lack_is_on_disk_before_current_names_it_without_a_boot_id(settings, lay, monkeypatch):
    """After an API write only the delta generation (and the Markdown) holds the new rows. Where
    the kernel gives no boot id a crash cannot be noticed afterwards (ground.durability), so
    every file of it is flushed (fsync) before CURRENT points at it: a power loss cannot leave
    CURRENT naming a torn generation. The real fsync runs; the test only records what it saw.
    (With a boot id nothing of the index is fsynced: tests/test_write_durability.py.)"""
    from memflow.tasks.ground import durability

    monkeypatch.setattr(durability, "BOOT_ID", lay.root / "no-boot-id-here")
    (lay.root / "daily/2026-04-01").mkdir(parents=True, exist_ok=True)
    (lay.root / "daily/2026-04-01/a.md").write_text("# A\n\n- first line\n", encoding="utf-8")
    run_index(settings)
    folder = indexing.keyword_dir(lay, settings)
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        return real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", str(dst)))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    api.write("daily/2026-04-01/a.md", "# A\n\n- first line\n- zanzibarquokka was added\n", workspace=settings)
    gen = keyword.current_dir(folder)
    assert (gen / "meta.json").exists() and json.loads((gen / "meta.json").read_text())["tables_behind"]
    moved = next(n for n, (kind, path) in enumerate(events) if kind == "replace" and path == str(folder / "CURRENT"))
    flushed = {path for kind, path in events[:moved] if kind == "fsync"}
    files = {str(p) for p in gen.rglob("*") if p.is_file()}
    assert files and files <= flushed, files - flushed
    assert str(gen) in flushed  # the folder's entries too
    assert api.search("zanzibarquokka", settings).results[0].path == "daily/2026-04-01/a.md"
