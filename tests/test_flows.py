"""Real Prefect flow runs against one session-scoped test server."""


import pytest

from memflow.schemas.capture import Item, StructuredNote
from memflow.tasks.capture.model_writer import example_reply
from memflow.tasks.ground.fileops import write_file
from memflow.tasks.ground.lock import workspace_lock

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]  # slow: Prefect flow runs on a server


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
    from memflow.tasks.ground.lock import WorkspaceBusy

    (lay.root / "memflow.toml").write_text("lock_timeout = 0.5\n")
    with workspace_lock(lay.state_dir, "dream"):
        with pytest.raises(WorkspaceBusy):
            index_flow(str(lay.root))


def test_dream_flow_that_consumes_nothing_fails_and_keeps_its_note(model_settings, lay, fake_model):

    from memflow.flows.dream import dream_flow
    from memflow.schemas.dream import Evidence, ExtractResult, Unit
    from memflow.tasks.capture.conversation import auto_memory
    from memflow.tasks.dream.nightly import catalog_path

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
    from memflow.tasks.dream import DreamStalled

    with pytest.raises(DreamStalled, match="consumed none of 1 note"):  # the run fails, loudly
        dream_flow(str(lay.root), date="2026-09-01")
    assert not catalog_path(lay).exists() or result.path not in catalog_path(lay).read_text()
    from memflow.tasks.dream import list_runs

    assert list_runs(lay)[-1]["status"] == "stalled"


def test_flow_results_are_persisted_and_published_as_artifacts(settings, lay, tmp_path):
    """What a deployment's run found is visible in Prefect after the run: the result can be
    read back from the API (persisted), and each flow publishes an artifact."""
    from prefect.artifacts import Artifact
    from prefect.client.orchestration import get_client

    from memflow.flows.artifacts import artifact_key
    from memflow.flows.dream import dream_flow
    from memflow.flows.evaluate import evaluate_flow
    from memflow.flows.index import index_flow
    from memflow.flows.recall import recall_flow

    ws = str(lay.root)
    write_file(lay, "digest/wiki/pg.md", "Postgres listens on 5432.", name="Postgres")
    assert index_flow(ws)["added"] == 1
    state = recall_flow(ws, ["5432", "nothing-matches-this"], return_state=True)
    with get_client(sync_client=True) as client:
        stored = client.read_flow_run(state.state_details.flow_run_id).state
    first, empty = stored.result()  # read back from result storage, not from memory
    assert first.results[0].path == "digest/wiki/pg.md" and empty.results == []

    recall = Artifact.get(artifact_key("recall", ws))
    assert recall.type == "table" and "digest/wiki/pg.md" in recall.data and "no results" in recall.data
    index = Artifact.get(artifact_key("index", ws))
    assert index.type == "table" and '"added": 1' in index.data

    summary = dream_flow(ws, date="2026-09-01")
    dream = Artifact.get(artifact_key("dream", ws))
    assert dream.type == "markdown" and f"# Dream 2026-09-01: {summary.status}" in dream.data

    out = tmp_path / "ev"
    sample = lay.root.parents[0] / "sample.json"
    from memflow.tasks.evaluate.analytics import sample_data

    sample.write_bytes(sample_data().read_bytes())
    result = evaluate_flow(str(sample), str(out), ks=[1, 5], budgets=[500])
    evaluation = Artifact.get(artifact_key("evaluate", str(out)))
    assert evaluation.type == "table" and "budget_recall_any@500" in evaluation.data
    assert f'"memflow": {result["recall_any"]["5"]}' in evaluation.data


def test_artifact_keys_are_valid_and_tell_workspaces_apart(tmp_path):
    import re

    from memflow.flows.artifacts import artifact_key

    a = artifact_key("index", str(tmp_path / "a" / "My Memory_2"))
    b = artifact_key("index", str(tmp_path / "b" / "My Memory_2"))
    assert re.fullmatch(r"[a-z0-9-]+", a) and a.startswith("index-my-memory-2-") and a != b
