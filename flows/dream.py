"""Dream flow: extract -> integrate (one task per unit) -> topics -> finish, holding the lock."""

from __future__ import annotations

import random
import time
from datetime import date as date_type
from functools import partial

from prefect import flow, task

from memflow import __version__
from memflow.flows.artifacts import publish_markdown
from memflow.flows.locking import locked
from memflow.schemas.dream import ActionRecord, DreamSummary
from memflow.schemas.settings import Settings, load_settings
from memflow.tasks.dream import (
    decide_with_model,
    extract_stage,
    extract_with_model,
    finish_stage,
    integrate_stage,
    integrate_within,
    nothing_to_do,
    summary_markdown,
    topics_stage,
)
from memflow.tasks.ground.workspace import today

# Retries at the network edge only: the model calls.
extract_model = task(extract_with_model, name="extract-units-model", retries=2, retry_delay_seconds=1)
decide_model = task(decide_with_model, name="decide-model", retries=2, retry_delay_seconds=1)
extract = task(extract_stage, name="extract")
integrate = task(integrate_stage, name="integrate")
topics = task(topics_stage, name="topics")
finish = task(finish_stage, name="finish")


@flow(name="dream", version=__version__, persist_result=True)
def dream_flow(workspace: str, date: str = "", hint: str = "", max_units: int = 500,
               max_notes: int = 200, topic_count: int = 3, topic_diversity_days: int = 7,
               start_jitter_seconds: int = 0, max_seconds: float = 0.0) -> DreamSummary:
    """Consolidate pending daily notes up to `date` (default today in the workspace timezone)
    within the run's budget; what is left is the backlog (`notes_left`) of the next run."""
    if start_jitter_seconds > 0:  # Prefect schedules have no jitter
        time.sleep(random.uniform(0, start_jitter_seconds))
    settings = load_settings(workspace)
    day = date_type.fromisoformat(date) if date else today(settings)
    with locked(settings, "dream"):
        summary = _consolidate(settings, day, hint, max_units, max_notes, topic_count,
                               topic_diversity_days, max_seconds)
    publish_markdown("dream", workspace, summary_markdown(summary),
                     f"dream of {settings.workspace} up to {day}: {summary.status}")
    return summary


def _consolidate(settings: Settings, day: date_type, hint: str, max_units: int, max_notes: int,
                 topic_count: int, topic_diversity_days: int, max_seconds: float) -> DreamSummary:
    started = time.monotonic()
    use_model = bool(settings.chat_model)
    extract_fn = partial(extract_model, settings, hint=hint) if use_model else None
    decide_fn = partial(decide_model, settings) if use_model else None
    plan = extract(settings, day, max_notes, max_units, extract_fn)
    if (quiet := nothing_to_do(settings, day, plan)) is not None:
        return quiet

    def one(unit) -> ActionRecord | str:
        state = integrate(settings, plan.run_id, unit, decide_fn, return_state=True)
        # A failed unit is recorded in the summary and its notes stay for the next run.
        return state.result() if state.is_completed() else str(state.message or "failed")

    records = integrate_within(plan.units, one, started, max_seconds)
    interests = topics(settings, plan, topic_count, topic_diversity_days)
    return finish(settings, plan, records, interests)
