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
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"

from memflow.schemas.settings import load_settings  # noqa: E402
from memflow.tasks.ground.workspace import init_workspace, layout  # noqa: E402


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


@pytest.fixture(scope="session")
def fake_model_server():
    from fakemodel import FakeModel

    server = FakeModel()
    yield server
    server.close()


@pytest.fixture
def fake_model(fake_model_server):
    """The loopback model with a fresh script for each test."""
    fake_model_server.script.clear()
    fake_model_server.requests.clear()
    fake_model_server.default_chat = lambda messages: '{"ok": true}'
    from fakemodel import hashed_embedding

    fake_model_server.embed_fn = hashed_embedding
    return fake_model_server


@pytest.fixture
def model_settings(settings, fake_model):
    """Workspace settings pointing chat and embeddings at the loopback model."""
    return settings.model_copy(update={
        "chat_model": "openai/test-chat", "embedding_model": "openai/test-embed",
        "model_api_base": fake_model.api_base, "model_api_key": "x", "model_timeout": 5.0})
