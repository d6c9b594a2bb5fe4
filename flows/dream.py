"""Dream flow: extract -> integrate (per unit) -> topics -> finish, holding the workspace lock."""

from __future__ import annotations

import random
import time
from datetime import date as date_type
from functools import partial

from prefect import flow, task

from memflow import __version__
from memflow.schemas.dream import DreamSummary
from memflow.schemas.settings import load_settings
from memflow.tasks.capture import today
from memflow.tasks.dream import run_dream
from memflow.tasks.lock import workspace_lock
from memflow.tasks.model_dream import decide_with_model, extract_with_model
from memflow.tasks.workspace import layout

extract_task = task(extract_with_model, name="extract-units", retries=2, retry_delay_seconds=1)
decide_task = task(decide_with_model, name="decide-unit", retries=2, retry_delay_seconds=1)
dream_task = task(run_dream, name="consolidate")


@flow(name="dream", version=__version__)
def dream_flow(workspace: str, date: str = "", hint: str = "", max_units: int = 5,
               max_notes: int = 50, topic_count: int = 3, topic_diversity_days: int = 7,
               start_jitter_seconds: int = 0) -> DreamSummary:
    """Consolidate new daily notes up to `date` (default today in the workspace timezone)."""
    if start_jitter_seconds > 0:  # Prefect schedules have no jitter
        time.sleep(random.uniform(0, start_jitter_seconds))
    settings = load_settings(workspace)
    day = date_type.fromisoformat(date) if date else today(settings)
    extract = decide = None
    if settings.chat_model:
        extract, decide = partial(extract_task, settings), partial(decide_task, settings)
    with workspace_lock(layout(settings).state_dir, "dream", wait=settings.lock_timeout):
        return dream_task(settings, day, hint, max_units, max_notes, topic_count,
                          topic_diversity_days, extract, decide)
