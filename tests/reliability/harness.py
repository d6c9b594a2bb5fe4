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


# Runs the CLI with os.replace counted (every atomic write ends in one): MEMFLOW_KILL_AT=N kills
# the process with SIGKILL just before (odd N) or just after (even N) replace number N // 2 + 1;
# without it, the count is printed to stderr at exit ("replaces=K").
WRAPPER = """
import os, signal, sys
real, calls = os.replace, [0]
kill_at = int(os.environ.get("MEMFLOW_KILL_AT", "-1"))
def replace(*a, **k):
    calls[0] += 1
    if kill_at >= 0 and kill_at // 2 + 1 == calls[0] and kill_at % 2:
        os.kill(os.getpid(), signal.SIGKILL)
    real(*a, **k)
    if kill_at >= 0 and kill_at // 2 + 1 == calls[0]:
        os.kill(os.getpid(), signal.SIGKILL)
os.replace = replace
from memflow.cli import main
try:
    code = main(sys.argv[1:])
finally:
    sys.stderr.write(f"\\nreplaces={calls[0]}\\n")
sys.exit(code)
"""


def start(ws: Path, *args: str, input_path: Path | None = None, kill_at: int = -1) -> subprocess.Popen:
    stdin = open(input_path, "rb") if input_path else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen([sys.executable, "-c", WRAPPER, "-w", str(ws), *args], stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**ENV, "MEMFLOW_KILL_AT": str(kill_at)})


def timed(ws: Path, *args: str, input_path: Path | None = None) -> tuple[float, int]:
    """(seconds, atomic writes) of an uninterrupted run: the ranges random kills are drawn from."""
    started = time.monotonic()
    proc = start(ws, *args, input_path=input_path)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()
    return time.monotonic() - started, int(err.decode().rsplit("replaces=", 1)[1].split()[0])


def kill_at_random(ws: Path, args: tuple[str, ...], span: tuple[float, int], rng: random.Random,
                   input_path: Path | None = None) -> bool:
    """Start the job and SIGKILL it at a random point; True if it was killed. Half the kills
    land just before or after a random one of the run's atomic writes, half at a random time."""
    seconds, writes = span
    by_write = writes > 0 and rng.random() < 0.5
    proc = start(ws, *args, input_path=input_path, kill_at=rng.randrange(2 * writes) if by_write else -1)
    try:
        proc.wait(timeout=600 if by_write else rng.uniform(0.15, 1.0) * seconds)
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
