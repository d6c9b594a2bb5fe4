"""Backup and restore (the caller holds the workspace lock for a backup).

The archive holds every file of the workspace but the derived index (unless `with_index`), the
lock, and temp files of interrupted writes, then `MANIFEST.json` last: each file's sha256 and
size. A restore unpacks into a temporary folder beside the target, checks every file against
the manifest (nothing missing, nothing extra, every hash), and only then renames it into place:
a truncated or corrupt archive is refused with a clear error and leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from memflow.tasks.ground.lock import LOCK_FILE
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores.archive import ArchiveError, read_tar_zst, write_tar_zst

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
        members = [(rel, lay.root / rel) for rel in rels]
        members.append((MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode()))
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


def restore_workspace(archive: Path, target: Path) -> dict:
    """Unpack and verify `archive` into `target` (which must not exist or be empty); returns the
    manifest. Raises ArchiveError naming what is wrong; nothing is left at `target` then."""
    target = target.resolve()
    if target.exists() and any(target.iterdir()):
        raise FileExistsError(f"{target} is not empty: restore into a new folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.restore-"))
    try:
        manifest, seen = None, {}
        for name, data in read_tar_zst(archive):
            if name == MANIFEST:
                manifest = json.loads(data)
                continue
            rel = _member_path(name)
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            seen[rel] = hashlib.sha256(data).hexdigest()
        if manifest is None or manifest.get("format") != FORMAT:
            raise ArchiveError(f"{archive} has no memory-flows manifest (truncated, or not a backup)")
        if not isinstance(manifest.get("files"), dict) or not all(
                isinstance(info, dict) and "sha256" in info for info in manifest["files"].values()):
            raise ArchiveError(f"{archive}: its manifest lists no files with their sha256 (not a backup)")
        wanted = {rel: info["sha256"] for rel, info in manifest["files"].items()}
        missing, extra = sorted(set(wanted) - set(seen)), sorted(set(seen) - set(wanted))
        bad = sorted(rel for rel in set(wanted) & set(seen) if wanted[rel] != seen[rel])
        if missing or extra or bad:
            raise ArchiveError(f"{archive} does not match its manifest: missing {missing[:3]}, "
                               f"unexpected {extra[:3]}, changed {bad[:3]}")
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
