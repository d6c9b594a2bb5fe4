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
