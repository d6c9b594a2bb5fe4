"""Helpers shared by tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(*args: str, input: str | None = None, cwd: Path | None = None,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the real `memflow` entry point in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "memflow.cli", *args], input=input, capture_output=True,
        text=True, cwd=cwd, env={**os.environ, **(env or {})}, timeout=300,
    )


def reindexed_copy(settings, where: Path):
    """Settings of a copy of the workspace's daily and digest notes at `where`, reindexed from
    scratch: the oracle an incremental index is compared with."""
    import shutil

    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import init_workspace, layout
    from memflow.tasks.index import indexing

    lay = layout(settings)
    other = load_settings(where)
    init_workspace(layout(other))
    for folder in (lay.daily, lay.digest):
        if (lay.root / folder).is_dir():
            shutil.copytree(lay.root / folder, where / folder, dirs_exist_ok=True)
    indexing.run_reindex(other)
    return other
