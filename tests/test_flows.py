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


def test_dream_flow_records_a_failed_unit_and_keeps_its_note(model_settings, lay, fake_model):
    from datetime import date

    from memflow.flows.dream import dream_flow
    from memflow.schemas.dream import Evidence, ExtractResult, Unit
    from memflow.tasks.capture import auto_memory
    from memflow.tasks.dream import catalog_path

    offline = model_settings.model_copy(update={"chat_model": "", "embedding_model": ""})
    result = auto_memory(offline, [{"id": "1", "role": "user", "timestamp": "2026-09-01T08:00:00Z",
                                    "content": "The backup disk is replaced every two years."}], "df")
    (lay.root / "memflow.toml").write_text(
        f'chat_model = "openai/test-chat"\nmodel_api_base = "{fake_model.api_base}"\n'
        'model_api_key = "x"\nmodel_timeout = 5\n')
    unit = Unit(name="Backups", bucket="wiki", summary="Backup disks are replaced every two years.",
                paths=[result.path], evidence=[Evidence(path=result.path, lines=[12], text="x")])
    fake_model.script.append({"content": ExtractResult(units=[unit]).model_dump_json()})
    fake_model.script.extend([{"content": '{"decision": {"action": "merge"}}'}] * 3)
    summary = dream_flow(str(lay.root), date="2026-09-01")
    assert summary.status == "partial" and "Backups" in summary.failed_units
    assert not catalog_path(lay).exists() or result.path not in catalog_path(lay).read_text()
