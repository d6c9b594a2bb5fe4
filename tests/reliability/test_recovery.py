"""Reliability of recovery: rollback and recovery of killed dreams restore the dream catalog and
the digest byte for byte; searches never see a snapshot generation disappear while `index`
publishes new ones; a killed restore leaves no staging folder behind the next run; archive
members are checked against the manifest as they stream. Default: a small sample;
`MEMFLOW_RELIABILITY=full` runs the sizes README reports (100 killed dreams, 20 index runs)."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import ENV, FULL, KILLS, copy_workspace, kill_at_random, memflow, start, timed, tree
from test_reliability import conversation

from memflow import api

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
    recovered, a finished one rolled back): catalog and digest/ equal the state before the run,
    byte for byte; the next dream equals an uninterrupted run's. Every other kill is recovered
    by the next dream instead (the same function), with the same end state."""
    before = state(dreamt)
    oracle = copy_workspace(dreamt, tmp_path / "oracle")
    span = timed(oracle, "dream")
    after = state(oracle)
    assert differences(after, before), "the dream changed nothing: the test proves nothing"
    earlier = {r["run_id"] for r in api.dream_runs(dreamt)}
    rng = random.Random("dream-rollback")
    killed = rolled_back = 0
    for attempt in range(DREAM_KILLS):
        ws = copy_workspace(dreamt, tmp_path / "ws")
        killed += kill_at_random(ws, ("dream",), span, rng)
        if attempt % 2 == 0:
            for run in [r for r in api.dream_runs(ws) if r["run_id"] not in earlier][::-1]:
                res = memflow(ws, "dream", "rollback", run["run_id"])
                assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
            diff = differences(state(ws), before)
            assert not diff, f"kill {attempt}: rolled back, differs from before the run: {diff}"
            rolled_back += 1
        res = memflow(ws, "dream")
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
        diff = differences(state(ws), after)
        assert not diff, f"kill {attempt}: differs from the uninterrupted run: {diff}"
        assert not [r for r in api.dream_runs(ws) if r["status"] in ("running", "interrupted")]
    assert killed or DREAM_KILLS < 3
    print(f"\nreliability: 0 catalog differences after rollback of {rolled_back} killed dreams "
          f"(and after recovery by the next dream of {DREAM_KILLS - rolled_back}; {killed} of "
          f"{DREAM_KILLS} killed before the end; uninterrupted: {span[0]:.1f} s, {span[1]} atomic writes)")
