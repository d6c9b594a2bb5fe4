"""Backups: a workspace (Markdown, session logs, resources, `metadata/state/`; the derived index
optionally) as one portable tar.zst with a manifest of sha256s, and its verified restore.

Entry points: `backup_workspace`, `restore_workspace`, `prune_backups`, and `stale_staging` /
`remove_stale_staging` for the staging folders killed restores left.
"""

from memflow.tasks.backup.backups import (
    backup_workspace,
    prune_backups,
    remove_stale_staging,
    restore_workspace,
    stale_staging,
)

__all__ = ["backup_workspace", "restore_workspace", "prune_backups", "stale_staging",
           "remove_stale_staging"]
