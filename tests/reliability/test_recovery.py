"""Reliability of recovery: rollback and recovery of killed dreams restore the dream catalog and
the digest byte for byte; searches never see a snapshot generation disappear while `index`
publishes new ones; a killed restore leaves no staging folder behind the next run; archive
members are checked against the manifest as they stream. Default: a small sample;
`MEMFLOW_RELIABILITY=full` runs the sizes README reports (100 killed dreams, 20 index runs)."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import ENV, FULL, KILLS, copy_workspace, kill_at_random, memflow, start, timed, tree
from test_reliability import PROBE, conversation

from memflow import api

pytestmark = pytest.mark.slow  # killed dreams and restores

DREAM_KILLS = int(__import__("os").environ.get("MEMFLOW_RELIABILITY_KILLS", "100" if FULL else "3"))
INDEX_RUNS = 20 if FULL else 2
CATALOG = "metadata/state/dream_catalog.json"


def state(ws: Path) -> dict[str, str]:
    """What a dream writes and a rollback must restore: the catalog and every digest file."""
    found = tree(ws, "digest")
    catalog = ws / CATALOG
    found[CATALOG] = catalog.read_text() if catalog.exists() else "(none)"
    return found


def differences(got: dict[str, str], want: dict[str, str]) -> list[str]:
    return sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))


@pytest.fixture(scope="module")
def dreamt(tmp_path_factory) -> Path:
    """A workspace a dream has consolidated once, then more to dream: new days captured, a
    consumed note edited, one deleted and one the dream refuses (the catalog's every kind of
    change: added, changed, dropped, refused)."""
    root = tmp_path_factory.mktemp("recovery")
    talk = conversation()
    days = sorted({m["timestamp"][:10] for m in talk})
    half = [m for m in talk if m["timestamp"][:10] <= days[len(days) // 2]]
    rest = [m for m in talk if m not in half]
    ws = root / "ws"
    api.init(ws)
    (root / "a.json").write_text(json.dumps(half))
    (root / "b.json").write_text(json.dumps(rest))
    assert memflow(ws, "capture", "--session", "a", str(root / "a.json")).returncode == 0
    assert memflow(ws, "dream").returncode == 0
    assert memflow(ws, "capture", "--session", "b", str(root / "b.json")).returncode == 0
    catalog = json.loads((ws / CATALOG).read_text())
    consumed = sorted(catalog)
    edited, gone = ws / consumed[0], ws / consumed[1]
    edited.write_text(edited.read_text() + "\n- I also started a pottery class on Tuesdays.\n")
    gone.unlink()
    refused = ws / "daily" / days[0] / "deep.md"
    refused.write_text("".join("  " * i + "- item\n" for i in range(3000)))
    return ws


def test_rollback_and_recovery_of_killed_dreams_restore_the_catalog_exactly(dreamt, tmp_path):
    """kill -9 `memflow dream` at random points, then `dream rollback RUN_ID` (a killed run is
    recovered by the function the next dream run uses, a finished one rolled back): catalog and
    digest/ equal the state before the run, byte for byte; the next dream equals an
    uninterrupted run's. (Recovery by the next dream itself: test_reliability's dream kills.)"""
    before = state(dreamt)
    oracle = copy_workspace(dreamt, tmp_path / "oracle")
    span = timed(oracle, "dream")
    after = state(oracle)
    assert differences(after, before), "the dream changed nothing: the test proves nothing"
    earlier = {r["run_id"] for r in api.dream_runs(dreamt)}
    rng = random.Random("dream-rollback")
    killed = 0
    for attempt in range(DREAM_KILLS):
        ws = copy_workspace(dreamt, tmp_path / "ws")
        killed += kill_at_random(ws, ("dream",), span, rng)
        for run in [r for r in api.dream_runs(ws) if r["run_id"] not in earlier][::-1]:
            res = memflow(ws, "dream", "rollback", run["run_id"])
            assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
        diff = differences(state(ws), before)
        assert not diff, f"kill {attempt}: rolled back, differs from before the run: {diff}"
        res = memflow(ws, "dream")
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
        diff = differences(state(ws), after)
        assert not diff, f"kill {attempt}: differs from the uninterrupted run: {diff}"
        assert not [r for r in api.dream_runs(ws) if r["status"] in ("running", "interrupted")]
    assert killed or DREAM_KILLS < 3
    print(f"\nreliability: 0 catalog differences after rollback of {DREAM_KILLS} killed dreams "
          f"({killed} killed before the end, the rest rolled back after it; uninterrupted: "
          f"{span[0]:.1f} s, {span[1]} atomic writes); 0 differences from an uninterrupted run "
          "after the next dream")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("generations")
    (root / "talk.json").write_text(json.dumps(conversation()))
    ws = root / "ws"
    api.init(ws)
    assert memflow(ws, "capture", "--session", "talk", str(root / "talk.json")).returncode == 0
    assert memflow(ws, "index").returncode == 0
    return ws


def _searches_in_fresh_processes(ws: Path, stop, failures: list[str], answered: list[int]) -> None:
    while not stop.is_set():
        res = subprocess.run([sys.executable, "-m", "memflow.cli", "-w", str(ws), "search", PROBE,
                              "--json"], capture_output=True, text=True, timeout=120, env=ENV)
        answered[0] += 1
        if res.returncode != 0 or not json.loads(res.stdout or "{}").get("results"):
            failures.append(f"cli: exit {res.returncode}: {res.stderr.strip()[-300:]}")


def test_searches_never_lose_their_generation_while_index_publishes(indexed, tmp_path):
    """`index` runs (each after a small change, so each publishes a new snapshot generation)
    while searches run in a loop from fresh processes and from uncached readers in this one:
    0 failed searches; old generations are removed once superseded for the grace period."""
    import threading

    from memflow.tasks.stores import keyword

    ws = copy_workspace(indexed, tmp_path / "ws")
    note = sorted((ws / "daily").rglob("*.md"))[-1]
    folder = next((ws / "metadata/index/keyword").iterdir())
    failures: list[str] = []
    answered, cli_answered = 0, [0]
    stop = threading.Event()
    cli = threading.Thread(target=_searches_in_fresh_processes, args=(ws, stop, failures, cli_answered))
    cli.start()
    try:
        for run in range(INDEX_RUNS):
            note.write_text(note.read_text() + f"\n- I tried pottery glaze number {run} today.\n")
            proc = start(ws, "index")
            while proc.poll() is None:
                keyword._OPEN.clear()  # an uncached reader: every search opens the snapshot
                try:
                    if not api.search(PROBE, ws, limit=3).results:
                        failures.append("no results")
                    answered += 1
                except Exception as exc:  # noqa: BLE001 - counted: the suite's figure
                    failures.append(f"{type(exc).__name__}: {exc}")
            assert proc.returncode == 0, proc.stderr.read().decode()
    finally:
        stop.set()
        cli.join(timeout=180)
    generations = sorted((p.name for p in folder.glob("gen-*")), key=lambda name: int(name[4:]))
    assert failures == [], failures[:5]
    assert answered > 0 and cli_answered[0] > 0
    from memflow.tasks.stores import keyword

    expired = keyword.expired_generations(folder, int(generations[-1][4:]), time.time() + keyword.GRACE_SECONDS + 1)
    # after the grace period: the current and the previous, and the main segment a delta names
    recent = set(generations[-2:])
    assert set(generations) - {p.name for p in expired} == \
        recent | {keyword.base_of(folder / g) for g in recent} - {None}
    print(f"\nreliability: {answered + cli_answered[0]} searches ({cli_answered[0]} from fresh "
          f"processes, {answered} uncached in-process) during {INDEX_RUNS} index runs that each "
          f"published a generation: {len(failures)} failed")


def test_a_reader_that_loses_its_generation_opens_the_new_one(indexed, tmp_path):
    """The two ways a generation could vanish under a reader: a build keeps the previous one
    (and older ones for the grace period), and a reader whose generation is removed between
    reading CURRENT and opening its files opens the new current generation."""
    from memflow.tasks.stores import keyword

    ws = copy_workspace(indexed, tmp_path / "ws")
    folder = next((ws / "metadata/index/keyword").iterdir())
    first = keyword.current_dir(folder)
    index = keyword.load(folder)
    args = (index.docs, pa_terms(index), index.meta, index.links, index.files)
    second = keyword.build(folder, *args)
    third = keyword.build(folder, *args)
    assert first.is_dir() and second.is_dir()  # previous, and older within the grace period
    opened = []

    def read_while_published(gen: Path):
        opened.append(gen.name)
        if len(opened) == 1:  # CURRENT was read; now a build publishes and the generation goes
            keyword.build(folder, *args)
            shutil.rmtree(gen)
        return keyword._load_generation(gen)

    index = keyword.with_current(folder, read_while_published)
    assert opened == [third.name, f"gen-{int(third.name[4:]) + 1}"] and index.generation == opened[1]
    later = time.time() + keyword.GRACE_SECONDS + 1  # once the grace period is over
    assert keyword.expired_generations(folder, int(opened[1][4:]), later) == [first]  # gen-2 is previous now


def pa_terms(index):
    import pyarrow as pa

    return pa.array([[]] * index.size, pa.list_(pa.string()))


RESTORE_KILLS = 20 if FULL else 3


def staging_left(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".restore" in p.name)


@pytest.fixture(scope="module")
def archive(indexed, tmp_path_factory) -> Path:
    """A backup with enough bytes (40 MB that do not compress) for a kill to land mid-restore."""
    root = tmp_path_factory.mktemp("backup")
    ws = copy_workspace(indexed, root / "ws")
    rng = random.Random("restore")
    for n in range(8):
        (ws / "resource" / f"blob-{n}.bin").write_bytes(rng.randbytes(5_000_000))
    out = root / "ws.tar.zst"
    assert memflow(ws, "backup", str(out)).returncode == 0
    return out


def test_a_killed_restore_leaves_no_staging_after_the_next_restore(archive, indexed, tmp_path):
    """kill -9 `memflow restore` at random points, then restore again into the same parent:
    no staging folder is left (the killed one's is removed), the restore is complete."""
    parent = tmp_path / "restores"
    parent.mkdir()
    span = timed(indexed, "restore", str(archive), str(parent / "oracle"))
    expected = tree(parent / "oracle", ".")
    shutil.rmtree(parent / "oracle")
    rng = random.Random("restore-kills")
    killed = 0
    for attempt in range(RESTORE_KILLS):
        target = parent / f"target-{attempt}"
        killed += kill_at_random(indexed, ("restore", str(archive), str(target)), span, rng)
        if target.exists():  # the kill came after the rename: restore elsewhere in the same parent
            shutil.rmtree(target)
        res = memflow(indexed, "restore", str(archive), str(target))
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
        assert staging_left(parent) == [], f"kill {attempt}: staging left"
        assert tree(target, ".") == expected
        shutil.rmtree(target)
    assert killed or RESTORE_KILLS < 3
    print(f"\nreliability: {RESTORE_KILLS} restores killed at random points ({killed} before the end; "
          f"uninterrupted {span[0]:.1f} s), each followed by a restore: 0 staging folders left")


def test_check_repair_removes_only_dead_restores_staging(indexed, tmp_path):
    import os
    import socket

    ws = copy_workspace(indexed, tmp_path / "ws")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = socket.gethostname()
    dead = tmp_path / f".other.restore@{host}@{int(gone.stdout)}@00ff00ff"
    live = tmp_path / f".mine.restore@{host}@{os.getpid()}@00ff00ff"
    for folder in (dead, live):
        (folder / "daily").mkdir(parents=True)
        (folder / "daily" / "note.md").write_text("half a restore\n")
    res = memflow(ws, "check")
    assert dead.name in res.stdout and live.name not in res.stdout, res.stdout
    res = memflow(ws, "check", "--repair")
    assert "Traceback" not in res.stderr, res.stderr
    assert not dead.exists() and live.exists()


def _crafted(path: Path, members: list[tuple[str, bytes]], manifest_files: dict, first: bool = True) -> Path:
    import hashlib

    from memflow.tasks.stores.archive import write_tar_zst

    files = {rel: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)} for rel, data in manifest_files.items()}
    manifest = ("MANIFEST.json", json.dumps({"format": "memflow-backup-1", "files": files}).encode())
    write_tar_zst(path, [manifest, *members] if first else [*members, manifest], level=1)
    return path


def _restore_with_file_limit(archive: Path, target: Path, limit: int) -> subprocess.CompletedProcess:
    """`memflow restore` with no file allowed past `limit` bytes (RLIMIT_FSIZE): a restore that
    tried to write more would die of SIGXFSZ instead of refusing the archive."""
    import resource

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "memflow.cli", "restore", str(archive), str(target)],
                          capture_output=True, text=True, timeout=300, env=ENV, preexec_fn=limited)


@pytest.mark.parametrize("manifest_first", [True, False], ids=["manifest first", "manifest last (older backups)"])
def test_a_member_larger_than_its_manifest_entry_is_refused_before_it_is_written(tmp_path, manifest_first):
    small = b"# Note\n\nsmall\n"
    big = b"x" * (64 << 20)  # 64 MiB where the manifest says 14 bytes
    crafted = _crafted(tmp_path / "big.tar.zst", [("daily/2026-01-01/a.md", big)],
                       {"daily/2026-01-01/a.md": small}, manifest_first)
    res = _restore_with_file_limit(crafted, tmp_path / "out", 1 << 20)
    assert res.returncode == 1, (res.returncode, res.stderr)
    assert res.stderr.startswith("error: ") and "daily/2026-01-01/a.md" in res.stderr
    assert f"has {len(big)} bytes, its manifest says {len(small)}" in res.stderr
    assert not (tmp_path / "out").exists() and staging_left(tmp_path) == []
    stray = _crafted(tmp_path / "stray.tar.zst", [("daily/2026-01-01/a.md", small), ("daily/x.md", big)],
                     {"daily/2026-01-01/a.md": small}, manifest_first)
    res = _restore_with_file_limit(stray, tmp_path / "out", 1 << 20)
    assert res.returncode == 1 and "'daily/x.md' is not in its manifest" in res.stderr, res.stderr
    good = _crafted(tmp_path / "good.tar.zst", [("daily/2026-01-01/a.md", small)],
                    {"daily/2026-01-01/a.md": small}, manifest_first)
    res = _restore_with_file_limit(good, tmp_path / "out", 1 << 20)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "out/daily/2026-01-01/a.md").read_bytes() == small
