"""One writer at a time: the workspace lock in `metadata/state/lock.json`.

Writing jobs (index, capture, dream, file operations) hold it; the stage functions under them
do not take it again. A lock whose process is gone (same host) is taken over; a lock held from
another host is never taken over by a local pid check. Every writing command waits the same way:
up to `lock_wait` seconds (CLI `--wait`), saying once who holds the lock and since when, then
`WorkspaceBusy` (CLI exit 75). Scheduled flows wait `lock_timeout`.

Across machines (flows with a Prefect API configured) the lock is first a slot of the Prefect
global concurrency limit `limit_name(root)` (memflow.flows.locking), then this file, which
records the limit it was taken under. A file record naming the limit the caller now holds is
stale whatever its host: its holder's lease on the limit has ended.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from memflow.tasks.stores.files import atomic_write_json, read_json

log = logging.getLogger("memflow.lock")
LOCK_FILE = "lock.json"
EXIT_BUSY = 75  # EX_TEMPFAIL


def describe_holder(holder: dict) -> str:
    return (f"{holder.get('job', '?')} holds the workspace since {holder.get('since', '?')}"
            f" (pid {holder.get('pid', '?')} on {holder.get('host', '?')})")


class WorkspaceBusy(RuntimeError):
    def __init__(self, holder: dict):
        self.holder = holder
        super().__init__(f"busy: {describe_holder(holder)}")


def limit_name(root: Path) -> str:
    """The name of a workspace's Prefect concurrency limit: its folder name and a hash of its
    resolved path (every worker mounts shared storage at the same path: work is shipped as
    paths)."""
    path = str(Path(root).expanduser().resolve())
    slug = re.sub(r"[^a-z0-9]+", "-", Path(path).name.lower()).strip("-")[:40] or "workspace"
    return f"memflow-workspace-{slug}-{hashlib.sha256(path.encode()).hexdigest()[:12]}"


def say_waiting(holder: dict, wait: float) -> None:
    log.warning("waiting up to %ss: %s", f"{wait:g}", describe_holder(holder))


def read_holder(state_dir: Path) -> dict | None:
    try:
        return json.loads((state_dir / LOCK_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {"job": "unknown", "since": "?", "pid": -1, "host": socket.gethostname()}


def process_alive(record: dict) -> bool:
    """The process a record names (`host`, `pid`) still runs. Another host's process cannot be
    checked from here: it counts as alive."""
    if record.get("host") not in (None, socket.gethostname()):
        return True
    pid = int(record.get("pid") or -1)
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


def is_stale(holder: dict, limit: str | None) -> bool:
    """A record is stale when its process is gone (same host), or when it was taken under the
    concurrency limit `limit` the caller holds now (any host: that holder's lease has ended)."""
    if limit and holder.get("limit") == limit:
        return True
    return not process_alive(holder)


def acquire(state_dir: Path, job: str, wait: float = 0.0, poll: float = 0.2,
            on_wait: Callable[[dict, float], None] | None = say_waiting, limit: str | None = None) -> str:
    """Take the lock for `job`; returns its token. Raises WorkspaceBusy after `wait` seconds;
    `on_wait` is told once (holder, wait) when the lock is held and there is time to wait.
    `limit`: the concurrency limit whose slot the caller holds (recorded in the file)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / LOCK_FILE
    token = uuid.uuid4().hex
    record = {"job": job, "pid": os.getpid(), "host": socket.gethostname(), "token": token,
              "since": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if limit:
        record["limit"] = limit
    deadline = time.monotonic() + wait
    while True:
        if _try_create(path, record):
            return token
        holder = read_holder(state_dir)
        if holder is not None and is_stale(holder, limit):
            # Stale lock (a dead process, or an ended lease): move it aside atomically, then retry the create.
            stale = path.with_name(f".{LOCK_FILE}.stale-{token}")
            try:
                os.replace(path, stale)
                stale.unlink(missing_ok=True)
            except FileNotFoundError:
                pass
            continue
        if time.monotonic() >= deadline:
            raise WorkspaceBusy(holder or {})
        if on_wait is not None:
            on_wait(holder or {}, wait)
            on_wait = None
        time.sleep(poll)


def release(state_dir: Path, token: str) -> None:
    holder = read_holder(state_dir)
    if holder and holder.get("token") == token:
        (state_dir / LOCK_FILE).unlink(missing_ok=True)


JOBS_FILE = "jobs.json"  # job -> its last run (what `memflow status` shows)


def record_run(state_dir: Path, job: str, started: str, error: BaseException | None) -> None:
    """Remember how the last run of `job` ended (every writing job holds the lock: one place)."""
    path = state_dir / JOBS_FILE
    runs = read_json(path, {}) or {}
    runs[job] = {"started": started, "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                 "result": "ok" if error is None else "failed",
                 "error": "" if error is None else f"{type(error).__name__}: {str(error)[:300]}"}
    try:
        atomic_write_json(path, runs)
    except OSError:
        log.warning("could not record the %s run in %s", job, path)


@contextmanager
def workspace_lock(state_dir: Path, job: str, wait: float = 0.0, record: bool = True,
                   limit: str | None = None) -> Iterator[str]:
    """Hold the workspace lock for `job`, waiting up to `wait` seconds for it; the run's end
    (ok or the error) is recorded for `memflow status` (not with `record=False`: a dry run).
    `limit`: the concurrency limit whose slot the caller holds (see the module's docstring)."""
    token = acquire(state_dir, job, wait, limit=limit)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    error: BaseException | None = None
    try:
        yield token
    except BaseException as exc:
        error = exc
        raise
    finally:
        if record:
            record_run(state_dir, job, started, error)
        release(state_dir, token)
