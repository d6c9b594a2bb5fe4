"""Black-box stress of the workspace lock: many processes take and release it in a loop, some
holders are killed with SIGKILL while inside (their stale lock must be taken over), and no two
holders are ever inside at once.

Each holder proves exclusion two ways: it creates an `inside` marker with O_EXCL on entering
(an existing marker is an overlap), and it appends enter/exit records stamped with
`time.monotonic_ns()` (one clock for all processes) to a shared O_APPEND log whose intervals
must not intersect. A holder chosen to die writes `kill`, removes its marker and SIGKILLs
itself without releasing: the lock file still names it.

Default: 6 processes x 40 acquisitions, 6 deaths (a few seconds). `MEMFLOW_RELIABILITY=full`:
6 x 1,000 and 60 deaths. The figures are printed (`pytest -s`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # many processes, SIGKILL harness

FULL = os.environ.get("MEMFLOW_RELIABILITY") == "full"
PROCESSES = 6
PER_PROCESS = 1000 if FULL else 40
DEATHS = 60 if FULL else 6

WORKER = r"""
import os, signal, sys, time
from pathlib import Path
from memflow.tasks.ground.lock import acquire, release

state, log_path, count, die_at = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
marker = state.parent / "inside"
log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

def say(kind):
    os.write(log, f"{kind} {os.getpid()} {time.monotonic_ns()}\n".encode())

for n in range(count):
    token = acquire(state, "stress", wait=120, poll=0.001, on_wait=None)
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        os.close(fd)
    except FileExistsError:
        say("overlap")
    say("enter")
    time.sleep(0.0005)
    if n == die_at:
        say("kill")
        marker.unlink(missing_ok=True)
        os.kill(os.getpid(), signal.SIGKILL)
    say("exit")
    marker.unlink(missing_ok=True)
    release(state, token)
"""


def run_stress(root: Path) -> dict:
    """Run the workers (a killed one is replaced by a fresh process for its remaining
    acquisitions) and read their log: acquisitions, deaths, overlaps."""
    state, log = root / "state", root / "events.log"
    state.mkdir(parents=True)
    script = root / "worker.py"
    script.write_text(WORKER)
    left = {i: PER_PROCESS for i in range(PROCESSES)}
    deaths_left = {i: DEATHS // PROCESSES + (i < DEATHS % PROCESSES) for i in range(PROCESSES)}
    running: dict[int, subprocess.Popen] = {}

    def spawn(i: int) -> None:
        die_at = (left[i] // (deaths_left[i] + 1)) if deaths_left[i] else -1
        running[i] = subprocess.Popen([sys.executable, str(script), str(state), str(log), str(left[i]),
                                       str(die_at)], stderr=subprocess.PIPE)
        running[i].die_at = die_at

    for i in range(PROCESSES):
        spawn(i)
    deadline = time.monotonic() + (3600 if FULL else 300)
    while running:
        assert time.monotonic() < deadline, "the stress run did not finish"
        for i, proc in list(running.items()):
            code = proc.poll()  # reaps: a killed holder is no zombie for long
            if code is None:
                continue
            del running[i]
            stderr = proc.stderr.read().decode()
            assert code in (0, -9), stderr
            if code == -9:
                left[i] -= proc.die_at + 1
                deaths_left[i] -= 1
                spawn(i)
        time.sleep(0.01)
    return read_events(log)


def read_events(log: Path) -> dict:
    events = [line.split() for line in log.read_text().splitlines()]
    events.sort(key=lambda e: int(e[2]))
    overlaps = sum(1 for kind, _, _ in events if kind == "overlap")
    inside: str | None = None
    interleaved = 0
    for kind, pid, _ns in events:
        if kind == "enter":
            interleaved += inside is not None
            inside = pid
        elif kind in ("exit", "kill"):
            interleaved += inside != pid
            inside = None
    return {"acquisitions": sum(1 for e in events if e[0] == "enter"),
            "deaths": sum(1 for e in events if e[0] == "kill"),
            "marker_overlaps": overlaps, "interval_overlaps": interleaved}


def test_many_processes_and_killed_holders_never_overlap(tmp_path):
    started = time.monotonic()
    figures = run_stress(tmp_path)
    figures["seconds"] = round(time.monotonic() - started, 1)
    print("lock stress:", json.dumps({"processes": PROCESSES, **figures}))
    assert figures["acquisitions"] == PROCESSES * PER_PROCESS
    assert figures["deaths"] == DEATHS
    assert figures["marker_overlaps"] == 0 and figures["interval_overlaps"] == 0
    assert not (tmp_path / "state" / "lock.json").exists()
    assert not list((tmp_path / "state").glob(".lock.json.*"))  # no temp record or tombstone left


def test_an_unreadable_lock_is_left_alone_until_it_is_old_and_a_zombie_holder_is_gone(tmp_path):
    import pytest

    from memflow.tasks.ground.lock import UNREADABLE_GRACE, WorkspaceBusy, acquire, release

    state = tmp_path / "state"
    state.mkdir()
    lock = state / "lock.json"
    lock.write_text("")  # what the old lock's contenders saw mid-create, and took over
    with pytest.raises(WorkspaceBusy, match="unknown holds the workspace"):
        acquire(state, "index")
    old = time.time() - UNREADABLE_GRACE - 5
    os.utime(lock, (old, old))
    release(state, acquire(state, "index"))  # a damaged file left behind is taken over
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    while not Path(f"/proc/{child.pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z":
        time.sleep(0.01)  # exited, not reaped: os.kill(pid, 0) still succeeds
    lock.write_text(json.dumps({"job": "old", "pid": child.pid, "host": os.uname().nodename,
                                "since": "x", "token": "t"}))
    release(state, acquire(state, "index"))
    child.wait()
    assert not lock.exists()
