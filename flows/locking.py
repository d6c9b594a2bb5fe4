"""The workspace lock of flows: with a Prefect API configured, a slot of the workspace's global
concurrency limit (limit 1, created when missing) held for the whole job, then the file lock
recorded under it; without one, the file lock alone (memflow.tasks.ground.lock).

A slot that cannot be had within the wait is `WorkspaceBusy`, never a run without the lock: the
limit is created before it is asked for and asked for with `strict=True` (Prefect's default
skips a missing limit). A slot is a lease the server ends 120 s after its holder stops renewing
it (a machine that died), and a holder that cannot renew is cancelled.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectAlreadyExists
from prefect.settings import PREFECT_API_URL

from memflow.schemas.settings import Settings
from memflow.tasks.ground.lock import WorkspaceBusy, limit_name, read_holder, workspace_lock
from memflow.tasks.ground.workspace import layout

LEASE_SECONDS = 120  # the server's minimum renewal is 60 s


def api_url() -> str:
    """The Prefect API this process talks to ('' when flows use a temporary local server)."""
    return PREFECT_API_URL.value() or ""


def ensure_limit(name: str) -> None:
    """Create the workspace's limit with one slot (or set it back to one)."""
    with get_client(sync_client=True) as client:
        try:
            client.upsert_global_concurrency_limit_by_name(name, 1)
        except ObjectAlreadyExists:  # another worker created it between our read and create
            pass


def _enter(stack: ExitStack, name: str, wait: float | None) -> None:
    """Take the slot: `wait` None asks once (the server answers 423 when it is held), a number
    keeps asking for up to that many seconds."""
    stack.enter_context(concurrency(name, occupy=1, strict=True, lease_duration=LEASE_SECONDS,
                                    timeout_seconds=wait, max_retries=0 if wait is None else None))


@contextmanager
def slot(name: str, wait: float, state_dir) -> Iterator[None]:
    """Hold the one slot of limit `name`, waiting up to `wait` seconds, else WorkspaceBusy
    naming the holder the lock file names (or the limit).

    The first ask has no timeout of its own: a free slot is taken however slow the server or a
    fresh worker's client is to answer (a timed first ask reported free workspaces busy on a
    loaded machine); only a held slot starts the `wait`."""
    from prefect.concurrency._asyncio import ConcurrencySlotAcquisitionError

    ensure_limit(name)
    with ExitStack() as stack:
        try:
            try:
                _enter(stack, name, None)
            except ConcurrencySlotAcquisitionError as exc:
                if "423" not in str(exc) or wait <= 0:
                    raise
                _enter(stack, name, wait)
        except (TimeoutError, ConcurrencySlotAcquisitionError) as exc:
            if not isinstance(exc, TimeoutError) and "423" not in str(exc):
                raise  # anything but "locked" is an error, not a busy workspace
            holder = read_holder(state_dir) or {"job": f"a job under concurrency limit {name}",
                                                "host": "another worker"}
            raise WorkspaceBusy(holder) from exc
        yield


@contextmanager
def locked(settings: Settings, job: str, wait: float | None = None, record: bool = True) -> Iterator[str]:
    """Hold the workspace for `job` (waiting `wait`, default `lock_timeout`); see the module."""
    wait = settings.lock_timeout if wait is None else wait
    state_dir = layout(settings).state_dir
    if not api_url():
        with workspace_lock(state_dir, job, wait=wait, record=record) as token:
            yield token
        return
    name = limit_name(settings.workspace)
    started = time.monotonic()
    with slot(name, wait, state_dir):
        left = max(0.0, wait - (time.monotonic() - started))
        with workspace_lock(state_dir, job, wait=left, record=record, limit=name) as token:
            yield token
