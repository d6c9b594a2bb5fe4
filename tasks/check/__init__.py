"""Checking a workspace: notes parse, the index matches the files, links resolve, dream runs
are coherent, state is consistent; `--repair` fixes what is safe to fix.

Entry points: `check_workspace` (the caller holds the workspace lock when repairing) and
`workspace_status` (read-only: freshness, last runs, lock, backlog, counts, models, warnings).
"""

from memflow.tasks.check.checkup import check_workspace
from memflow.tasks.check.status import workspace_status

__all__ = ["check_workspace", "workspace_status"]
