"""Capture flows: `capture` (a conversation into daily notes) and `capture_resources`."""

from __future__ import annotations

from datetime import date
from functools import partial

from prefect import flow, task

from memflow import __version__
from memflow.flows.artifacts import publish_table
from memflow.flows.locking import locked
from memflow.schemas.capture import AutoMemoryResult, ResourceResult
from memflow.schemas.settings import load_settings
from memflow.tasks.capture import (
    auto_memory,
    auto_resource,
    check_messages,
    read_with_model,
    write_with_model,
)

# Retries at the network edge: invalid model output or a failed call is tried three times.
write_note = task(write_with_model, name="write-note", retries=2, retry_delay_seconds=1)
read_resource = task(read_with_model, name="read-resource", retries=2, retry_delay_seconds=1)
capture_task = task(auto_memory, name="auto-memory")
resources_task = task(auto_resource, name="auto-resource")


@flow(name="capture", version=__version__, persist_result=True)
def capture_flow(workspace: str, messages: list[dict], session_id: str, memory_hint: str = "",
                 day: date | None = None, skip_invalid: bool = False) -> AutoMemoryResult:
    """A conversation -> session log + daily notes (model writer if a chat model is set).
    A conversation with an invalid message is rejected before anything is written."""
    settings = load_settings(workspace)
    check_messages(messages, skip_invalid)
    writer = partial(write_note, settings) if settings.chat_model else None
    with locked(settings, "capture"):
        result = capture_task(settings, messages, session_id, memory_hint, day, writer, skip_invalid)
    publish_table("capture", workspace, [note.model_dump(mode="json") for note in result.notes],
                  f"session {session_id}: +{result.new_messages} message(s)")
    return result


@flow(name="capture_resources", version=__version__, persist_result=True)
def capture_resources_flow(workspace: str) -> ResourceResult:
    """Changed files under resource/ -> daily notes."""
    settings = load_settings(workspace)
    reader = partial(read_resource, settings) if settings.chat_model else None
    with locked(settings, "capture_resources"):
        result = resources_task(settings, reader)
    rows = [{"change": change, "path": path} for change, paths in result.model_dump().items()
            for path in paths]
    publish_table("capture-resources", workspace, rows, f"resources of {settings.workspace}")
    return result
