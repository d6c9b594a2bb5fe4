"""Shapes of a fleet run: one outcome per workspace, and the run's summary."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

FleetJob = Literal["index", "dream", "resources"]


class WorkspaceOutcome(BaseModel):
    """How one workspace's job ended: `ok`, `busy` (another job held its lock) or `failed`."""

    workspace: str
    job: FleetJob
    status: Literal["ok", "busy", "failed"]
    seconds: float = 0.0
    changed: str = ""  # what the job changed, in one line
    backlog: int | None = None  # dream: notes left for the next run
    error: str = ""
    started: str = ""  # UTC, ISO: when the job held the workspace
    finished: str = ""


class FleetSummary(BaseModel):
    job: FleetJob
    outcomes: list[WorkspaceOutcome] = Field(default_factory=list)
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    def line(self) -> str:
        return (f"fleet {self.job}: {len(self.outcomes)} workspace(s), ok={self.count('ok')} "
                f"busy={self.count('busy')} failed={self.count('failed')} seconds={self.seconds:.1f}")
