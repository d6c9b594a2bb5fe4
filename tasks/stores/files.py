"""Workspace files: atomic writes and decoding by policy.

A write goes to a temp file in the same folder, is fsynced, then renamed over the target, so a
crash leaves the old or the new file, never half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Literal

DecodePolicy = Literal["replace", "strict"]


class DecodeError(ValueError):
    """A file is not valid UTF-8 and the policy is `strict`."""


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, value: object) -> None:
    atomic_write_text(path, json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")


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


def read_text(path: Path, policy: DecodePolicy = "replace") -> str:
    return decode(path.read_bytes(), policy, str(path))


def read_json(path: Path, default: object) -> object:
    if not path.exists():
        return default
    return json.loads(path.read_text(encoding="utf-8"))


def append_line(path: Path, line: str) -> None:
    """Append one line (JSONL logs); a single small write with O_APPEND, then fsync."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line.rstrip("\n") + "\n")
        handle.flush()
        os.fsync(handle.fileno())
