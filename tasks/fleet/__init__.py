"""Fleet: one job (index, dream, resources) over many workspaces, each shipped as its path.

Entry points: `find_workspaces` (every workspace under a root, by its layout or a memflow.toml),
`plan_starts` (each workspace's start offset within a jitter window), `run_workspace` (one
workspace's job under a lock the caller supplies, ending as ok, busy or failed) and
`outcome_rows` (the report table), `run_local_fleet` (the whole fleet in a local process pool,
no Prefect). The fleet flow fans `run_workspace` out on a task runner;
the per-workspace stages are called through their packages' public names.
"""

from memflow.tasks.fleet.discovery import find_workspaces
from memflow.tasks.fleet.jobs import run_workspace
from memflow.tasks.fleet.planning import outcome_rows, plan_starts, wait_for_start
from memflow.tasks.fleet.pool import run_local_fleet

__all__ = ["find_workspaces", "plan_starts", "wait_for_start", "run_workspace", "outcome_rows", "run_local_fleet"]
