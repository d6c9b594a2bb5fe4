"""A settings grid for the evaluation: combinations, each job's settings and workspace, and the
summary of a run (one per combination when there is a grid)."""

from __future__ import annotations

import itertools
import json
import subprocess
from pathlib import Path

from memflow.schemas.settings import Settings
from memflow.tasks.evaluate.eval_report import summarize


def parse_grid(pairs: list[str]) -> dict[str, list[str]]:
    """`["chunk_bytes=500,1000", "dream_x=a"]` -> {"chunk_bytes": ["500", "1000"], ...}."""
    grid: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, values = pair.partition("=")
        if not sep or not key.strip() or not values.strip():
            raise ValueError(f"--grid takes KEY=V1,V2,..., got {pair!r}")
        grid[key.strip()] = [v.strip() for v in values.split(",") if v.strip()]
    return grid


def combinations(grid: dict[str, list]) -> list[dict]:
    """Every combination of the grid's values, in the order given ([{}] without a grid)."""
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


# Settings read only when searching and scoring: jobs that differ in these alone can share one
# built workspace (capture, index and dream do not read them).
RECALL_ONLY = frozenset({
    "vector_weight", "keyword_weight", "rrf_k", "candidate_multiplier", "first_person_queries",
    "digest_weight", "session_weight", "pack_results", "pack_neighbours", "time_weight",
    "recency_weight", "recency_half_life_days", "prf_terms", "prf_docs", "prf_weight", "note_weight",
})


def build_key(settings: Settings) -> str:
    """What a job's built workspace depends on: its settings but the recall-only ones and the
    workspace folder."""
    values = settings.model_dump(mode="json", exclude=set(RECALL_ONLY) | {"workspace"})
    return json.dumps(values, sort_keys=True)


def label(combo: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in combo.items())


def job_settings(settings: Settings, combo: dict, out: Path, sample_id: str) -> Settings:
    """The settings of one (combination, sample) job, validated (values from the command line
    are strings), with its own workspace under `out/workspaces/`."""
    folder = out / "workspaces" / label(combo) / sample_id if combo else out / "workspaces" / sample_id
    return Settings.model_validate({**settings.model_dump(), **combo, "workspace": folder})


def grid_summary(per_combo: list[list[dict]], combos: list[dict], ks: list[int],
                 budgets: list[int]) -> dict:
    """summarize() of the rows without a grid; with one, {"grid": [{"settings", "summary"}]}."""
    if combos == [{}]:
        return summarize(per_combo[0], ks, budgets)
    return {"grid": [{"settings": combo, "summary": summarize(rows, ks, budgets)}
                     for combo, rows in zip(combos, per_combo)],
            "questions": sum(len(rows) for rows in per_combo)}


def run_metadata(data_path: Path, chosen: list[dict], dream: bool, ks: list[int], budgets: list[int],
                 settings: Settings, grid: dict | None, seconds: float) -> dict:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    return {
        "data": str(data_path), "samples": [s["sample_id"] for s in chosen], "dream": dream,
        "ks": ks, "budgets": budgets, "git_commit": commit or None, "grid": grid or {},
        "settings": json.loads(settings.model_dump_json(exclude={"workspace", "model_api_key"})),
        "chat_model": settings.chat_model or None, "embedding_model": settings.embedding_model or None,
        "seconds": round(seconds, 1),
    }
