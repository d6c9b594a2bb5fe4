"""Backup and restore of a generated workspace: seconds, archive size and its ratio to the
workspace's bytes (the derived index left out, as by default).

    .venv/bin/python benchmarks/backup_size.py --notes 2300
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus import build  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=2300)
    args = parser.parse_args()
    from memflow import api
    from memflow.tasks.backup.backups import backup_files
    from memflow.tasks.ground.workspace import layout

    root = Path(tempfile.mkdtemp(prefix="bench-backup-"))
    ws = root / "ws"
    api.init(ws)
    build(ws, args.notes)
    api.index(ws)
    lay = layout(api.settings_for(ws))
    size = sum((ws / rel).stat().st_size for rel in backup_files(lay, with_index=False))
    started = time.perf_counter()
    api.backup(root / "ws.tar.zst", ws)
    backup_s = time.perf_counter() - started
    started = time.perf_counter()
    api.restore(root / "ws.tar.zst", root / "restored")
    restore_s = time.perf_counter() - started
    archive = (root / "ws.tar.zst").stat().st_size
    print("| notes | workspace bytes (no index) | archive bytes | archive / workspace | backup (s) | restore + verify (s) |")
    print("|---|---|---|---|---|---|")
    print(f"| {args.notes} | {size:,} | {archive:,} | {archive / size:.2f} | {backup_s:.2f} | {restore_s:.2f} |")


if __name__ == "__main__":
    main()
