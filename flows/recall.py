"""Recall flow: batch searches for deployments (interactive search calls the function directly)."""

from __future__ import annotations

from prefect import flow, task

from memflow import __version__
from memflow.flows.artifacts import publish_table
from memflow.schemas.recall import Filters, SearchResponse
from memflow.schemas.settings import Settings, load_settings
from memflow.tasks.recall import results_table, search


def search_batch(settings: Settings, queries: list[str], limit: int, filters: Filters,
                 min_score: float) -> list[SearchResponse]:
    return [search(settings, q, limit, min_score, filters) for q in queries]


search_task = task(search_batch, name="search-batch")


@flow(name="recall", version=__version__, persist_result=True)
def recall_flow(workspace: str, queries: list[str], limit: int = 5, layer: str | None = None,
                prefix: str | None = None, min_score: float = 0.0) -> list[SearchResponse]:
    """Run a batch of searches in one task; returns one SearchResponse per query."""
    settings = load_settings(workspace)
    responses = search_task(settings, queries, limit, Filters(layer=layer, prefix=prefix), min_score)
    publish_table("recall", workspace, results_table(queries, responses),
                  f"{len(queries)} search(es) in {settings.workspace}")
    return responses
