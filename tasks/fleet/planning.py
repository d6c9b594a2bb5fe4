"""When each workspace starts (jitter spread over a window) and the report of a fleet run."""

from __future__ import annotations

import hashlib
import time

from memflow.schemas.fleet import FleetSummary


def plan_starts(workspaces: list[str], jitter_seconds: float, seed: str = "") -> list[tuple[str, float]]:
    """(workspace, start offset in seconds), earliest first. Each offset is a hash of the seed
    (e.g. the night's date) and the path, spread evenly over [0, jitter_seconds): stable within a
    night, different the next, the same on every worker."""
    def offset(path: str) -> float:
        digest = hashlib.sha256(f"{seed}\0{path}".encode()).digest()
        return jitter_seconds * int.from_bytes(digest[:8], "big") / 2**64 if jitter_seconds > 0 else 0.0
    return sorted(((w, offset(w)) for w in workspaces), key=lambda pair: (pair[1], pair[0]))


def wait_for_start(fleet_started: float, offset: float) -> float:
    """Sleep until `offset` seconds after the fleet started (epoch seconds); returns the sleep.
    A workspace whose turn came while it queued starts at once."""
    delay = max(0.0, fleet_started + offset - time.time())
    time.sleep(delay)
    return delay


def outcome_rows(summary: FleetSummary) -> list[dict]:
    """The report: one row per workspace (workspace, status, seconds, changed, backlog, error)."""
    return [{"workspace": o.workspace, "status": o.status, "seconds": round(o.seconds, 2),
             "changed": o.changed, "backlog": "-" if o.backlog is None else o.backlog,
             "error": o.error} for o in summary.outcomes]
