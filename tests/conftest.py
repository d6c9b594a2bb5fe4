"""Shared fixtures: a workspace in tmp_path, one Prefect test server per session, and a
loopback OpenAI-compatible model server (the only faked seam)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.pop("MEMFLOW_WORKSPACE", None)

from memflow.schemas.settings import load_settings  # noqa: E402
from memflow.tasks.workspace import init_workspace, layout  # noqa: E402


@pytest.fixture
def settings(tmp_path: Path):
    settings = load_settings(tmp_path / "ws")
    init_workspace(layout(settings))
    return settings


@pytest.fixture
def lay(settings):
    return layout(settings)


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory):
    """One Prefect test server for the whole session (started only when a test asks)."""
    os.environ["PREFECT_HOME"] = str(tmp_path_factory.mktemp("prefect-home"))
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield
