"""Black-box harness: run `memflow` jobs as processes, kill them with SIGKILL at random points,
finish them with a second run, and compare what is left with an uninterrupted run (the oracle).

Sizes: the default test run takes a small sample; `MEMFLOW_RELIABILITY=full` runs the sizes
README reports (100 kills per job, 20 reindexes under search, 2,000+ hostile files).
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

FULL = os.environ.get("MEMFLOW_RELIABILITY") == "full"
KILLS = int(os.environ.get("MEMFLOW_RELIABILITY_KILLS", "100" if FULL else "1"))
REINDEXES = 20 if FULL else 1
HOSTILE_PER_KIND = 150 if FULL else 1  # full: 2,130 files
# sessions of the LoCoMo conversation the workspaces hold (full: the same size, more kills)
SESSIONS = int(os.environ.get("MEMFLOW_RELIABILITY_SESSIONS", "6")) or None

ENV = {**os.environ, "PREFECT_API_URL": "", "MEMFLOW_LOCK_WAIT": "120"}


def memflow(ws: Path, *args: str, input: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memflow.cli", "-w", str(ws), *args], input=input,
                          capture_output=True, text=True, timeout=timeout, env=ENV)


def start(ws: Path, *args: str, input_path: Path | None = None) -> subprocess.Popen:
    stdin = open(input_path, "rb") if input_path else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen([sys.executable, "-m", "memflow.cli", "-w", str(ws), *args],
                            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)


def timed(ws: Path, *args: str, input_path: Path | None = None) -> float:
    """Seconds an uninterrupted run takes (the range random kills are drawn from)."""
    started = time.monotonic()
    proc = start(ws, *args, input_path=input_path)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()
    return time.monotonic() - started


def kill_at_random(ws: Path, args: tuple[str, ...], span: float, rng: random.Random,
                   input_path: Path | None = None) -> bool:
    """Start the job and SIGKILL it after a random part of `span`; True if it was killed."""
    proc = start(ws, *args, input_path=input_path)
    try:
        proc.wait(timeout=rng.uniform(0.15, 1.0) * span)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    return proc.returncode == -signal.SIGKILL


def tree(root: Path, *folders: str) -> dict[str, str]:
    """Relative path -> sha256 of every file under `folders` (hidden files aside: a killed
    atomic write leaves its temp file, which no job reads and `memflow check --repair` removes)."""
    found = {}
    for folder in folders:
        base = root / folder
        for path in sorted(base.rglob("*")) if base.is_dir() else []:
            if path.is_file() and not path.name.startswith("."):
                found[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def copy_workspace(src: Path, dst: Path) -> Path:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True)
    return dst


def hits(ws: Path, queries: list[str]) -> list[list[tuple[str, int]]]:
    """Top-5 (path, first line) per query, searched in this process (as an agent's host would)."""
    from memflow import api

    return [[(r.path, r.start_line) for r in api.search(query, ws, limit=5).results] for query in queries]
