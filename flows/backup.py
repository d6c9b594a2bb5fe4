"""Backup flow: the workspace as a dated tar.zst in a folder, keeping the newest `keep`."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from prefect import flow, task

from memflow import __version__
from memflow.flows.artifacts import publish_table
from memflow.flows.locking import locked
from memflow.schemas.settings import load_settings
from memflow.tasks.backup import backup_workspace, prune_backups
from memflow.tasks.ground.workspace import layout

backup_task = task(backup_workspace, name="backup-workspace")


@flow(name="backup", version=__version__, log_prints=True, persist_result=True)
def backup_flow(workspace: str, folder: str, keep: int = 7, with_index: bool = False) -> dict:
    """Write `<folder>/<workspace name>-<UTC time>.tar.zst` and delete all but the newest `keep`."""
    settings = load_settings(workspace)
    lay = layout(settings)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = Path(folder).expanduser() / f"{lay.root.name}-{stamp}.tar.zst"
    with locked(settings, "backup"):
        manifest = backup_task(lay, out, with_index)
    pruned = prune_backups(out.parent, lay.root.name, keep)
    result = {"archive": str(out), "files": len(manifest["files"]), "bytes": out.stat().st_size,
              "pruned": pruned}
    print(f"backup {out} ({result['files']} files); pruned {len(pruned)}")
    publish_table("backup", workspace, [result], f"backup of {settings.workspace}")
    return result
