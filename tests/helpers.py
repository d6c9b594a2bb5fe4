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


def capture_kept_things(settings, rng, things: list[str], places: list[str], names: list[str], start,
                        days: int, per_day, speakers: list[str] | None = None) -> list[str]:
    """Capture `days` generated sessions of "I keep my THING in PLACE with NAME." (one THING
    popped from `things` per statement, so each is said once; `per_day()` statements a day,
    said by `speakers` in turn when given); returns the statements in order."""
    from datetime import timedelta

    from memflow.tasks.capture.conversation import auto_memory

    said = []
    for day in range(days):
        stamp = (start + timedelta(days=day)).isoformat()
        log = []
        for n in range(per_day()):
            text = f"I keep my {things.pop()} in {rng.choice(places).title()} with {rng.choice(names).title()}."
            said.append(text)
            message = {"id": f"d{day}-{n}", "role": "user", "timestamp": f"{stamp}T10:{n:02d}:00Z", "content": text}
            if speakers:
                message["name"] = speakers[n % len(speakers)]
            log.append(message)
        auto_memory(settings, log, f"s{day}")
    return said
