"""Backups: a workspace (Markdown, session logs, resources, `metadata/state/`; the derived index
optionally) as one portable tar.zst with a manifest of sha256s, and its verified restore.

Entry points: `backup_workspace`, `restore_workspace`, `prune_backups`.
"""

from memflow.tasks.backup.backups import backup_workspace, prune_backups, restore_workspace

__all__ = ["backup_workspace", "restore_workspace", "prune_backups"]
