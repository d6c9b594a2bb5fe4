"""Evaluate flow: LoCoMo retrieval evaluation, one task per sample (searches are plain calls)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, task

from memflow import __version__
from memflow.schemas.settings import load_settings
from memflow.tasks.locomo_eval import evaluate_sample, run_evaluation

sample_task = task(evaluate_sample, name="evaluate-sample")


@flow(name="evaluate", version=__version__)
def evaluate_flow(data: str, out: str, ks: list[int] | None = None, budgets: list[int] | None = None,
                  dream: bool = False, samples: list[str] | None = None,
                  settings_overrides: dict | None = None) -> dict:
    """Write questions.parquet and summary.json for `data` under `out`; returns the summary."""
    settings = load_settings(out, **(settings_overrides or {}))
    return run_evaluation(Path(data), Path(out), settings, ks or [1, 5, 10, 20],
                          budgets or [250, 500, 1000, 2000], dream, samples, evaluate=sample_task)
