"""Progress and honesty (issue 29 item 6), through the CLI as a subprocess: progress lines
without a terminal and a bar on one, a warning for a stale index, no silent workspace from a
mistyped -w, a failed command's warning cleared by the next good run, `status --deep` without a
model, and a fleet whose root is empty refused before any work."""

from __future__ import annotations

import fcntl
import os
import pty
import random
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

WORDS = ("amber birch copper delta ember fjord garnet heron indigo jasper kelp lumen mica nectar "
         "onyx pewter quill russet sorrel topaz umber vellum wren xenon yarrow zephyr").split()


def cli(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "MEMFLOW_WORKSPACE")}
    return subprocess.run([sys.executable, "-m", "memflow.cli", *args], capture_output=True, text=True,
                          env={**base, **(env or {})}, cwd=cwd, timeout=600)


def notes(ws: Path, count: int, seed: int) -> None:
    """Notes written as another program would (memflow's own writes index what they write)."""
    rng = random.Random(seed)
    for i in range(count):
        body = " ".join(rng.choice(WORDS) for _ in range(30))
        (ws / "daily" / f"2026-08-{i + 1:02d}.md").write_text(body + "\n", encoding="utf-8")


@pytest.fixture()
def ws(tmp_path) -> Path:
    assert cli("init", str(tmp_path / "ws")).returncode == 0
    notes(tmp_path / "ws", 3, seed=1)
    return tmp_path / "ws"


def test_long_jobs_log_progress_lines_without_a_terminal(ws, tmp_path):
    lines = {"MEMFLOW_PROGRESS_SECONDS": "0"}
    index = cli("-w", str(ws), "index", env=lines)
    assert index.returncode == 0, index.stderr
    assert "index: started" in index.stderr and "index: 3/3 file(s) (100%)" in index.stderr
    assert "index: done" in index.stderr
    for args, label in ((["dream"], "dream"), (["backup", str(tmp_path / "b.tar.zst")], "backup"),
                        (["resources"], "resources"), (["forget", "--match", "zzzz"], "forget")):
        done = cli("-w", str(ws), *args, env=lines)
        assert done.returncode == 0, done.stderr
        assert f"{label}: started" in done.stderr and f"{label}: done" in done.stderr, done.stderr
    quiet = cli("-w", str(ws), "index")  # the default: a line only every 10 s
    assert "index:" not in quiet.stderr


def test_fleet_progress_counts_workspaces(tmp_path):
    for name in ("a", "b"):
        assert cli("init", str(tmp_path / "fleet" / name)).returncode == 0
    done = cli("fleet", "index", str(tmp_path / "fleet"), "--runner", "serial",
               env={"MEMFLOW_PROGRESS_SECONDS": "0"})
    assert done.returncode == 0, done.stderr
    assert "fleet index: 2/2 workspace(s) (100%)" in done.stderr


def test_a_terminal_gets_a_progress_bar(ws):
    notes(ws, 2, seed=2)
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # tqdm needs a width
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    proc = subprocess.Popen([sys.executable, "-m", "memflow.cli", "-w", str(ws), "index"],
                            stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        shown += chunk
    proc.wait(timeout=300)
    os.close(leader)
    assert proc.returncode == 0
    assert b"index:" in shown and b"/3 [" in shown and b"file/s" in shown  # tqdm's bar


def test_search_on_a_stale_index_warns(ws):
    assert cli("-w", str(ws), "index").returncode == 0
    fresh = cli("-w", str(ws), "search", "amber")
    assert "stale" not in fresh.stderr
    notes(ws, 4, seed=3)  # rewrites three in place, adds one
    for extra in ([], ["--json"]):
        stale = cli("-w", str(ws), "search", "amber", *extra)
        assert stale.returncode == 0
        # a one-shot search sees what was added (folder mtimes), not another program's in-place
        # edits (that needs the walk of `status` or a running server's watcher)
        assert "warning: stale index: 1 file(s) changed" in stale.stderr, stale.stderr


def test_a_mistyped_workspace_is_an_error_not_a_new_workspace(ws, tmp_path):
    typo = tmp_path / "wss"
    done = cli("-w", str(typo), "write", "daily/2026-08-09.md", "--content", "hello")
    assert done.returncode == 1 and "does not exist" in done.stderr and "memflow init" in done.stderr
    assert not typo.exists()
    (tmp_path / "plain").mkdir()
    done = cli("search", "x", env={"MEMFLOW_WORKSPACE": str(tmp_path / "plain")})
    assert done.returncode == 1 and "MEMFLOW_WORKSPACE" in done.stderr and "not a workspace" in done.stderr
    assert list((tmp_path / "plain").iterdir()) == []
    assert cli("init", str(typo)).returncode == 0
    assert cli("-w", str(typo), "write", "daily/x.md", "--content", "hi").returncode == 0


def test_demo_still_works_on_a_fresh_machine(tmp_path):
    done = cli("demo", env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_failed_command_warning_clears_on_the_next_good_run(ws):
    bad = cli("-w", str(ws), "edit", "daily/2026-08-01.md", "--old", "no such text here", "--new", "x")
    assert bad.returncode == 1
    assert "the last edit run failed: EditError" in cli("-w", str(ws), "status").stdout
    word = (ws / "daily" / "2026-08-01.md").read_text().split()[-1]
    assert cli("-w", str(ws), "edit", "daily/2026-08-01.md", "--old", word, "--new", "zz").returncode == 0
    status = cli("-w", str(ws), "status")
    assert "edit run failed" not in status.stdout and "edit: ok" in status.stdout


def test_status_deep_without_a_model_says_so(ws):
    deep = cli("-w", str(ws), "status", "--deep", env={"MEMFLOW_CHAT_MODEL": "", "MEMFLOW_EMBEDDING_MODEL": ""})
    assert deep.returncode == 0
    assert "chat model: - no model configured" in deep.stdout
    assert "embedding model: - no model configured" in deep.stdout


def test_a_fleet_with_an_empty_root_is_refused_before_any_work(tmp_path):
    from memflow.flows.fleet import fleet_index

    assert cli("init", str(tmp_path / "ws")).returncode == 0
    done = cli("fleet", "index", "", cwd=tmp_path)  # what `root: "{{ $MEMFLOW_FLEET_ROOT }}"` gives
    assert done.returncode == 1 and "MEMFLOW_FLEET_ROOT" in done.stderr
    with pytest.raises(ValueError, match="fleet root is empty"):
        fleet_index("", runner="serial")  # the deployment's flow run fails, it scans nothing
    assert not (tmp_path / "ws" / "metadata" / "index").exists() or not any(
        (tmp_path / "ws" / "metadata" / "index").iterdir())
