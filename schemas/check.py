"""Shapes of `memflow check`: what was found in a workspace and what a repair did."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Finding(BaseModel):
    area: str  # notes, index, links, dream, state
    path: str = ""
    detail: str
    repair: str = ""  # what `--repair` does about it ("" when a person has to)
    repaired: bool = False


class CheckReport(BaseModel):
    findings: list[Finding] = Field(default_factory=list)
    checked: dict[str, int] = Field(default_factory=dict)  # area -> items looked at

    @property
    def ok(self) -> bool:
        return all(f.repaired for f in self.findings)
