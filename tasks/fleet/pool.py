"""A fleet on one machine without Prefect: each workspace's job in a process of a local pool
(`concurrent.futures`), each under its workspace's file lock (the lock every CLI command takes);
`workers=1` runs them one at a time in this process. No server: the CLI's rule (Prefect only with
`--prefect` or PREFECT_API_URL) holds for fleets too."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from datetime import datetime, timezone

from memflow.schemas.fleet import FleetJob, FleetSummary, WorkspaceOutcome
from memflow.schemas.settings import Settings
from memflow.tasks.fleet.discovery import find_workspaces
from memflow.tasks.fleet.jobs import run_workspace
from memflow.tasks.fleet.planning import plan_starts, wait_for_start
from memflow.tasks.ground.lock import workspace_lock
from memflow.tasks.ground.workspace import layout


@contextmanager
def file_lock(settings: Settings, job: str, wait: float) -> Iterator[str]:
    """The workspace's file lock (memflow.tasks.ground.lock), as a fleet job's lock."""
    with workspace_lock(layout(settings).state_dir, job, wait=wait) as token:
        yield token


def local_workspace(job: FleetJob, workspace: str, offset: float, fleet_started: float,
                    wait: float | None, options: dict) -> WorkspaceOutcome:
    """One workspace in a pool process: wait for its start, run the job under its file lock."""
    wait_for_start(fleet_started, offset)
    return run_workspace(job, workspace, file_lock, wait, **options)


def run_local_fleet(job: FleetJob, root: str | list[str], workers: int = 2, wait: float | None = None,
                    jitter_seconds: float = 0.0, options: dict | None = None,
                    done: Callable[[WorkspaceOutcome], None] | None = None) -> FleetSummary:
    """Run `job` on every workspace under `root` in `workers` local processes (1: in this
    process); `done` is called with each outcome as it ends (progress). A workspace whose process
    died is its failed row, not the end of the fleet."""
    started = time.time()
    workspaces = find_workspaces(root)
    seed = datetime.now(timezone.utc).date().isoformat()
    plan = plan_starts(workspaces, jitter_seconds, seed)
    calls = [(job, path, offset, started, wait, options or {}) for path, offset in plan]
    outcomes: dict[str, WorkspaceOutcome] = {}
    if workers <= 1 or len(calls) <= 1:
        for call in calls:
            outcomes[call[1]] = local_workspace(*call)
            if done:
                done(outcomes[call[1]])
    else:
        context = multiprocessing.get_context("spawn")  # no fork of a process holding threads
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = {pool.submit(local_workspace, *call): call[1] for call in calls}
            for future in as_completed(futures):
                path = futures[future]
                error = future.exception()
                outcomes[path] = future.result() if error is None else WorkspaceOutcome(
                    workspace=path, job=job, status="failed", error=f"{type(error).__name__}: {error}")
                if done:
                    done(outcomes[path])
    return FleetSummary(job=job, outcomes=[outcomes[path] for path, _ in plan],
                        seconds=time.time() - started)
