"""Artifacts: what a flow run found or changed, shown in the Prefect UI beside its persisted
result. Keys name the job and the workspace (`index-memory-3f2a9c`), so each workspace's runs
line up as versions of one artifact even when a fleet shares the server."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from prefect.artifacts import create_markdown_artifact, create_table_artifact


def artifact_key(job: str, workspace: str) -> str:
    """`<job>-<folder name>-<hash of the full path>`, in the lowercase letters, digits and dashes
    Prefect accepts."""
    path = str(Path(workspace).expanduser().resolve())
    slug = re.sub(r"[^a-z0-9]+", "-", Path(path).name.lower()).strip("-")[:40] or "workspace"
    return f"{job}-{slug}-{hashlib.sha256(path.encode()).hexdigest()[:6]}"


def publish_table(job: str, workspace: str, rows: list[dict], description: str) -> None:
    create_table_artifact(rows, key=artifact_key(job, workspace), description=description)


def publish_markdown(job: str, workspace: str, markdown: str, description: str) -> None:
    create_markdown_artifact(markdown, key=artifact_key(job, workspace), description=description)
