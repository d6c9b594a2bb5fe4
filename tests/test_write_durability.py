"""What a write makes durable (issue #58). The Markdown file is fsynced, file and folder, and so
is `metadata/state/`; the derived index files are written atomically but not fsynced once
`metadata/index/UNSYNCED` names this boot (ground.durability). After a restart (another boot
id) the index whose unsynced files a crash lost or tore is said stale, then rebuilt from the
files by the next index run or write, and every write is searchable again."""

from __future__ import annotations

import os

import pytest

from memflow import api
from memflow.tasks.ground import durability
from memflow.tasks.index import indexing, run_index
from memflow.tasks.stores import keyword

DAY = "daily/2026-04-01"


@pytest.fixture
def boot(tmp_path, monkeypatch):
    """The kernel's boot id, as a file the test can change (a restart)."""
    path = tmp_path / "boot_id"
    path.write_text("boot-one\n")
    monkeypatch.setattr(durability, "BOOT_ID", path)
    return path


@pytest.fixture
def indexed(settings, lay, boot):
    (lay.root / DAY).mkdir(parents=True)
    (lay.root / DAY / "a.md").write_text("# A\n\n- first line\n", encoding="utf-8")
    run_index(settings)
    return settings


def fsynced(monkeypatch) -> list[str]:
    """The paths of every fsync from now on (the real fsync runs)."""
    seen: list[str] = []
    real = os.fsync

    def fsync(fd):
        seen.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


def test_a_write_fsyncs_its_markdown_and_folder_and_no_index_file(indexed, lay, monkeypatch):
    api.write(f"{DAY}/b.md", "# B\n\n- warm up\n", workspace=indexed)  # writes the marker (once a boot)
    seen = fsynced(monkeypatch)
    api.write(f"{DAY}/a.md", "# A\n\n- first line\n- zanzibarquokka was added\n", workspace=indexed)
    folder = lay.root / DAY
    assert any(p.startswith(str(folder / ".a.md.")) for p in seen), seen  # the temp file, before its rename
    assert str(folder) in seen  # the rename
    assert str(lay.state_dir / "inbox.jsonl") in seen  # state is not derived: durable
    assert not [p for p in seen if p.startswith(str(lay.index_dir))], seen
    assert [r.path for r in api.search("zanzibarquokka", indexed).results] == [f"{DAY}/a.md"]
    assert (lay.index_dir / durability.MARK).read_text().strip() == "boot-one"


def test_the_marker_is_fsynced_before_the_first_unsynced_index_file(indexed, lay, monkeypatch):
    (lay.index_dir / durability.MARK).unlink()
    seen = fsynced(monkeypatch)
    api.write(f"{DAY}/b.md", "# B\n\n- a dotterel passed by\n", workspace=indexed)
    index_files = [p for p in seen if p.startswith(str(lay.index_dir))]
    # the journal line, written before the marker, is fsynced; then the marker and its folder,
    # and no file of the delta the write published after it
    assert index_files[0] == str(lay.index_dir / "changes.jsonl"), index_files
    assert f".{durability.MARK}." in index_files[1] and index_files[2:] == [str(lay.index_dir)], index_files
    assert [r.path for r in api.search("dotterel", indexed).results] == [f"{DAY}/b.md"]


def test_after_a_restart_a_torn_index_is_rebuilt_and_every_write_is_searchable(indexed, lay, boot):
    api.write(f"{DAY}/b.md", "# B\n\n- a dotterel passed by\n", workspace=indexed)
    api.write(f"{DAY}/a.md", "# A\n\n- first line\n- zanzibarquokka was added\n", workspace=indexed)
    # the power fails: files written without fsync are lost or torn (the delta generation and its segments,
    # the watermark, the journal); the Markdown was fsynced
    gen = keyword.current_dir(indexing.keyword_dir(lay, indexed))
    assert keyword.base_of(gen) is not None  # the writes' delta
    for segment in gen.parent.glob("seg-*"):  # its delta segments
        for name in ("rows.arrow", "links.arrow", "files.arrow"):
            (segment / name).write_bytes(b"")
    (gen / "meta.json").write_bytes(b"")
    (gen.parent / "CURRENT").write_bytes(b"")
    for name in ("watermark.json", "indexed_paths.jsonl", "changes.jsonl"):
        (lay.index_dir / name).write_bytes(b"")
    keyword._OPEN.clear()  # a new process, after the restart
    boot.write_text("boot-two\n")
    mark = indexing.watermark(lay)  # the torn files are not read
    assert mark["stale"] and "rebuild" in mark["checked"]
    api.write(f"{DAY}/c.md", "# C\n\n- a wheatear sang\n", workspace=indexed)  # the next write rebuilds first
    for word, name in (("dotterel", "b.md"), ("zanzibarquokka", "a.md"), ("wheatear", "c.md"), ("first", "a.md")):
        assert [r.path for r in api.search(word, indexed).results] == [f"{DAY}/{name}"], word
    assert not indexing.watermark(lay)["stale"]
    assert (lay.index_dir / durability.MARK).read_text().strip() == "boot-two"
    assert not indexing.reindex_pending(lay)


def test_after_a_clean_restart_search_says_stale_until_the_index_runs(indexed, lay, boot):
    api.write(f"{DAY}/b.md", "# B\n\n- a dotterel passed by\n", workspace=indexed)
    boot.write_text("boot-two\n")  # nothing lost: a crash and a clean reboot look the same
    found = api.search("dotterel", indexed)
    assert [r.path for r in found.results] == [f"{DAY}/b.md"] and found.watermark["stale"]
    api.index(indexed)
    found = api.search("dotterel", indexed)
    assert [r.path for r in found.results] == [f"{DAY}/b.md"] and not found.watermark["stale"]


def test_without_a_boot_id_index_files_are_fsynced_as_before(indexed, lay, monkeypatch):
    monkeypatch.setattr(durability, "BOOT_ID", lay.root / "no-boot-id")
    seen = fsynced(monkeypatch)
    api.write(f"{DAY}/b.md", "# B\n\n- a dotterel passed by\n", workspace=indexed)
    assert str(lay.index_dir / "changes.jsonl") in seen
    assert any(p.endswith("/CURRENT") or "/.CURRENT." in p for p in seen), seen
