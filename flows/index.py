"""Index flows: `index` (incremental) and `reindex` (rebuild metadata/index/ from the files)."""

from __future__ import annotations

from prefect import flow, task

from memflow import __version__
from memflow.flows.artifacts import publish_table
from memflow.flows.locking import locked
from memflow.schemas.settings import load_settings
from memflow.tasks.index import run_index, run_reindex

index_task = task(run_index, name="index-workspace")
reindex_task = task(run_reindex, name="reindex-workspace")


def _run(workspace: str, job: str, stage) -> dict:
    settings = load_settings(workspace)
    with locked(settings, job):
        summary = stage(settings)
    print(summary.line())
    publish_table(job, workspace, [summary.model_dump()], f"{job} of {settings.workspace}")
    return summary.model_dump()


@flow(name="index", version=__version__, log_prints=True, persist_result=True)
def index_flow(workspace: str) -> dict:
    """Index what changed under daily/ and digest/; returns the index summary."""
    return _run(workspace, "index", index_task)


@flow(name="reindex", version=__version__, log_prints=True, persist_result=True)
def reindex_flow(workspace: str) -> dict:
    """Delete the derived index and rebuild it from the Markdown files."""
    return _run(workspace, "reindex", reindex_task)
