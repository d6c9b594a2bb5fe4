"""Indexing named files (index.incremental, issue #27): after random edit sequences of generated
notes, searching the snapshot index_paths published (deltas, and compactions past the delta
limit or on a digest change) scores every chunk exactly like a reindex from scratch, and the
watermark stays right about files changed by others."""

from __future__ import annotations

import os
import random
import shutil
import string

import pytest
from helpers import reindexed_copy

from memflow.schemas.settings import load_settings
from memflow.tasks.ground.workspace import init_workspace, layout
from memflow.tasks.index import index_paths, indexing, run_index
from memflow.tasks.stores import keyword

SEEDS = [int(s) for s in os.environ.get("MEMFLOW_SEEDS", "1,2,3").split(",")]


def word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))


def note(rng: random.Random, vocab: list[str], names: list[str]) -> str:
    pick = lambda n: " ".join(vocab[min(int(rng.paretovariate(0.9)) - 1, len(vocab) - 1)] for _ in range(n))
    parts = [f"---\nname: {pick(2)}\ndescription: {pick(3)}\n---\n", f"# {pick(2)}\n"]
    for _ in range(rng.randint(1, 3)):
        parts.append(f"## {pick(1)}\n")
        parts.append("\n".join(f"- {pick(rng.randint(3, 12))} [[{rng.choice(names)}]]"
                               for _ in range(rng.randint(1, 5))) + "\n")
    if rng.random() < 0.15:  # several chunks
        parts.append("\n".join(f"- {pick(20)}" for _ in range(30)) + "\n")
    return "\n".join(parts)


def scores(settings, queries: list[list[str]]) -> list[dict[str, float]]:
    index = keyword.current(indexing.keyword_dir(layout(settings), settings))
    ids = index.docs.column("id")
    return [{ids[row].as_py(): score for row, score in keyword.top_k(index, q, 100_000)} for q in queries]




@pytest.mark.parametrize("seed", SEEDS)
def test_scores_after_index_paths_equal_a_reindex(settings, lay, tmp_path, seed):
    rng = random.Random(seed)
    vocab = sorted({word(rng) for _ in range(3000)})
    names = [f"daily/2026-02-{1 + n % 9:02d}/{word(rng)}-{n}.md" for n in range(40)]
    names += [f"digest/wiki/{word(rng)}-{n}.md" for n in range(3)]
    present = set(rng.sample(names, 30))
    for path in present:
        (lay.root / path).parent.mkdir(parents=True, exist_ok=True)
        (lay.root / path).write_text(note(rng, vocab, names), encoding="utf-8")
    run_index(settings)
    deltas = 0
    for step in range(8):
        changed = rng.sample(names, rng.randint(1, 3))
        for path in changed:
            target = lay.root / path
            if path in present and rng.random() < 0.25:
                target.unlink()
                present.discard(path)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(note(rng, vocab, names), encoding="utf-8")
                present.add(path)
        index_paths(settings, changed + ["notes/elsewhere.md"])  # a path the index does not cover: ignored
        deltas += keyword.current(indexing.keyword_dir(lay, settings)).main is not None
        assert not indexing.watermark(lay)["stale"]
        if step % 2:
            oracle = reindexed_copy(settings, tmp_path / f"oracle-{step}")
            queries = [rng.sample(vocab[:80], rng.randint(1, 3)) + rng.sample(vocab, 2) for _ in range(12)]
            assert scores(settings, queries) == scores(oracle, queries)
            mine, theirs = (keyword.current(indexing.keyword_dir(layout(x), x)) for x in (settings, oracle))
            some = rng.sample(names, 6)  # link expansion and names read the same through a delta
            key = lambda rows: sorted(map(repr, rows))  # noqa: E731
            assert key(mine.links_of(some)) == key(theirs.links_of(some))
            assert mine.file_info(some) == theirs.file_info(some)
            assert key(mine.live_links().to_pylist()) == key(theirs.live_links().to_pylist())
            assert key(mine.live_files().to_pylist()) == key(theirs.live_files().to_pylist())
    assert deltas > 0  # the delta path was taken (and the compaction path on digest edits/limits)
    outside = lay.root / rng.choice(sorted(present))
    outside.write_text(note(rng, vocab, names), encoding="utf-8")  # another program's edit
    os.utime(outside, ns=(outside.stat().st_atime_ns, outside.stat().st_mtime_ns + 10_000_000))
    assert indexing.watermark(lay, walk=True)["stale"]  # in place: only the walk sees it
    (lay.root / "daily/2026-02-01").mkdir(parents=True, exist_ok=True)
    (lay.root / "daily/2026-02-01/brand-new.md").write_text("# New\n", encoding="utf-8")
    assert indexing.watermark(lay)["stale"]  # a new file changes its folder's mtime


def test_index_paths_drops_a_deleted_file_and_finds_a_new_one(settings, lay):
    (lay.root / "daily/2026-01-01").mkdir(parents=True)
    for n in range(5):
        (lay.root / f"daily/2026-01-01/n{n}.md").write_text(f"# Note {n}\n\n- plain words {n}\n", encoding="utf-8")
    run_index(settings)
    (lay.root / "daily/2026-01-01/n1.md").unlink()
    (lay.root / "daily/2026-01-01/new.md").write_text("# New\n\n- zyxwvut appears\n", encoding="utf-8")
    summary = index_paths(settings, ["daily/2026-01-01/n1.md", "daily/2026-01-01/new.md"])
    assert (summary.added, summary.deleted) == (1, 1)
    index = keyword.current(indexing.keyword_dir(lay, settings))
    assert index.main is not None  # published as a delta
    hits = keyword.top_k(index, ["zyxwvut"], 10)
    assert [index.docs.column("path")[r].as_py() for r, _ in hits] == ["daily/2026-01-01/new.md"]
    live = {index.docs.column("path")[n].as_py() for n in range(index.size) if index.alive[n]}
    assert "daily/2026-01-01/n1.md" not in live
    assert not indexing.watermark(lay)["stale"]
    assert index_paths(settings, ["daily/2026-01-01/new.md"]).unchanged == 1  # nothing to do


def berlin_replaced(settings, lay, said: str) -> tuple[str, int]:
    """`said` captured on 2026-06-01, its daily line marked replaced by a node's history line
    ("I live in Berlin" until 2026-06-09), indexed: (the daily note, the line)."""
    from memflow import api

    api.capture([{"role": "user", "timestamp": "2026-06-01T09:00:00Z", "content": said}], "s1", lay.root)
    daily = next((lay.root / "daily/2026-06-01").glob("*.md")).relative_to(lay.root).as_posix()
    line = next(n for n, t in enumerate((lay.root / daily).read_text().splitlines(), 1) if "s1.jsonl#L1" in t)
    (lay.root / "digest/wiki").mkdir(parents=True, exist_ok=True)
    (lay.root / "digest/wiki/home.md").write_text(
        "# Home\n\n- 2026-06-09: I live in Lisbon. [[daily/2026-06-09/a.md#L3]]\n"
        f"  - until 2026-06-09: I live in Berlin. [[{daily}#L{line}]]\n", encoding="utf-8")
    run_index(settings)
    return daily, line


def test_a_delta_keeps_the_superseded_turns_of_a_session_log(settings, lay, tmp_path):
    """A session log whose turn a digest-replaced daily line cites: after the log grows (a
    delta), its rows carry the same superseded lines and days as a reindex's."""
    berlin_replaced(settings, lay, "I live in Berlin with my two cats.")
    log = lay.root / "session/dialog/s1.jsonl"
    log.write_text(log.read_text() + '{"role": "assistant", "timestamp": "2026-06-01T09:01:00Z", '
                   '"content": "Noted, Berlin and two cats."}\n', encoding="utf-8")
    index_paths(settings, ["session/dialog/s1.jsonl"])
    index = keyword.current(indexing.keyword_dir(lay, settings))
    assert index.main is not None  # a delta

    def session_rows(idx):
        rows = [r for n, r in enumerate(idx.docs.to_pylist()) if idx.alive is None or idx.alive[n]]
        return sorted((r["id"], r["superseded_lines"], r["superseded_until"], r["superseded_parts"]) for r in rows
                      if r["path"].startswith("session/"))

    got = session_rows(index)
    assert any(lines == [1] for _id, lines, _days, _parts in got)  # the cited turn is marked
    other = load_settings(tmp_path / "oracle")
    init_workspace(layout(other))
    for folder in ("daily", "digest", "session"):
        shutil.copytree(lay.root / folder, tmp_path / "oracle" / folder, dirs_exist_ok=True)
    indexing.run_reindex(other)
    assert got == session_rows(keyword.current(indexing.keyword_dir(layout(other), other)))


def test_an_index_run_with_nothing_new_compacts_the_delta(settings, lay):
    """Writes leave a delta beside the main segment; `memflow index` folds it in even when no
    file changed since (search then reads one segment), with the same results."""
    (lay.root / "daily/2026-01-01").mkdir(parents=True)
    for n in range(6):
        (lay.root / f"daily/2026-01-01/n{n}.md").write_text(f"# Note {n}\n\n- plain words {n} qwerty\n", encoding="utf-8")
    run_index(settings)
    (lay.root / "daily/2026-01-01/n2.md").write_text("# Note 2\n\n- other words qwerty asdfgh\n", encoding="utf-8")
    index_paths(settings, ["daily/2026-01-01/n2.md"])
    folder = indexing.keyword_dir(lay, settings)
    assert indexing.has_delta(lay, settings) and keyword.current(folder).main is not None
    before = scores(settings, [["qwerty"], ["asdfgh", "words"]])
    summary = run_index(settings)
    assert (summary.added, summary.modified, summary.deleted) == (0, 0, 0) and summary.keyword_rebuilt
    assert not indexing.has_delta(lay, settings) and keyword.current(folder).main is None
    assert scores(settings, [["qwerty"], ["asdfgh", "words"]]) == before
    assert not run_index(settings).keyword_rebuilt  # one segment: nothing to do

def test_a_line_a_current_fact_still_cites_is_not_labelled_replaced(settings, lay, tmp_path):
    """A daily line stating two facts, one of them replaced: while a current fact cites the
    line too, neither it nor the turn it cites is labelled replaced (the other fact is still
    said there); a node written or removed later changes that, indexed by name as a reindex
    would (the index by name must see that the node reaches another file's labels)."""
    from memflow import api

    daily, line = berlin_replaced(settings, lay, "I live in Berlin and teach at the conservatory.")

    def labelled() -> dict[str, list]:
        index = keyword.current(indexing.keyword_dir(lay, settings))
        rows = [r for n, r in enumerate(index.docs.to_pylist()) if index.alive is None or index.alive[n]]
        return {r["id"]: r["superseded_lines"] for r in rows if r["path"] in (daily, "session/dialog/s1.jsonl")}

    def oracle() -> dict[str, list]:
        other = load_settings(tmp_path / f"oracle-{len(list(tmp_path.iterdir()))}")
        init_workspace(layout(other))
        for folder in ("daily", "digest", "session"):
            shutil.copytree(lay.root / folder, other.workspace / folder, dirs_exist_ok=True)
        indexing.run_reindex(other)
        index = keyword.current(indexing.keyword_dir(layout(other), other))
        return {r["id"]: r["superseded_lines"] for r in index.docs.to_pylist()
                if r["path"] in (daily, "session/dialog/s1.jsonl")}

    assert any(lines for lines in labelled().values())  # only the replaced fact cites it: labelled
    work = lay.root / "digest/wiki/work.md"
    work.write_text(f"# Work\n\n- 2026-06-01: I teach at the conservatory. [[{daily}#L{line}]]\n", encoding="utf-8")
    index_paths(settings, ["digest/wiki/work.md"])
    assert not any(lines for lines in labelled().values()) and labelled() == oracle()
    hits = api.search("teach conservatory", lay.root, limit=5).results
    assert not any("(replaced" in h.text for h in hits if "conservatory" in h.text)
    work.unlink()
    index_paths(settings, ["digest/wiki/work.md"])
    assert any(lines for lines in labelled().values()) and labelled() == oracle()


def labels_of(settings, paths: set[str]) -> list[tuple]:
    """(id, superseded lines, days, parts) of the live rows of `paths` in the current snapshot."""
    index = keyword.current(indexing.keyword_dir(layout(settings), settings))
    rows = [r for n, r in enumerate(index.docs.to_pylist()) if index.alive is None or index.alive[n]]
    return sorted((r["id"], r["superseded_lines"], r["superseded_until"], r["superseded_parts"])
                  for r in rows if r["path"] in paths)


def reindexed_labels(lay, tmp_path, paths: set[str]) -> list[tuple]:
    other = load_settings(tmp_path / f"oracle-{len(list(tmp_path.iterdir()))}")
    init_workspace(layout(other))
    for folder in ("daily", "digest", "session"):
        shutil.copytree(lay.root / folder, other.workspace / folder, dirs_exist_ok=True)
    indexing.run_reindex(other)
    return labels_of(other, paths)


def test_an_edit_near_replaced_lines_is_a_delta_labelled_as_a_reindex(settings, lay, tmp_path):
    """Issue #58: a note whose line a digest history line marks, edited in place, and a node
    that marks a line, written or changed, are published as a delta (no full build: seconds at
    24k files), the marked notes and the session logs they cite read again with them, and every
    label equals a reindex's."""
    daily, line = berlin_replaced(settings, lay, "I live in Berlin with my two cats.")
    watched = {daily, "session/dialog/s1.jsonl", "digest/wiki/home.md"}
    assert any(lines for _id, lines, _d, _p in labels_of(settings, watched))
    text = (lay.root / daily).read_text()
    (lay.root / daily).write_text(text + "\nA later line about the quokka.\n", encoding="utf-8")
    index_paths(settings, [daily])
    assert keyword.current(indexing.keyword_dir(lay, settings)).main is not None  # a delta
    assert labels_of(settings, watched) == reindexed_labels(lay, tmp_path, watched)
    home = lay.root / "digest/wiki/home.md"  # the history line goes: nothing is replaced any more
    home.write_text("# Home\n\n- 2026-06-09: I live in Lisbon. [[daily/2026-06-09/a.md#L3]]\n", encoding="utf-8")
    index_paths(settings, ["digest/wiki/home.md"])
    assert keyword.current(indexing.keyword_dir(lay, settings)).main is not None
    got = labels_of(settings, watched)
    assert not any(lines for _id, lines, _d, _p in got) and got == reindexed_labels(lay, tmp_path, watched)
    home.write_text("# Home\n\n- 2026-06-09: I live in Lisbon. [[daily/2026-06-09/a.md#L3]]\n"
                    f"  - until 2026-06-09: I live in Berlin. [[{daily}#L{line}]]\n", encoding="utf-8")
    index_paths(settings, ["digest/wiki/home.md"])  # and comes back
    assert keyword.current(indexing.keyword_dir(lay, settings)).main is not None
    got = labels_of(settings, watched)
    assert any(lines for _id, lines, _d, _p in got) and got == reindexed_labels(lay, tmp_path, watched)
