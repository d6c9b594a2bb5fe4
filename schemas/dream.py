"""Shapes of consolidation: units, the closed union of decisions, topics, run summaries."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

Bucket = Literal["personal", "procedure", "wiki"]


class Evidence(BaseModel):
    """A fact of a daily note: its text and 1-based lines in that note."""

    path: str
    lines: list[int] = Field(min_length=1)
    text: str


class Unit(BaseModel):
    """One piece of knowledge to integrate into exactly one digest node. The offline
    consolidator makes one unit per fact line, with the subject it is about (`subject`, a stable
    key such as `person:jonas:home-and-family`) and the date it was stated."""

    name: str = Field(min_length=1)
    bucket: Bucket
    summary: str = Field(min_length=1)
    paths: list[str] = Field(min_length=1)
    evidence: list[Evidence] = Field(default_factory=list)
    subject: str = ""
    date: str = ""
    split: bool = False  # one of several statements of one line (they share its source link)


class ProfileLine(BaseModel):
    """One line of a profile a chat model writes: what holds now, and the numbers of the facts
    it was given that say so."""

    text: str = Field(min_length=1)
    facts: list[int] = Field(min_length=1)


class ProfileReply(BaseModel):
    lines: list[ProfileLine]


class ExtractResult(BaseModel):
    units: list[Unit]


class Create(BaseModel):
    action: Literal["create"] = "create"
    path: str  # new file under digest/<bucket>/
    name: str
    description: str
    claims: list[str] = Field(min_length=1)
    related: list[str] = Field(default_factory=list)  # existing digest nodes to link in the prose
    continues: str = ""  # the full node of the same subject this part continues (frontmatter)


class Corroborate(BaseModel):
    action: Literal["corroborate"] = "corroborate"
    path: str
    fact: str = ""  # the node's fact line the unit confirms (its sources are added there)
    reason: str = ""


class Refine(BaseModel):
    action: Literal["refine"] = "refine"
    path: str
    additions: list[str] = Field(min_length=1)  # new facts about the node's subject
    before: str = ""  # a fact line the additions go above (a newer statement of part of it)


class Correct(BaseModel):
    action: Literal["correct"] = "correct"
    path: str
    old: str  # the claim as it stands in the node
    new: str  # the corrected claim
    reason: str = ""


Decision = Annotated[Create | Corroborate | Refine | Correct, Field(discriminator="action")]


class DecisionReply(BaseModel):
    decision: Decision


class Topic(BaseModel):
    title: str
    reason: str
    evidence: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    paths: list[str] = Field(default_factory=list)


class TopicReply(BaseModel):
    topics: list[Topic]


class ActionRecord(BaseModel):
    unit: str
    action: str
    path: str
    created: bool
    pre_sha256: str | None = None
    post_sha256: str | None = None


class DreamSummary(BaseModel):
    """What a run did. `notes_left` is the backlog: notes pending after this run."""

    run_id: str | None = None
    status: str = "ok"  # "ok", "no change", "partial"
    date: str = ""
    notes_read: int = 0
    units: int = 0
    actions: dict[str, int] = Field(default_factory=dict)
    files_written: list[str] = Field(default_factory=list)
    failed_units: dict[str, str] = Field(default_factory=dict)
    notes_consumed: int = 0
    notes_left: int = 0
    topics: list[str] = Field(default_factory=list)
    skipped: dict[str, str] = Field(default_factory=dict)  # files left out (path -> one-line reason)


class DreamPlan(BaseModel):
    """What extract decided: the notes read (path, sha256 seen before the run) and the units."""

    date: str
    run_id: str
    selected: list[tuple[str, str]]
    notes_left: int = 0
    units: list[Unit] = Field(default_factory=list)
    origins: list[str] = Field(default_factory=list)  # the note each unit came from
    max_units: int = 5
    skipped: dict[str, str] = Field(default_factory=dict)  # files left out (path -> one-line reason)
