"""Real Prefect flow runs against one session-scoped test server."""


import pytest

from memflow.schemas.capture import Item, StructuredNote
from memflow.tasks.fileops import write_file
from memflow.tasks.lock import workspace_lock
from memflow.tasks.model_writer import example_reply

pytestmark = pytest.mark.usefixtures("prefect_server")


def test_index_and_recall_flows(settings, lay):
    from memflow.flows.index import index_flow, reindex_flow
    from memflow.flows.recall import recall_flow

    write_file(lay, "digest/wiki/pg.md", "Postgres listens on 5432.", name="Postgres")
    assert index_flow(str(lay.root))["added"] == 1
    assert reindex_flow(str(lay.root))["added"] == 1
    [response] = recall_flow(str(lay.root), ["5432"])
    assert response.results[0].path == "digest/wiki/pg.md"


def test_capture_flow_retries_invalid_model_output(model_settings, lay, fake_model):
    from memflow.flows.capture import capture_flow

    (lay.root / "memflow.toml").write_text(
        f'chat_model = "openai/test-chat"\nmodel_api_base = "{fake_model.api_base}"\n'
        'model_api_key = "x"\nmodel_timeout = 5\n')
    good = StructuredNote(name="Bike", description="Rides to work.",
                          facts=[Item(text="The user rides a bike to work.", lines=[1])])
    fake_model.script.extend([{"content": "{broken"}, {"content": example_reply(good)}])
    messages = [{"id": "1", "role": "user", "timestamp": "2026-07-01T08:00:00Z",
                 "content": "I ride my bike to work every day."}]
    result = capture_flow(str(lay.root), messages, "flow-1")
    assert result.created and "The user rides a bike to work." in (lay.root / result.path).read_text()
    chats = [r for r in fake_model.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == 2  # one invalid reply, retried once by the task


def test_flow_waits_for_the_lock_then_fails_busy(settings, lay):
    from memflow.flows.index import index_flow
    from memflow.tasks.lock import WorkspaceBusy

    (lay.root / "memflow.toml").write_text("lock_timeout = 0.5\n")
    with workspace_lock(lay.state_dir, "dream"):
        with pytest.raises(WorkspaceBusy):
            index_flow(str(lay.root))
