"""Checking a workspace: notes parse, the index matches the files, links resolve, dream runs
are coherent, state is consistent; `--repair` fixes what is safe to fix.

Entry points: `check_workspace`. The caller holds the workspace lock when repairing.
"""

from memflow.tasks.check.checkup import check_workspace

__all__ = ["check_workspace"]
