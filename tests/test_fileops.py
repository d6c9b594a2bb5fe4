import json
import os
import signal
import subprocess
import sys
import time
from datetime import date

import pytest
from helpers import run_cli

from memflow.tasks.capture.dayindex import refresh_day_index
from memflow.tasks.ground.fileops import (
    EditError,
    delete_file,
    edit_file,
    fm_get,
    fm_set,
    move_file,
    read_file,
    write_file,
)
from memflow.tasks.ground.lock import EXIT_BUSY, WorkspaceBusy, acquire, release, workspace_lock
from memflow.tasks.ground.workspace import PathError
from memflow.tasks.stores.files import DecodeError


def test_read_line_range_is_one_based_inclusive(lay):
    write_file(lay, "digest/wiki/a.md", "l1\nl2\nl3\nl4\n")
    assert read_file(lay, "digest/wiki/a.md", 2, 3) == "l2\nl3\n"
    assert read_file(lay, "digest/wiki/a.md", start=4) == "l4\n"


def test_invalid_utf8_replace_or_strict(lay):
    (lay.root / "digest/wiki/bad.md").write_bytes(b"ok \xff\xfe end\n")
    assert "\ufffd" in read_file(lay, "digest/wiki/bad.md")
    with pytest.raises(DecodeError, match="not valid UTF-8"):
        read_file(lay, "digest/wiki/bad.md", policy="strict")


def test_write_sets_frontmatter_and_keeps_extra_keys(lay):
    write_file(lay, "digest/wiki/a.md", "---\nname: old\nkeep: 1\n---\nbody\n",
               name="New", description="D", meta={"tags": ["x"]})
    assert fm_get(lay, "digest/wiki/a.md") == {"name": "New", "keep": 1, "description": "D",
                                               "tags": ["x"]}


def test_edit_requires_exactly_one_match(lay):
    write_file(lay, "digest/wiki/a.md", "x y x\n")
    with pytest.raises(EditError, match="2 times"):
        edit_file(lay, "digest/wiki/a.md", "x", "z")
    with pytest.raises(EditError, match="0 times"):
        edit_file(lay, "digest/wiki/a.md", "q", "z")
    edit_file(lay, "digest/wiki/a.md", "y", "Y")
    assert read_file(lay, "digest/wiki/a.md") == "x Y x\n"


def test_move_rewrites_inbound_links_keeping_anchor_label_and_bytes(lay):
    write_file(lay, "digest/wiki/b.md", "one\ntwo\n")
    (lay.root / "daily/n.md").write_bytes(
        b"see [[digest/wiki/b.md#L2|two]]\r\n`[[digest/wiki/b.md]]` \xff\r\n")
    rewritten = move_file(lay, "digest/wiki/b.md", "digest/wiki/c.md")
    assert rewritten == ["daily/n.md"]
    assert (lay.root / "daily/n.md").read_bytes() == (
        b"see [[digest/wiki/c.md#L2|two]]\r\n`[[digest/wiki/b.md]]` \xff\r\n")
    assert not (lay.root / "digest/wiki/b.md").exists()


def test_move_refuses_existing_target_and_escape(lay):
    write_file(lay, "digest/wiki/a.md", "a")
    write_file(lay, "digest/wiki/b.md", "b")
    with pytest.raises(FileExistsError):
        move_file(lay, "digest/wiki/a.md", "digest/wiki/b.md")
    with pytest.raises(PathError):
        move_file(lay, "digest/wiki/a.md", "../out.md")
    assert (lay.root / "digest/wiki/a.md").exists()


def test_delete_reports_files_still_linking(lay):
    write_file(lay, "digest/wiki/b.md", "b")
    write_file(lay, "digest/wiki/a.md", "[[digest/wiki/b.md#L1]]")
    write_file(lay, "digest/wiki/c.md", "`[[digest/wiki/b.md]]`")
    assert delete_file(lay, "digest/wiki/b.md") == ["digest/wiki/a.md"]


def test_fm_set_types_and_order_and_crlf(lay):
    (lay.root / "digest/wiki/a.md").write_bytes(b"---\r\nname: A\r\nz: 1\r\n---\r\nbody\r\n")
    fm_set(lay, "digest/wiki/a.md", {"when": date(2026, 1, 2), "z": 2})
    raw = (lay.root / "digest/wiki/a.md").read_bytes()
    assert raw == b"---\r\nname: A\r\nz: 2\r\nwhen: 2026-01-02\r\n---\r\nbody\r\n"


def test_day_index_lists_notes_and_keeps_user_text(lay):
    write_file(lay, "daily/2026-01-02/trip.md", "x", name="Trip", description="Went to Oslo")
    rel = refresh_day_index(lay, date(2026, 1, 2))
    assert rel == "daily/2026-01-02.md"
    path = lay.root / rel
    path.write_text(path.read_text() + "\nMy own words.\n")
    write_file(lay, "daily/2026-01-02/work.md", "y", name="Work", description="Fixed bug")
    refresh_day_index(lay, date(2026, 1, 2))
    text = path.read_text()
    assert "description: 2 note(s) today." in text
    assert "- [[daily/2026-01-02/trip.md]] name: Trip description: Went to Oslo" in text
    assert "- [[daily/2026-01-02/work.md]] name: Work description: Fixed bug" in text
    assert "My own words." in text


def test_lock_refuses_second_writer_and_takes_over_stale(lay):
    with workspace_lock(lay.state_dir, "index"):
        with pytest.raises(WorkspaceBusy, match="busy: index holds the workspace since"):
            acquire(lay.state_dir, "dream", wait=0.3)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (lay.state_dir / "lock.json").write_text(json.dumps(
        {"job": "old", "pid": dead.pid, "host": os.uname().nodename, "since": "x"}))
    token = acquire(lay.state_dir, "index")
    release(lay.state_dir, token)
    assert not (lay.state_dir / "lock.json").exists()


def test_cli_busy_workspace_exits_75(lay):
    with workspace_lock(lay.state_dir, "dream"):
        res = run_cli("-w", str(lay.root), "--wait", "0", "write", "digest/wiki/a.md", "--content", "x")
    assert res.returncode == EXIT_BUSY
    assert res.stderr.startswith("busy: dream holds the workspace since")


WRITING_COMMANDS = [
    ["capture", "--session", "s1", "-"], ["resources"], ["dream"], ["dream", "rollback", "run-x"],
    ["dream", "migrate"], ["index"], ["reindex"], ["write", "digest/wiki/a.md", "--content", "x"],
    ["forget", "--match", "anything"],
]


def test_every_writing_command_waits_saying_who_holds_the_lock_then_exits_75(lay):
    """One lock policy: every writing command waits up to --wait seconds, says once who holds
    the lock and since when, then `busy` with exit 75; nothing written. (All at once: each is
    its own process.)"""
    with workspace_lock(lay.state_dir, "dream"):
        before = sorted(p.relative_to(lay.root).as_posix() for p in lay.root.rglob("*"))
        procs = [subprocess.Popen([sys.executable, "-m", "memflow.cli", "-w", str(lay.root), "--wait",
                                   "0.4", *command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for command in WRITING_COMMANDS]
        results = [proc.communicate(input="[]", timeout=300) + (proc.returncode,) for proc in procs]
        after = sorted(p.relative_to(lay.root).as_posix() for p in lay.root.rglob("*"))
    for command, (_out, err, code) in zip(WRITING_COMMANDS, results):
        lines = err.strip().splitlines()
        assert code == EXIT_BUSY, (command, err)
        assert lines[0].startswith("waiting up to 0.4s: dream holds the workspace since"), (command, lines)
        assert lines[-1].startswith("busy: dream holds the workspace since") and "pid" in lines[-1]
    assert after == before


WRITER = """
import sys
from pathlib import Path
from memflow.tasks.stores import files
target = Path(sys.argv[1])
real_fsync = files.os.fsync
def slow_fsync(fd):
    print("writing", flush=True)
    import time; time.sleep(30)
files.os.fsync = slow_fsync
files.atomic_write_text(target, "NEW " * 200_000)
"""


def test_writer_killed_mid_write_leaves_whole_old_file(tmp_path):
    target = tmp_path / "note.md"
    target.write_text("OLD CONTENT\n")
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "writing"
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert target.read_text() == "OLD CONTENT\n"


def test_cli_done_when_scenario(tmp_path):
    ws = str(tmp_path / "ws")
    assert run_cli("init", ws).returncode == 0
    res = run_cli("-w", ws, "write", "digest/wiki/a.md", "--name", "A", "--content",
                  "see [[digest/wiki/b.md#L2]]")
    assert res.returncode == 0, res.stderr
    run_cli("-w", ws, "write", "digest/wiki/b.md", "--content", "1\n2\n")
    res = run_cli("-w", ws, "move", "digest/wiki/b.md", "digest/wiki/c.md")
    assert res.returncode == 0, res.stderr
    assert "[[digest/wiki/c.md#L2]]" in (tmp_path / "ws/digest/wiki/a.md").read_text()
    res = run_cli("-w", ws, "read", "../etc/passwd")
    assert res.returncode == 1
    assert res.stderr.strip() == "error: '..' is not allowed in a workspace path: ../etc/passwd"
    assert res.stdout == ""


def test_cli_edit_errors_are_one_line(tmp_path):
    ws = str(tmp_path / "ws")
    run_cli("init", ws)
    run_cli("-w", ws, "write", "digest/wiki/a.md", "--content", "x x")
    res = run_cli("-w", ws, "edit", "digest/wiki/a.md", "--old", "x", "--new", "y")
    assert res.returncode == 1
    assert res.stderr.count("\n") == 1 and "matches 2 times" in res.stderr


def test_help_does_not_import_prefect_or_litellm():
    code = ("import sys\nfrom memflow.cli import main\ntry:\n    main(['--help'])\n"
            "except SystemExit: pass\nprint('prefect' in sys.modules, 'litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.strip().endswith("False False")


def test_a_full_disk_is_said_in_words_with_the_file_and_what_to_do(settings, lay, monkeypatch):
    """A write that meets a full disk names the file it was for, says nothing was written and
    what to do (it said "[Errno 28] No space left on device"); the file keeps what it held."""
    import errno
    import os

    from memflow import api
    from memflow.errors import describe_error

    api.write("digest/wiki/a.md", "# A\n\nfirst\n", name="A", workspace=settings)
    target = lay.root / "digest/wiki/a.md"
    before = target.read_text()

    fsync = os.fsync

    def full(fd):  # the disk fills up as the note is written (the lock and the log still fit)
        if ".a.md." in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return fsync(fd)
    monkeypatch.setattr(os, "fsync", full)
    try:
        api.write("digest/wiki/a.md", "# A\n\nsecond\n", name="A", workspace=settings)
    except OSError as exc:
        message, code = describe_error(exc)
    else:
        raise AssertionError("the write went through a full disk")
    assert code == 1 and "disk is full" in message and "digest/wiki/a.md" in message
    assert "run the command again" in message and "Errno" not in message
    assert target.read_text() == before
    assert not list(target.parent.glob(".*.tmp"))
