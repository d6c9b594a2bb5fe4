import hashlib
import json

import pytest
from helpers import run_cli

from memflow import api
from memflow.tasks.backup import prune_backups
from memflow.tasks.capture.conversation import auto_memory
from memflow.tasks.stores.archive import ArchiveError

QUERIES = ["espresso meeting", "payments team engineers", "bees roof", "Lisbon flat"]


def say(day, *texts):
    return [{"id": f"{day}-{n}", "role": "user", "timestamp": f"{day}T09:{n:02d}:00Z", "content": t}
            for n, t in enumerate(texts)]


@pytest.fixture
def filled(settings, lay):
    auto_memory(settings, say("2026-04-01", "I always drink a double espresso before my first meeting.",
                              "Our payments team has 6 engineers."), "a")
    auto_memory(settings, say("2026-04-02", "I keep bees on the garage roof.",
                              "We found a flat in Lisbon near the river."), "b")
    (lay.root / "resource/recipe.md").write_text("# Honey cake\n\nThree eggs, honey, flour.\n")
    api.capture_resources(lay.root)
    api.dream(lay.root)
    api.index(lay.root)
    return lay


def hits(ws):
    return [[(r.path, r.start_line) for r in api.search(q, ws, limit=3).results] for q in QUERIES]


def test_round_trip_is_byte_identical_and_searches_the_same(filled, tmp_path):
    lay = filled
    archive = tmp_path / "ws.tar.zst"
    res = run_cli("-w", str(lay.root), "backup", str(archive))
    assert res.returncode == 0, res.stderr
    res = run_cli("restore", str(archive), str(tmp_path / "back"))
    assert res.returncode == 0, res.stderr
    manifest = api.restore(archive, tmp_path / "again")
    assert "metadata/state/dream_catalog.json" in manifest["files"]
    assert not [f for f in manifest["files"] if f.startswith("metadata/index/")]  # derived: left out
    for rel, info in manifest["files"].items():
        data = (tmp_path / "back" / rel).read_bytes()
        assert hashlib.sha256(data).hexdigest() == info["sha256"]
        if rel != "metadata/state/jobs.json":  # the backup's own run is recorded after it
            assert info["sha256"] == hashlib.sha256((lay.root / rel).read_bytes()).hexdigest()
    api.index(tmp_path / "back")
    assert hits(tmp_path / "back") == hits(lay.root)
    assert (tmp_path / "back" / "digest").is_dir()


def test_truncated_or_bit_flipped_archives_are_refused_and_leave_nothing(filled, tmp_path):
    archive = tmp_path / "ws.tar.zst"
    api.backup(archive, filled.root)
    data = archive.read_bytes()
    bad = {"truncated": data[: len(data) // 2], "flipped": data[:200] + bytes([data[200] ^ 0x40]) + data[201:],
           "not a backup": b"hello"}
    for name, content in bad.items():
        broken = tmp_path / f"{name}.tar.zst"
        broken.write_bytes(content)
        with pytest.raises(ArchiveError, match="truncated or corrupt|manifest"):
            api.restore(broken, tmp_path / f"out-{name}")
        assert not (tmp_path / f"out-{name}").exists()
        assert not [p for p in tmp_path.iterdir() if ".restore-" in p.name]  # no staging left
        res = run_cli("restore", str(broken), str(tmp_path / f"cli-{name}"))
        assert res.returncode == 1 and res.stderr.startswith("error: ") and "Traceback" not in res.stderr


def test_restore_refuses_a_folder_in_use_and_a_member_leaving_it(filled, tmp_path):
    archive = tmp_path / "ws.tar.zst"
    api.backup(archive, filled.root)
    with pytest.raises(FileExistsError, match="not empty"):
        api.restore(archive, filled.root)
    from memflow.tasks.stores.archive import write_tar_zst

    evil = tmp_path / "evil.tar.zst"
    write_tar_zst(evil, [("../outside.md", b"x"), ("MANIFEST.json", json.dumps(
        {"format": "memflow-backup-1", "files": {}}).encode())])
    with pytest.raises(ArchiveError, match="not a path inside"):
        api.restore(evil, tmp_path / "evil-out")
    assert not (tmp_path / "outside.md").exists()


@pytest.mark.slow  # >10 s here (pytest --durations)
def test_backup_flow_keeps_the_newest(filled, tmp_path, prefect_server):
    from memflow.flows.backup import backup_flow

    folder = tmp_path / "backups"
    folder.mkdir()
    for stamp in ("20260101T000000Z", "20260102T000000Z", "20260103T000000Z"):
        (folder / f"{filled.root.name}-{stamp}.tar.zst").write_bytes(b"old")
    result = backup_flow(str(filled.root), str(folder), keep=2)
    kept = sorted(p.name for p in folder.iterdir())
    assert len(kept) == 2 and result["archive"].endswith(kept[-1]) and kept[0].endswith("20260103T000000Z.tar.zst")
    assert len(result["pruned"]) == 2
    assert prune_backups(folder, filled.root.name, 1) == [kept[0]]
