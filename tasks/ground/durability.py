"""What must reach the disk, and how a crash that lost the rest is noticed.

The Markdown files are the truth: every write of one is fsynced (file and folder,
`stores.files.atomic_write_bytes`), and so is `metadata/state/` (what cannot be derived).
`metadata/index/` is derived: its files are still written atomically (a reader sees the old or
the new file, never half of one), but they need not survive a power loss, as long as the loss
is noticed and the index rebuilt from the Markdown. Fsyncing them cost a write ~15 of its ~20
fsyncs (about two thirds of its wall time on a busy disk, issue #58).

How a loss is noticed: before the first index file is written without an fsync, the kernel's
boot id is written (fsynced) to `metadata/index/UNSYNCED`. Only an operating system crash or a
power loss loses written but unsynced data, and both end the boot; a killed process loses
nothing the kernel holds. So the marker naming another boot says that index files written
without fsync may be lost or torn: the next index run rebuilds the index from the files
(`indexing.REINDEXING`, the interrupted-reindex path) and searches say the index is stale until
then. A clean reboot cannot be told from a crash: it costs one rebuild too. Where there is no
boot id (not Linux), every index file is fsynced as before.
"""

from __future__ import annotations

import functools
from pathlib import Path

from memflow.tasks.stores.files import atomic_write_text

MARK = "UNSYNCED"  # under metadata/index/: the boot whose index writes may skip fsync
KERNEL_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
BOOT_ID = KERNEL_BOOT_ID  # (tests point it at a file they change to play a restart)


def boot_id() -> str | None:
    """This boot's id (Linux), or None where the kernel gives none. The kernel's is read once
    per process (it cannot change while the process runs; every search checks it)."""
    return _kernel_boot_id() if BOOT_ID == KERNEL_BOOT_ID else _read_boot_id(BOOT_ID)


@functools.cache
def _kernel_boot_id() -> str | None:
    return _read_boot_id(KERNEL_BOOT_ID)


def _read_boot_id(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii").strip() or None
    except OSError:
        return None


def _marked(index_dir: Path) -> str | None:
    try:
        return (index_dir / MARK).read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None


def lazy(index_dir: Path) -> bool:
    """Index files may be written without fsync now: the marker names this boot (a lost write
    is then noticed after a crash)."""
    boot = boot_id()
    return boot is not None and _marked(index_dir) == boot


def begin(index_dir: Path) -> bool:
    """Before index files are written: make sure the marker names this boot (written and
    fsynced once a boot); returns whether they may skip fsync (`lazy`). A marker of another
    boot is left for `crashed` to find: the caller checks that first."""
    boot = boot_id()
    if boot is None or not index_dir.is_dir():
        return False
    marked = _marked(index_dir)
    if marked is None:
        atomic_write_text(index_dir / MARK, boot + "\n")
        return True
    return marked == boot


def crashed(index_dir: Path) -> bool:
    """Index files were written without fsync in an earlier boot: a crash may have lost them."""
    boot, marked = boot_id(), _marked(index_dir)
    return boot is not None and marked is not None and marked != boot


def recovered(index_dir: Path) -> None:
    """The index was rebuilt (or a rebuild is on record): lazy writes belong to this boot now."""
    boot = boot_id()
    if boot is not None:
        atomic_write_text(index_dir / MARK, boot + "\n")
