"""Backup and restore (the caller holds the workspace lock for a backup).

The archive holds `MANIFEST.json` first (each file's sha256 and size), then every file of the
workspace but the derived index (unless `with_index`), the lock, and temp files of interrupted
writes. A restore checks each member against the manifest as it streams: a member not in the
manifest, or whose size differs from its entry, is refused before any of it is written, and
each file's size and sha256 are checked as it is written. It unpacks into a staging folder
beside the target named `.<target>.restore@<host>@<pid>@<random>`, and renames it into place
only when every file is there: a truncated, corrupt or crafted archive is refused with a clear
error and leaves nothing behind. A restore that was killed leaves its staging folder: the next
restore into the same folder's parent (or `memflow check --repair` of a workspace there)
removes the ones whose process is gone. Archives of earlier versions (manifest last) are read
twice: once for the manifest, once to unpack.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import tempfile
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from memflow.tasks.ground.lock import LOCK_FILE, process_alive
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores.archive import ArchiveError, stream_tar_zst, write_tar_zst

FORMAT = "memflow-backup-1"
MANIFEST = "MANIFEST.json"


def backup_files(lay: Layout, with_index: bool, exclude: Path | None = None) -> list[str]:
    """Workspace-relative paths a backup holds, sorted (no symlinks followed out)."""
    root = lay.root.resolve()
    index = lay.index_dir.resolve()
    found = []
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if with_index or (here / d).resolve() != index)
        for name in names:
            path = here / name
            if (name.startswith(".") and name.endswith(".tmp")) or not path.is_file() or path.is_symlink():
                continue
            if path == lay.state_dir / LOCK_FILE or (exclude is not None and path.resolve() == exclude):
                continue
            found.append(path.relative_to(root).as_posix())
    return sorted(found)


def backup_workspace(lay: Layout, out: Path, with_index: bool = False) -> dict:
    """Write the archive (atomically: a temp file renamed at the end); returns its manifest."""
    out = out.resolve()
    rels = backup_files(lay, with_index, exclude=out)
    files = {}
    for rel in rels:
        data = (lay.root / rel).read_bytes()
        files[rel] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    manifest = {"format": FORMAT, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "workspace": lay.root.name, "with_index": with_index, "files": files}
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(fd)
    try:
        members: list = [(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())]
        members += [(rel, lay.root / rel) for rel in rels]
        write_tar_zst(Path(tmp), members)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return manifest


def _member_path(name: str) -> str:
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or ".." in parts or "\\" in name:
        raise ArchiveError(f"refusing archive member {name!r}: not a path inside the workspace")
    return PurePosixPath(*parts).as_posix()


STAGING_RE = re.compile(r"^\.(?P<target>.+)\.restore@(?P<host>[^@/]+)@(?P<pid>\d+)@[0-9a-f]+$")


def staging_folder(target: Path) -> Path:
    """Where a restore into `target` unpacks: beside it, named for this host and process."""
    return target.parent / f".{target.name}.restore@{socket.gethostname()}@{os.getpid()}@{secrets.token_hex(4)}"


def stale_staging(parent: Path) -> list[Path]:
    """Staging folders in `parent` of restores on this host whose process is gone (killed)."""
    found = []
    for entry in sorted(parent.iterdir()) if parent.is_dir() else []:
        match = STAGING_RE.match(entry.name)
        if match and entry.is_dir() and not entry.is_symlink() and match["host"] == socket.gethostname() \
                and not process_alive({"host": match["host"], "pid": int(match["pid"])}):
            found.append(entry)
    return found


def remove_stale_staging(parent: Path) -> list[Path]:
    """Remove what `stale_staging(parent)` finds; returns it."""
    found = stale_staging(parent)
    for folder in found:
        shutil.rmtree(folder)
    return found


def _manifest(archive: Path, data: bytes) -> dict[str, dict]:
    """The manifest's files (path -> {"sha256", "size"}), or ArchiveError naming what is wrong."""
    try:
        manifest = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArchiveError(f"{archive}: its manifest is not JSON ({exc})") from exc
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not isinstance(files, dict) \
            or not all(isinstance(i, dict) and isinstance(i.get("size"), int) and isinstance(i.get("sha256"), str)
                       for i in files.values()):
        raise ArchiveError(f"{archive} has no memory-flows manifest (truncated, or not a backup)")
    return manifest


def _find_manifest(archive: Path) -> dict:
    """The manifest of an archive that has it last (earlier versions): a pass that writes nothing."""
    for name, size, chunks in stream_tar_zst(archive):
        if name == MANIFEST and size <= 1 << 30:
            return _manifest(archive, b"".join(chunks))
    raise ArchiveError(f"{archive} has no memory-flows manifest (truncated, or not a backup)")


def _write_member(archive: Path, name: str, size: int, chunks, files: dict, staging: Path) -> str:
    """Write one member into `staging`, checked against its manifest entry before the first
    byte (listed, same size) and as it is written (size, sha256); returns its path."""
    rel = _member_path(name)
    entry = files.get(rel)
    if entry is None:
        raise ArchiveError(f"{archive}: member {rel!r} is not in its manifest: refusing the archive")
    if size != entry["size"]:
        raise ArchiveError(f"{archive}: member {rel!r} has {size} bytes, its manifest says "
                           f"{entry['size']}: refusing the archive")
    path = staging / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    digest, written = hashlib.sha256(), 0
    try:
        handle = open(path, "xb")  # noqa: SIM115 - a member twice is refused, not overwritten
    except FileExistsError as exc:
        raise ArchiveError(f"{archive}: member {rel!r} appears twice: refusing the archive") from exc
    with handle:
        for data in chunks:
            written += len(data)
            if written > entry["size"]:
                raise ArchiveError(f"{archive}: member {rel!r} is larger than its manifest's "
                                   f"{entry['size']} bytes: refusing the archive")
            digest.update(data)
            handle.write(data)
    if digest.hexdigest() != entry["sha256"]:
        raise ArchiveError(f"{archive}: member {rel!r} does not match its manifest's sha256")
    return rel


def _unpack(archive: Path, staging: Path) -> dict:
    """Stream `archive` into `staging`, each member checked as it comes; returns the manifest."""
    manifest, seen, manifests = None, set(), 0
    for name, size, chunks in stream_tar_zst(archive):
        if name == MANIFEST:
            manifests += 1
            if manifests > 1:
                raise ArchiveError(f"{archive} has more than one manifest: refusing the archive")
            if manifest is None:
                if size > 1 << 30:
                    raise ArchiveError(f"{archive}: its manifest has {size} bytes: refusing the archive")
                manifest = _manifest(archive, b"".join(chunks))
            continue
        if manifest is None:  # an archive of an earlier version: the manifest comes last
            manifest = _find_manifest(archive)
        seen.add(_write_member(archive, name, size, chunks, manifest["files"], staging))
    if manifest is None:
        raise ArchiveError(f"{archive} has no memory-flows manifest (truncated, or not a backup)")
    missing = sorted(set(manifest["files"]) - seen)
    if missing:
        raise ArchiveError(f"{archive} does not match its manifest: missing {missing[:3]}"
                           f"{f' and {len(missing) - 3} more' if len(missing) > 3 else ''}")
    return manifest


def restore_workspace(archive: Path, target: Path) -> dict:
    """Unpack and verify `archive` into `target` (which must not exist or be empty); returns the
    manifest. Raises ArchiveError naming what is wrong; nothing is left at `target` then.
    Staging folders of killed restores beside `target` are removed first."""
    target = target.resolve()
    if target.exists() and any(target.iterdir()):
        raise FileExistsError(f"{target} is not empty: restore into a new folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(target.parent)
    staging = staging_folder(target)
    staging.mkdir()
    try:
        manifest = _unpack(archive, staging)
        if target.exists():
            target.rmdir()
        os.replace(staging, target)
        return manifest
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def prune_backups(folder: Path, prefix: str, keep: int) -> list[str]:
    """Delete all but the newest `keep` archives `<prefix>-*.tar.zst` in `folder`; returns the
    names deleted."""
    archives = sorted(folder.glob(f"{prefix}-*.tar.zst"))
    doomed = archives[:-keep] if keep > 0 else archives
    for path in doomed:
        path.unlink()
    return [p.name for p in doomed]
