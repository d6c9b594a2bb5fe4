"""Evaluate flow: LoCoMo retrieval evaluation, one task per sample (searches are plain calls)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, task

from memflow import __version__
from memflow.flows.artifacts import publish_table
from memflow.schemas.settings import load_settings
from memflow.tasks.evaluate import evaluate_sample, metrics_table, run_evaluation

sample_task = task(evaluate_sample, name="evaluate-sample")


@flow(name="evaluate", version=__version__, persist_result=True)
def evaluate_flow(data: str, out: str, ks: list[int] | None = None, budgets: list[int] | None = None,
                  dream: bool = False, samples: list[str] | None = None,
                  settings_overrides: dict | None = None) -> dict:
    """Write questions.parquet and summary.json for `data` under `out`; returns the summary."""
    settings = load_settings(out, **(settings_overrides or {}))
    summary = run_evaluation(Path(data), Path(out), settings, ks or [1, 5, 10, 20],
                             budgets or [250, 500, 1000, 2000], dream, samples, evaluate=sample_task)
    publish_table("evaluate", out, metrics_table(summary),
                  f"LoCoMo retrieval of {Path(data).name}: {summary.get('questions', 0)} questions "
                  f"against raw-turn BM25; full summary in {out}/summary.json")
    return summary
