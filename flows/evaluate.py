"""Evaluate flow: LoCoMo retrieval evaluation, one task per sample (and grid setting); with a
runner (`local` processes or `dask`) the samples run in parallel, shipped as data and settings
(each builds its own workspace under `out/workspaces/`), never as built indexes."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, task

from memflow import __version__
from memflow.flows.artifacts import publish_table
from memflow.schemas.settings import load_settings
from memflow.tasks.evaluate import evaluate_job, evaluate_sample, metrics_table, run_evaluation, sample_data

sample_task = task(evaluate_sample, name="evaluate-sample")
job_task = task(evaluate_job, name="evaluate-job")


@flow(name="evaluate", version=__version__, persist_result=True)
def evaluate_flow(data: str, out: str, ks: list[int] | None = None, budgets: list[int] | None = None,
                  dream: bool = False, samples: list[str] | None = None,
                  settings_overrides: dict | None = None, grid: dict[str, list] | None = None,
                  runner: str = "", workers: int = 2, address: str = "") -> dict:
    """Write questions.parquet and summary.json for `data` under `out`; returns the summary.
    An empty `data` is the shipped sample; `runner` '' runs the samples one after another in
    this process."""
    data = data or str(sample_data())
    settings = load_settings(out, **(settings_overrides or {}))
    map_jobs = None
    if runner:
        from memflow.flows.fleet import fan_out, task_runner

        def map_jobs(jobs, ks, budgets, dream):  # samples travel as the data file's path and an id
            calls = [{"data_path": data, "sample_id": sample["sample_id"], "settings": job, "ks": ks,
                      "budgets": budgets, "dream": dream} for sample, job in jobs]
            return [state.result() for state in fan_out(task_runner(runner, workers, address), job_task, calls)]
    summary = run_evaluation(Path(data), Path(out), settings, ks or [1, 5, 10, 20],
                             budgets or [250, 500, 1000, 2000], dream, samples, evaluate=sample_task,
                             grid=grid, map_jobs=map_jobs)
    parts = summary.get("grid") or [{"settings": {}, "summary": summary}]
    rows = [{"settings": ",".join(f"{k}={v}" for k, v in p["settings"].items()) or "-", **row}
            for p in parts for row in metrics_table(p["summary"])]
    publish_table("evaluate", out, rows,
                  f"LoCoMo retrieval of {Path(data).name}: {summary.get('questions', 0)} questions "
                  f"against raw-turn BM25; full summary in {out}/summary.json")
    return summary
