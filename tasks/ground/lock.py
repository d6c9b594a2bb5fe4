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

Why it excludes: the lock file only ever appears whole. A contender writes its full record to a
file of its own and hard-links it to `lock.json` (`os.link` fails when the name exists), so no
reader sees a half-written lock. Taking over a stale lock (and releasing one taken under a
concurrency limit, the only kind judged stale while its holder lives) is serialized by an
`fcntl.flock` on `lock.guard` (the kernel drops it when its holder dies, so it is never stale
itself): under it the record is read again and removed only if it is still the one judged
stale, by a rename to a tombstone that is checked before it is deleted. Where the storage
ignores `flock`, the tombstone check still refuses to remove a record that changed.
"""

from __future__ import annotations

import errno
import fcntl
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
from contextvars import ContextVar
from datetime import datetime, timezone
from pathlib import Path

from memflow.tasks.stores.files import atomic_write_json, named, read_json

log = logging.getLogger("memflow.lock")
LOCK_FILE = "lock.json"
GUARD_FILE = "lock.guard"  # flock'ed around takeover and release; empty, never removed
EXIT_BUSY = 75  # EX_TEMPFAIL
UNREADABLE_GRACE = 10.0  # seconds a lock file that is not a record is left alone (see _holder_of)
LITTER_AGE = 60.0  # seconds after which a killed contender's temp file or tombstone is swept


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


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _holder_of(raw: bytes, path: Path) -> dict:
    """The record in a lock file's bytes. Bytes that are not a record (a hand-edited or damaged
    file; never a lock being written, which appears whole) name an unknown holder, stale once
    the file is older than UNREADABLE_GRACE seconds."""
    try:
        record = json.loads(raw.decode("utf-8"))
        if isinstance(record, dict):
            return record
    except (json.JSONDecodeError, UnicodeDecodeError):
        pass
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        age = UNREADABLE_GRACE + 1
    return {"job": "unknown", "since": "?", "pid": -1, "host": socket.gethostname(),
            "unreadable": True, "age": age}


def read_holder(state_dir: Path) -> dict | None:
    path = state_dir / LOCK_FILE
    raw = _read_bytes(path)
    return None if raw is None else _holder_of(raw, path)


def _zombie(pid: int) -> bool:
    """A process that has exited but not been reaped (Linux): it holds nothing any more."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


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
    return not _zombie(pid)


def is_stale(holder: dict, limit: str | None) -> bool:
    """A record is stale when its process is gone (same host), or when it was taken under the
    concurrency limit `limit` the caller holds now (any host: that holder's lease has ended)."""
    if holder.get("unreadable"):
        return holder.get("age", 0) > UNREADABLE_GRACE
    if limit and holder.get("limit") == limit:
        return True
    return not process_alive(holder)


_unguarded_said: set[str] = set()


@contextmanager
def _guard(state_dir: Path) -> Iterator[None]:
    """Hold the flock that serializes takeover and release (released by the kernel if we die).
    Storage without flock support goes on unguarded, said once: the tombstone check remains."""
    fd = os.open(state_dir / GUARD_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                raise
            if str(state_dir) not in _unguarded_said:
                _unguarded_said.add(str(state_dir))
                log.warning("%s: flock is not supported here (%s); stale locks are taken over "
                            "without the guard", state_dir / GUARD_FILE, exc.strerror)
        yield
    finally:
        os.close(fd)


def _try_create(path: Path, record: dict) -> bool:
    """Publish `record` as the lock, whole, if there is none: write it to a file of our own,
    then hard-link that file to the lock's name (fails when the name exists)."""
    own = path.with_name(f".{path.name}.{record['token']}.tmp")
    try:
        fd = os.open(own, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError as exc:
        raise named(exc, path) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:  # not fsynced: a crash ends every
            json.dump(record, handle)  # holder, and a record lost or torn by it is stale (_holder_of)
        os.link(own, path)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        raise named(exc, path) from exc
    finally:
        own.unlink(missing_ok=True)


def _sweep_litter(state_dir: Path) -> None:
    """Temp records and tombstones of contenders killed mid-step (under the guard)."""
    cutoff = time.time() - LITTER_AGE
    for litter in [*state_dir.glob(f".{LOCK_FILE}.*.tmp"), *state_dir.glob(f".{LOCK_FILE}.stale-*")]:
        try:
            if litter.stat().st_mtime < cutoff:
                litter.unlink()
        except FileNotFoundError:
            continue


def _take_over(state_dir: Path, judged: bytes, token: str) -> None:
    """Remove the lock if it still holds the bytes `judged` stale; otherwise leave it (the next
    attempt judges again). Rename to a tombstone of our own, check it, then delete it."""
    path = state_dir / LOCK_FILE
    with _guard(state_dir):
        if _read_bytes(path) != judged:
            return
        tombstone = path.with_name(f".{LOCK_FILE}.stale-{token}")
        try:
            os.rename(path, tombstone)
        except FileNotFoundError:
            return
        if _read_bytes(tombstone) == judged:
            log.info("took over a stale lock: %s", describe_holder(_holder_of(judged, path)))
        else:  # only where flock does not hold: not the record judged, put it back
            try:
                os.link(tombstone, path)
            except FileExistsError:
                log.error("%s changed during a takeover on storage without flock", path)
        tombstone.unlink(missing_ok=True)
        _sweep_litter(state_dir)


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
        raw = _read_bytes(path)
        if raw is None:  # free (or released in between): publish ours; lost the race: look again
            if _try_create(path, record):
                return token
            continue
        holder = _holder_of(raw, path)
        if is_stale(holder, limit):
            _take_over(state_dir, raw, token)
            continue
        if time.monotonic() >= deadline:
            raise WorkspaceBusy(holder)
        if on_wait is not None:
            on_wait(holder, wait)
            on_wait = None
        time.sleep(poll)


def release(state_dir: Path, token: str) -> None:
    """Remove the lock if it is still ours. A record taken under a concurrency limit can be
    judged stale while its holder lives (its lease ended), so its release takes the guard: a
    takeover cannot interleave. Any other record is never stale while we run: no guard needed
    (a dry run leaves no file behind)."""
    holder = read_holder(state_dir)
    if not holder or holder.get("token") != token:
        return
    if not holder.get("limit"):
        (state_dir / LOCK_FILE).unlink(missing_ok=True)
        return
    with _guard(state_dir):
        holder = read_holder(state_dir)
        if holder and holder.get("token") == token:
            (state_dir / LOCK_FILE).unlink(missing_ok=True)


JOBS_FILE = "jobs.json"  # job -> its last run (what `memflow status` shows)


# what the job holding the lock in this context said it could not do (`run_fell_short`)
_SHORTFALLS: ContextVar[list[str] | None] = ContextVar("memflow_run_shortfalls", default=None)


def run_fell_short(message: str) -> None:
    """The job holding the lock went on but did not do all it should (every resource it was to
    read failed): its run is recorded as failed with `message`, not as ok. A no-op outside a
    lock (the caller records nothing then)."""
    shortfalls = _SHORTFALLS.get()
    if shortfalls is not None:
        shortfalls.append(message)


def record_run(state_dir: Path, job: str, started: str, error: BaseException | None,
               shortfalls: list[str] | None = None) -> None:
    """Remember how the last run of `job` ended (every writing job holds the lock: one place):
    failed on an error, or on what the run said it could not do (`run_fell_short`)."""
    path = state_dir / JOBS_FILE
    runs = read_json(path, {}) or {}
    said = f"{type(error).__name__}: {error}" if error is not None else "; ".join(shortfalls or [])
    runs[job] = {"started": started, "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                 "result": "failed" if said else "ok", "error": said[:300]}
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
    shortfalls: list[str] = []
    reset = _SHORTFALLS.set(shortfalls)
    try:
        yield token
    except BaseException as exc:
        error = exc
        raise
    finally:
        _SHORTFALLS.reset(reset)
        if record:
            record_run(state_dir, job, started, error, shortfalls)
        release(state_dir, token)
