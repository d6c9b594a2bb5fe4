"""One writer at a time: the workspace lock in `metadata/state/lock.json`.

Writing jobs (index, capture, dream, file operations) hold it; the stage functions under them
do not take it again. A lock whose process is gone (same host) is taken over.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

LOCK_FILE = "lock.json"
EXIT_BUSY = 75  # EX_TEMPFAIL


class WorkspaceBusy(RuntimeError):
    def __init__(self, holder: dict):
        self.holder = holder
        super().__init__(
            f"busy: {holder.get('job', '?')} holds the workspace since {holder.get('since', '?')}"
            f" (pid {holder.get('pid', '?')})"
        )


def read_holder(state_dir: Path) -> dict | None:
    try:
        return json.loads((state_dir / LOCK_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {"job": "unknown", "since": "?", "pid": -1, "host": socket.gethostname()}


def _alive(holder: dict) -> bool:
    if holder.get("host") != socket.gethostname():
        return True  # cannot tell for another machine: treat as held
    pid = int(holder.get("pid", -1))
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _try_create(path: Path, record: dict) -> bool:
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(record, handle)
        handle.flush()
        os.fsync(handle.fileno())
    return True


def acquire(state_dir: Path, job: str, wait: float = 0.0, poll: float = 0.2) -> str:
    """Take the lock for `job`; returns its token. Raises WorkspaceBusy after `wait` seconds."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / LOCK_FILE
    token = uuid.uuid4().hex
    record = {"job": job, "pid": os.getpid(), "host": socket.gethostname(), "token": token,
              "since": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    deadline = time.monotonic() + wait
    while True:
        if _try_create(path, record):
            return token
        holder = read_holder(state_dir)
        if holder is not None and not _alive(holder):
            # Stale lock of a dead process: move it aside atomically, then retry the create.
            stale = path.with_name(f".{LOCK_FILE}.stale-{token}")
            try:
                os.replace(path, stale)
                stale.unlink(missing_ok=True)
            except FileNotFoundError:
                pass
            continue
        if time.monotonic() >= deadline:
            raise WorkspaceBusy(holder or {})
        time.sleep(poll)


def release(state_dir: Path, token: str) -> None:
    holder = read_holder(state_dir)
    if holder and holder.get("token") == token:
        (state_dir / LOCK_FILE).unlink(missing_ok=True)


@contextmanager
def workspace_lock(state_dir: Path, job: str, wait: float = 0.0) -> Iterator[str]:
    token = acquire(state_dir, job, wait)
    try:
        yield token
    finally:
        release(state_dir, token)
