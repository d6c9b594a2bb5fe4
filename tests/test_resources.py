import logging
from datetime import date

from helpers import run_cli

from memflow.tasks.capture.resources import auto_resource
from memflow.tasks.ground.events import read_events
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.workspace import today


def put(lay, rel, data):
    path = lay.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def test_dated_and_undated_resources_get_notes_with_source_links(settings, lay):
    put(lay, "resource/2026-02-03/a/b/plan.md", "# Plan\n\nBuy milk\nCall Bob\n")
    put(lay, "resource/notes.txt", "Gate code is 4411\n")
    result = auto_resource(settings)
    assert sorted(result.created) == sorted([
        "daily/2026-02-03/resource-plan-md.md", f"daily/{today(settings)}/resource-notes-txt.md"])
    note = parse_note("x", (lay.root / "daily/2026-02-03/resource-plan-md.md").read_text())
    assert note.metadata["source_resource"] == "[[resource/2026-02-03/a/b/plan.md]]"
    assert "- Call Bob [[resource/2026-02-03/a/b/plan.md#L4]]" in note.body
    assert (lay.root / "daily/2026-02-03.md").exists()
    assert read_events(lay)[-1]["job"] == "auto_resource"


def test_unsupported_suffixes_are_skipped_with_a_reason(settings, lay, caplog):
    put(lay, "resource/a.xyz", "x: 1")
    put(lay, "resource/b.png", b"\x89PNG")
    with caplog.at_level(logging.INFO, logger="memflow.resources"):
        result = auto_resource(settings)
    assert sorted(result.skipped) == ["resource/a.xyz", "resource/b.png"] and result.created == []
    assert "a .xyz file is not read" in result.skipped["resource/a.xyz"]
    assert "a .png file is not read" in caplog.text
    assert "resource/b.png: a .png file is not read" in read_events(lay)[0]["summary"]
    auto_resource(settings)  # named once, not on every run
    assert sum("skipped" in e["summary"] for e in read_events(lay)) == 1


def test_modified_updates_same_note_and_unchanged_is_left_alone(settings, lay):
    path = put(lay, "resource/2026-02-03/x.md", "first line\n")
    note = auto_resource(settings).created[0]
    assert auto_resource(settings).created == [] and len(read_events(lay)) == 1
    path.write_text("second version line\n")
    assert auto_resource(settings).updated == [note]
    assert "second version line" in (lay.root / note).read_text()


def test_deleted_resource_removes_only_its_note(settings, lay):
    path = put(lay, "resource/2026-02-03/x.md", "content here\n")
    other = put(lay, "daily/2026-02-03/mine.md", "my own note\n")
    note = auto_resource(settings).created[0]
    path.unlink()
    result = auto_resource(settings)
    assert result.removed == [note] and not (lay.root / note).exists()
    assert other.exists()


def test_large_files_are_read_in_part_and_say_so(settings, lay):
    small = settings.model_copy(update={"resource_max_bytes": 100})
    put(lay, "resource/2026-02-03/big.txt", "line of text\n" * 100)
    note = auto_resource(small).created[0]
    assert "read in part" in (lay.root / note).read_text()


def test_invalid_utf8_policy(settings, lay):
    # Latin-1 bytes are detected and read (both policies); bytes invalid in the encoding their
    # byte-order mark names are refused under `strict` and replaced otherwise.
    put(lay, "resource/2026-02-03/latin.txt", b"caf\xe9 au lait\n")
    put(lay, "resource/2026-02-03/bad.txt", b"\xef\xbb\xbfcaf\xe9 au lait\n")
    strict = settings.model_copy(update={"decode_errors": "strict"})
    result = auto_resource(strict)
    assert "resource/2026-02-03/bad.txt" in result.refused and len(result.created) == 1
    assert "café au lait" in (lay.root / result.created[0]).read_text()
    assert auto_resource(strict).refused == {}  # refused once (inbox), not again until it changes
    assert any("not valid utf-8-sig" in e["summary"] for e in read_events(lay))
    result = auto_resource(settings)  # another policy: tried again
    assert result.created and "caf\ufffd au lait" in (lay.root / result.created[0]).read_text()


def test_failed_note_write_does_not_advance_the_catalog(settings, lay, monkeypatch):
    from memflow.tasks.capture import resources

    put(lay, "resource/2026-02-03/x.md", "content\n")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(resources, "atomic_write_text", boom)
    assert "resource/2026-02-03/x.md" in auto_resource(settings).failed
    monkeypatch.undo()
    assert auto_resource(settings).created == ["daily/2026-02-03/resource-x-md.md"]


def test_cli_resources(settings, lay):
    put(lay, "resource/2026-02-03/x.md", "content line\n")
    res = run_cli("-w", str(lay.root), "resources")
    assert res.returncode == 0, res.stderr
    assert "created: daily/2026-02-03/resource-x-md.md" in res.stdout
    assert date(2026, 2, 3)
