"""Fleets on one machine: `memflow fleet` with no Prefect server runs each workspace's job in a
local process pool under its file lock; `--prefect` without a server fails before any work."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from memflow.schemas.settings import load_settings
from memflow.tasks.capture import auto_memory
from memflow.tasks.ground.workspace import init_workspace, layout

pytestmark = pytest.mark.slow  # fleets on Dask

WORDS = ("harbor quartz lantern meadow cobalt falcon orchard glacier saffron tundra velvet "
         "juniper basalt cinder marble thistle canyon ember willow prism").split()


def no_server() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    return env


def make_fleet(root: Path, count: int, seed: int) -> list[Path]:
    rng = random.Random(seed)
    spaces = []
    for i in range(count):
        settings = load_settings(root / "agents" / f"agent-{i}")
        init_workspace(layout(settings))
        fact = " ".join(rng.choice(WORDS) for _ in range(9)) + "."
        auto_memory(settings, [{"id": "1", "role": "user", "timestamp": "2026-08-03T08:00:00Z",
                                "content": f"Remember that {fact}"}], f"s-{i}")
        spaces.append(settings.workspace)
    return spaces


def run_without_server(*args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "memflow.cli", *args], capture_output=True,
                          text=True, env=no_server(), timeout=600)


def test_fleet_index_and_dream_run_on_one_machine_without_a_server(tmp_path):
    spaces = make_fleet(tmp_path, 3, seed=29)
    for job in ("index", "dream"):
        done = run_without_server("fleet", job, str(tmp_path), "--workers", "2")
        assert done.returncode == 0, done.stderr
        assert f"fleet {job}: 3 workspace(s), ok=3 busy=0 failed=0" in done.stdout
        assert sum(line.startswith("ok ") for line in done.stdout.splitlines()) == 3
        assert "prefect" not in done.stderr.lower()
        if job == "dream":
            assert done.stdout.count("1 note(s) consumed") == 3
    for space in spaces:
        assert any((space / "metadata" / "index").iterdir())


def test_fleet_serial_runs_in_this_process_without_a_server(tmp_path):
    make_fleet(tmp_path, 2, seed=7)
    done = run_without_server("fleet", "index", str(tmp_path), "--runner", "serial", "--json")
    assert done.returncode == 0, done.stderr
    assert '"status": "ok"' in done.stdout


def test_prefect_fleet_without_a_server_fails_before_any_work(tmp_path):
    spaces = make_fleet(tmp_path, 2, seed=3)
    done = run_without_server("--prefect", "fleet", "index", str(tmp_path))
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "PREFECT_API_URL" in lines[0] and "server" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    for space in spaces:  # nothing indexed
        index = space / "metadata" / "index"
        assert not index.exists() or not any(index.rglob("*.lance"))
    dask = run_without_server("fleet", "index", str(tmp_path), "--runner", "dask")
    assert dask.returncode == 1 and "Prefect server" in dask.stderr
