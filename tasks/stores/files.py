"""Workspace files: atomic writes and decoding by policy.

A write goes to a temp file in the same folder, is fsynced, then renamed over the target, so a
crash leaves the old or the new file, never half of one. `durable=False` (derived index files
only, see ground.durability) keeps the temp file and the rename, so no reader ever sees half a
file, and leaves out the fsyncs.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Literal

DecodePolicy = Literal["replace", "strict"]


class DecodeError(ValueError):
    """A file is not valid UTF-8 and the policy is `strict`."""


class NotRegular(ValueError):
    """A path that is no regular file (FIFO, folder, device, broken link, link loop) or is
    past a size limit; `reason` is the one line without the path."""

    def __init__(self, path: Path | str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.reason = reason


def read_regular(path: Path, max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file (symlinks followed). Opened non-blocking and checked with
    fstat before any read, so a FIFO or device never hangs the reader; raises NotRegular for
    anything else and for a file over `max_bytes` (nothing past the limit is read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegular(path, "symlink loop") from exc
        if exc.errno == errno.ENOENT and os.path.islink(path):
            raise NotRegular(path, "broken symlink") from exc
        raise
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise NotRegular(path, "is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(path, "not a regular file (FIFO, socket or device): not read")
        if max_bytes is not None and info.st_size > max_bytes:
            raise NotRegular(path, f"{info.st_size:,} bytes is over the limit of {max_bytes:,}")
        data = _read_all(fd, info.st_size, None if max_bytes is None else max_bytes + 1)
    finally:
        os.close(fd)
    if max_bytes is not None and len(data) > max_bytes:  # grew while being read
        raise NotRegular(path, f"over the limit of {max_bytes:,} bytes")
    return data


def _read_all(fd: int, size: int, limit: int | None) -> bytes:
    """The bytes of an open file to its end (or `limit` bytes), read with plain `os.read` calls
    sized by its stat `size` (a buffered file object per file, which stats and seeks again before
    reading, cost a 24,000-file cold index ~0.2 CPU seconds)."""
    parts = []
    got = 0
    while limit is None or got < limit:
        want = max(size + 1 - got, 1 << 16)
        part = os.read(fd, want if limit is None else min(want, limit - got))
        if not part:
            break
        parts.append(part)
        got += len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True) -> None:
    if path.is_dir():  # os.replace would name the hidden temp file, not the target
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file (nothing written)", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise named(exc, path) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise named(exc, path) from exc
        raise
    if durable:
        _fsync_dir(path.parent)


FULL = (errno.ENOSPC, errno.EDQUOT)


def named(exc: OSError, path: Path) -> OSError:
    """The error of a write with the file it was for: a full disk (or quota) says so in words,
    names the file and that nothing was written, and what to do."""
    if exc.errno in FULL:
        return OSError(exc.errno, "the disk is full (no space left): nothing was written; free some "
                                  "space and run the command again", str(path))
    return exc if exc.filename else OSError(exc.errno, exc.strerror, str(path))


def atomic_write_text(path: Path, text: str, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), durable)


def atomic_write_json(path: Path, value: object, durable: bool = True) -> None:
    atomic_write_text(path, json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n", durable)


def fsync_tree(folder: Path) -> None:
    """Flush every file under `folder` and the folders themselves to disk (what a pointer to
    `folder` written next must be able to count on after a power loss)."""
    for path in sorted(folder.rglob("*"), reverse=True):  # files before their folders
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        elif path.is_dir():
            _fsync_dir(path)
    _fsync_dir(folder)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def decode(data: bytes, policy: DecodePolicy = "replace", name: str = "") -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if policy == "strict":
            raise DecodeError(f"{name or 'file'} is not valid UTF-8 (byte {exc.start})") from exc
        return data.decode("utf-8", errors="replace")


def read_text(path: Path, policy: DecodePolicy = "replace", max_bytes: int | None = None) -> str:
    """A regular file's text (NotRegular for a FIFO, a folder, a broken link...)."""
    return decode(read_regular(path, max_bytes), policy, str(path))


def read_json(path: Path, default: object) -> object:
    """A JSON state file, or `default` when it is missing; a file that is not JSON raises
    ValueError naming it (never a bare decoder message)."""
    if not path.exists():
        return default
    try:
        return json.loads(read_regular(path).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{path}: not valid JSON ({str(exc).splitlines()[0][:120]}); restore it "
                         "or delete it and let the job rebuild it") from exc


def append_line(path: Path, line: str, durable: bool = True) -> None:
    """Append one line (JSONL logs); a single small write with O_APPEND, then fsync (not with
    `durable=False`: a derived journal, see ground.durability)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line.rstrip("\n") + "\n")
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
    except OSError as exc:
        raise named(exc, path) from exc
