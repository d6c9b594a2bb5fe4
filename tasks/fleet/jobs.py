"""One workspace's job in a fleet run: load its settings, hold its lock, run the stage, and end
as an outcome. A failed workspace is reported (and logged with its traceback), never a reason
to stop the fleet; a busy one is reported busy, never run without the lock."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import date as date_type
from datetime import datetime, timezone
from functools import partial

from memflow.schemas.fleet import FleetJob, WorkspaceOutcome
from memflow.schemas.settings import Settings, load_settings
from memflow.tasks.capture import auto_resource, read_with_model
from memflow.tasks.dream import decide_with_model, extract_with_model, run_dream
from memflow.tasks.ground.lock import WorkspaceBusy
from memflow.tasks.ground.workspace import today
from memflow.tasks.index import run_index

log = logging.getLogger("memflow.fleet")
# (settings, job name, wait seconds) -> a context manager holding the workspace for the job
Lock = Callable[[Settings, str, float], AbstractContextManager]
# settings -> (extract, decide): the dream's model calls (the flow's carry retries)
ModelCalls = Callable[[Settings], tuple[Callable, Callable]]


def plain_model_calls(settings: Settings) -> tuple[Callable, Callable]:
    return partial(extract_with_model, settings), partial(decide_with_model, settings)


def _index(settings: Settings, **_) -> tuple[str, int | None, str]:
    summary = run_index(settings)  # a file left out is in the line (skipped=N), as in the CLI
    return summary.line().removeprefix("indexed: "), None, ""


def _dream(settings: Settings, date: str = "", max_units: int = 500, max_notes: int = 200,
           max_seconds: float = 0.0, model_calls: ModelCalls = plain_model_calls, **_) -> tuple[str, int | None, str]:
    day = date_type.fromisoformat(date) if date else today(settings)
    extract, decide = model_calls(settings) if settings.chat_model else (None, None)
    summary = run_dream(settings, day, max_units=max_units, max_notes=max_notes, extract=extract,
                        decide=decide, max_seconds=max_seconds)
    actions = " ".join(f"{k}={v}" for k, v in sorted(summary.actions.items()))
    failed = f", {len(summary.failed_units)} unit(s) failed (notes kept)" if summary.failed_units else ""
    return (f"{summary.status}: {summary.notes_consumed} note(s) consumed" + (f", {actions}" if actions else "")
            + failed, summary.notes_left, "")


def _resources(settings: Settings, **_) -> tuple[str, int | None, str]:
    result = auto_resource(settings, partial(read_with_model, settings) if settings.chat_model else None)
    changed = (f"created={len(result.created)} updated={len(result.updated)} "
               f"removed={len(result.removed)} skipped={len(result.skipped)}")
    failed = "; ".join(f"{path}: {error}" for path, error in sorted(result.failed.items()))
    return changed, len(result.failed), failed


JOBS = {"index": _index, "dream": _dream, "resources": _resources}
LOCK_JOB = {"index": "index", "dream": "dream", "resources": "capture_resources"}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def run_workspace(job: FleetJob, workspace: str, lock: Lock, wait: float | None = None,
                  **options) -> WorkspaceOutcome:
    """Run `job` on one workspace under `lock`, waiting `wait` seconds for it (default the
    workspace's `lock_wait`); dream takes `date`, `max_units`, `max_notes`, `max_seconds`,
    `model_calls`. As in the CLI, files left out of the index and dream units that failed are
    said in `changed` (they are retried), and resources that failed make the outcome `failed`.
    A fleet already runs one workspace per worker, so an index run here parses its files in one
    process unless the workspace's settings name `index_workers`."""
    started = time.monotonic()
    outcome = WorkspaceOutcome(workspace=workspace, job=job, status="ok")
    try:
        settings = load_settings(workspace)
        if "index_workers" not in settings.model_fields_set:  # the fleet runs workspaces side by side
            settings = settings.model_copy(update={"index_workers": 1})
        with lock(settings, LOCK_JOB[job], settings.lock_wait if wait is None else wait):
            outcome.started = _now()
            outcome.changed, outcome.backlog, problem = JOBS[job](settings, **options)
            outcome.finished = _now()
        if problem:
            outcome.status, outcome.error = "failed", problem
    except WorkspaceBusy as busy:
        outcome.status, outcome.error = "busy", str(busy)
    except Exception as exc:  # noqa: BLE001 - the fleet boundary: one workspace's failure is its row
        log.exception("fleet %s of %s failed", job, workspace)
        outcome.status, outcome.error = "failed", f"{type(exc).__name__}: {str(exc)[:500]}"
    outcome.seconds = time.monotonic() - started
    return outcome
