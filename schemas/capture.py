"""Shapes of capture: the structured daily note (model output or extractive), results, events."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field, field_validator


class Item(BaseModel):
    """One fact, decision, open item, reflection, question or remark, citing the session-log
    lines it came from."""

    text: str = Field(min_length=1)
    who: str = Field("", description="who said it: the speaker's name when the log gives one, "
                                     "else 'Assistant' for the assistant's words, '' for the user's")
    lines: list[int] = Field(min_length=1, description="1-based lines of the session log")

    @field_validator("lines")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if any(n < 1 for n in value):
            raise ValueError("line numbers start at 1")
        return sorted(set(value))


class StructuredNote(BaseModel):
    """What a writer returns for one session and date. `keep=False`: nothing worth keeping.

    The first four sections hold the user's own statements (facts about the user or the world
    as the user states them); `questions` and `others` keep what the user asked and what the
    other side said apart, so no one else's words become the user's facts."""

    keep: bool = True
    name: str = ""
    description: str = ""
    facts: list[Item] = Field(default_factory=list)
    decisions: list[Item] = Field(default_factory=list)
    open_items: list[Item] = Field(default_factory=list)
    reflections: list[Item] = Field(default_factory=list, description="lessons: what to do better next time")
    questions: list[Item] = Field(default_factory=list,
                                  description="the user's questions and requests, as asked: not facts")
    others: list[Item] = Field(default_factory=list,
                               description="what the assistant or another speaker said (`who` names "
                                           "them): never a fact about the user")


class DayNoteResult(BaseModel):
    date: dt.date
    path: str | None  # None when nothing was worth keeping
    created: bool
    modified: bool
    n_messages: int  # log messages of this session and date
    index: str | None  # the day-index path


class AutoMemoryResult(BaseModel):
    """Result of one auto_memory call; the top-level fields describe the latest date touched."""

    session_id: str
    source_conversation: str
    new_messages: int
    date: dt.date | None = None
    path: str | None = None
    created: bool = False
    modified: bool = False
    n_messages: int = 0
    index: str | None = None
    notes: list[DayNoteResult] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)  # invalid messages left out (skip_invalid)
    stopped: int = 0  # new messages not logged because `memflow forget` forgot them (tombstones)
    trimmed: int = 0  # new messages logged without sentences `memflow forget` removed (tombstones)
    secrets_masked: int = 0  # passwords, PINs, keys replaced by `[secret masked]` before writing


class ResourceResult(BaseModel):
    created: list[str] = Field(default_factory=list)
    updated: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    skipped: dict[str, str] = Field(default_factory=dict)  # path -> why its type is not read
    # path -> why its content was not read (binary, undecodable, past a limit, encrypted): said
    # once, and no run reads it until the file changes, so nothing for the user to retry
    refused: dict[str, str] = Field(default_factory=dict)
    # path -> what went wrong where it should have worked (the model, the network, the disk, a
    # file that cannot be opened): the run failed (exit 1, status says so) and retries it
    failed: dict[str, str] = Field(default_factory=dict)
    # resource -> when it is tried again (an earlier model/network failure; not yet due)
    waiting: dict[str, str] = Field(default_factory=dict)
