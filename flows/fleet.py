"""Fleet flows: `fleet_index`, `fleet_dream`, `fleet_capture_resources` run one job over every
workspace under a root (or a list), one task per workspace on a task runner: a local process
pool, or Dask (a `LocalCluster` started for the run, or an existing scheduler's address).
Workspaces travel as paths on shared storage; each task holds its workspace's lock (a Prefect
concurrency limit, then the file), a failed workspace is its row in the report, not the end.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from functools import partial

from prefect import flow, task
from prefect.task_runners import ProcessPoolTaskRunner, TaskRunner, ThreadPoolTaskRunner

from memflow import __version__
from memflow.flows.artifacts import publish_table
from memflow.flows.dream import decide_model, extract_model
from memflow.flows.locking import api_url, locked
from memflow.schemas.fleet import FleetJob, FleetSummary, WorkspaceOutcome
from memflow.schemas.settings import Settings
from memflow.tasks.fleet import find_workspaces, outcome_rows, plan_starts, run_workspace, wait_for_start

RUNNERS = ("local", "dask", "serial")


def task_runner(runner: str = "local", workers: int = 2, address: str = "") -> TaskRunner:
    """`local`: a pool of `workers` processes; `dask`: a `LocalCluster` of `workers` one-thread
    processes started for the run, or the scheduler at `address`; `serial`: one task at a time
    in the flow's own process (one thread: the Markdown parser keeps state in module globals).
    Worker processes report task runs to this process's Prefect API, so one must be configured
    (a temporary server is this process's alone)."""
    if runner not in RUNNERS:
        raise ValueError(f"runner must be one of {', '.join(RUNNERS)}, got {runner!r}")
    if runner == "serial":
        return ThreadPoolTaskRunner(max_workers=1)
    if not api_url():
        raise ValueError("tasks on worker processes report to the flow's Prefect server: start one "
                         "(`prefect server start`) and set PREFECT_API_URL")
    if runner == "local":
        return ProcessPoolTaskRunner(max_workers=workers)
    from prefect_dask import DaskTaskRunner

    if address:
        return DaskTaskRunner(address=address)
    return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1,
                                          "processes": True, "dashboard_address": ":0"})


def fleet_root(root: str = "", workspace: str = "") -> dict:
    """A deploy step of the fleet deployments (prefect.yaml `build:`, id `fleet`): their `root`
    is MEMFLOW_FLEET_ROOT, or else MEMFLOW_WORKSPACE (a workspace as root is a fleet of one);
    `prefect deploy` fails, before the deployment is made, when both are unset."""
    chosen = str(root).strip() or str(workspace).strip()
    if not chosen:
        raise ValueError("MEMFLOW_FLEET_ROOT and MEMFLOW_WORKSPACE are both unset: the fleet deployments "
                         "need the folder holding the workspaces (shared storage, the same path on every "
                         "worker), or one workspace; set one and deploy again")
    return {"root": chosen}


def model_calls(settings: Settings) -> tuple:
    """The dream's model calls as the dream flow's tasks (retries at the network edge)."""
    return partial(extract_model, settings), partial(decide_model, settings)


def one_workspace(job: FleetJob, workspace: str, offset: float, fleet_started: float, api: str,
                  wait: float | None, options: dict) -> WorkspaceOutcome:
    """One workspace on a worker: check it reports to the flow's Prefect API (else its lock
    would be another server's), wait for its start, run the job under the lock."""
    if api_url() != api:
        raise RuntimeError(f"this worker's Prefect API is {api_url() or 'none'}, the flow's {api}: "
                           "its workspace lock would not be the fleet's")
    wait_for_start(fleet_started, offset)
    if job == "dream":
        options = {**options, "model_calls": model_calls}
    return run_workspace(job, workspace, locked, wait, **options)


workspace_task = task(one_workspace, name="fleet-workspace", task_run_name="{job}-{workspace}")


def fan_out(runner: TaskRunner, work, calls: list[dict]) -> list:
    """Submit `work` once per parameter dict on `runner` (which bounds how many run at once);
    returns each call's final state, in order. The runner is used inside the calling flow run, not
    as a subflow, so a plan of 100,000 paths is no flow-run parameter."""
    with runner:
        futures = [runner.submit(work, parameters=call) for call in calls]
        for future in futures:
            future.wait()
        return [future.state for future in futures]


def run_fleet(job: FleetJob, root: str | list[str], runner: str, workers: int, address: str,
              wait: float | None, jitter_seconds: float, options: dict) -> FleetSummary:
    started = time.time()
    workspaces = find_workspaces(root)
    seed = datetime.now(timezone.utc).date().isoformat()
    plan = plan_starts(workspaces, jitter_seconds, seed)
    api = api_url()
    calls = [{"job": job, "workspace": path, "offset": offset, "fleet_started": started, "api": api,
              "wait": wait, "options": options} for path, offset in plan]
    states = fan_out(task_runner(runner, workers, address), workspace_task, calls)
    # a task that failed outright (its worker died, the API check) is that workspace's failure
    outcomes = [state.result() if state.is_completed() else
                WorkspaceOutcome(workspace=path, job=job, status="failed", error=str(state.message or state.name))
                for (path, _), state in zip(plan, states)]
    summary = FleetSummary(job=job, outcomes=outcomes, seconds=time.time() - started)
    print(summary.line())
    name = root if isinstance(root, str) else os.path.commonpath(workspaces or ["."])
    publish_table(f"fleet-{job}", name, outcome_rows(summary),
                  f"{summary.line()} (root {name}, runner {runner}, {workers} worker(s))")
    return summary


@flow(name="fleet-index", version=__version__, log_prints=True, persist_result=True)
def fleet_index(root: str | list[str], runner: str = "local", workers: int = 2, address: str = "",
                wait: float | None = None) -> FleetSummary:
    """Index every workspace under `root` (or each of a list)."""
    return run_fleet("index", root, runner, workers, address, wait, 0.0, {})


@flow(name="fleet-dream", version=__version__, log_prints=True, persist_result=True)
def fleet_dream(root: str | list[str], runner: str = "local", workers: int = 2, address: str = "",
                wait: float | None = None, start_jitter_seconds: float = 0.0, date: str = "",
                max_units: int = 500, max_notes: int = 200, max_seconds: float = 0.0) -> FleetSummary:
    """Dream every workspace under `root`, each starting within `start_jitter_seconds` of the
    run's start (spread by a hash of its path and the night), within each one's budget."""
    options = {"date": date, "max_units": max_units, "max_notes": max_notes, "max_seconds": max_seconds}
    return run_fleet("dream", root, runner, workers, address, wait, start_jitter_seconds, options)


@flow(name="fleet-capture-resources", version=__version__, log_prints=True, persist_result=True)
def fleet_capture_resources(root: str | list[str], runner: str = "local", workers: int = 2,
                            address: str = "", wait: float | None = None) -> FleetSummary:
    """Turn changed resources into daily notes in every workspace under `root`."""
    return run_fleet("resources", root, runner, workers, address, wait, 0.0, {})
