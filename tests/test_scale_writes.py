"""Bulk and incremental index writes (issue #30): an index kept up to date through random adds,
edits and deletes holds exactly the rows a reindex from scratch gives, row for row; a first
build appends (one version per table per commit group) and leaves key indexes for deletes."""

import os
import random
import string

import pytest

from memflow.tasks.index import indexing
from memflow.tasks.index import keyword_dir, run_index, run_reindex
from memflow.tasks.stores import keyword
from memflow.tasks.stores.lance import KEYS, IndexStore

SEEDS = [int(s) for s in os.environ.get("MEMFLOW_SEEDS", "7,1234").split(",")]


def word(rng: random.Random) -> str:
    # generated vocabulary: no word list the code could be tuned to
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10)))


def note(rng: random.Random, names: list[str]) -> str:
    parts = [f"---\nname: {word(rng)} {word(rng)}\ndescription: {word(rng)}\n---\n",
             f"# {word(rng).title()} {word(rng)}\n"]
    for _ in range(rng.randint(1, 4)):
        parts.append(f"## {word(rng)}\n")
        parts.append("\n".join(
            f"- {' '.join(word(rng) for _ in range(rng.randint(3, 12)))} [[{rng.choice(names)}]]"
            for _ in range(rng.randint(1, 5))) + "\n")
        if rng.random() < 0.3:
            parts.append("| a | b |\n|---|---|\n" + "".join(
                f"| {word(rng)} | {rng.randint(0, 99)} |\n" for _ in range(rng.randint(1, 4))))
        if rng.random() < 0.2:
            parts.append("```\n" + "\n".join(word(rng) for _ in range(rng.randint(1, 5))) + "\n```\n")
    if rng.random() < 0.2:  # long enough to be split into several chunks
        parts.append("\n".join(f"- {' '.join(word(rng) for _ in range(20))}" for _ in range(40)) + "\n")
    return "\n".join(parts)


def rows(lay, settings) -> dict[str, list[tuple]]:
    """Every table's rows (mtime-free), sorted, and the search snapshot's rows by chunk id; the
    tables read as every reader reads them (level with the snapshot: `open_store`)."""
    store = indexing.open_store(lay, settings)
    out = {}
    for name in KEYS:
        table = getattr(store, name).to_arrow()
        if name == "files":
            table = table.drop_columns(["mtime_ns"])
        out[name] = sorted(tuple(repr(v) for v in row.values()) for row in table.to_pylist())
    index = keyword.load(keyword_dir(lay, settings))
    docs = index.docs if index.alive is None else index.docs.filter(index.alive)  # a delta's live rows
    out["snapshot"] = sorted(tuple(repr(v) for v in row.values()) for row in docs.to_pylist())
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_incremental_index_after_random_changes_equals_a_reindex(settings, lay, monkeypatch, seed):
    monkeypatch.setattr(indexing, "BATCH", 5)  # several commit groups per run
    monkeypatch.setattr(indexing, "ROWS_BATCH", 2)  # several record batches per group
    rng = random.Random(seed)
    names = [f"daily/2026-02-{1 + n % 9:02d}/{word(rng)}.md" for n in range(30)]
    names += [f"digest/wiki/{word(rng)}.md" for _ in range(6)]
    present: set[str] = set()
    for _round in range(5):
        for path in rng.sample(names, rng.randint(3, 12)):
            target = lay.root / path
            if path in present and rng.random() < 0.3:
                target.unlink()
                present.discard(path)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(note(rng, names), encoding="utf-8")
                present.add(path)
        run_index(settings)
    incremental = rows(lay, settings)
    assert {r[0] for r in incremental["files"]} == {repr(p) for p in present}
    run_reindex(settings)
    assert rows(lay, settings) == incremental


def test_first_build_appends_once_per_group_and_indexes_the_keys(settings, lay, monkeypatch):
    monkeypatch.setattr(indexing, "BATCH", 4)
    rng = random.Random(3)
    names = [f"daily/2026-03-0{1 + n % 5}/{word(rng)}-{n}.md" for n in range(10)]
    for path in names:
        (lay.root / path).parent.mkdir(parents=True, exist_ok=True)
        (lay.root / path).write_text(note(rng, names), encoding="utf-8")
    run_index(settings)
    store = IndexStore(lay.index_dir / "lance")
    groups = 3  # 10 files in groups of 4
    for name, column in KEYS.items():
        table = getattr(store, name)
        # created empty (version 1), one append per group, the key index: nothing deleted or merged
        assert table.version == 1 + groups + 1, name
        assert any(column in index.columns for index in table.list_indices()), name
    # an edit then deletes through the index and appends: the edited note's rows are replaced
    edited = lay.root / names[0]
    edited.write_text("# Changed\n\n- only this line now\n", encoding="utf-8")
    summary = run_index(settings)
    assert (summary.modified, summary.unchanged) == (1, 9)
    store = indexing.open_store(lay, settings)
    texts = [r["text"] for r in store.chunks.search().where(f"path = '{names[0]}'").limit(None)
             .to_arrow().to_pylist()]
    assert texts == ["# Changed\n\n- only this line now"]


@pytest.mark.parametrize("seed", SEEDS)
def test_commit_groups_bound_the_bytes_and_files_of_a_commit(monkeypatch, seed):
    """A commit holds at most BATCH files and, past its first file, at most GROUP_BYTES of them
    or a GROUPS-th of the run's bytes, the larger (LanceDB keeps a commit's rows in memory until
    it ends; a commit costs time of its own); the groups keep every path, in order, and none
    could have taken the next group's first file."""
    rng = random.Random(seed)
    monkeypatch.setattr(indexing, "BATCH", rng.randint(1, 40))
    monkeypatch.setattr(indexing, "GROUP_BYTES", rng.randint(1, 5000))
    monkeypatch.setattr(indexing, "GROUPS", rng.randint(1, 6))
    for _ in range(200):
        paths = [f"daily/{word(rng)}-{n}.md" for n in range(rng.randint(0, 120))]
        sizes = {p: rng.choice([0, rng.randint(1, 300), rng.randint(1, 9000)]) for p in paths if rng.random() < 0.9}
        groups = indexing.commit_groups(paths, sizes)
        assert [p for g in groups for p in g] == paths
        limit = max(indexing.GROUP_BYTES, -(-sum(sizes.values()) // indexing.GROUPS))
        for group, after in zip(groups, groups[1:] + [None]):
            total = sum(sizes.get(p, 0) for p in group)
            assert group and len(group) <= indexing.BATCH
            assert len(group) == 1 or total <= limit
            if after:
                assert len(group) == indexing.BATCH or total + sizes.get(after[0], 0) > limit
