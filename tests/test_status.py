import json

from helpers import run_cli

from memflow.tasks.capture.conversation import auto_memory
from memflow.tasks.ground.events import read_events
from memflow.tasks.ground.lock import workspace_lock


def say(*texts, day="2026-04-01"):
    return [{"id": f"m{n}", "role": "user", "timestamp": f"{day}T09:{n:02d}:00Z", "content": t}
            for n, t in enumerate(texts)]


def test_status_reports_pending_changes_a_held_lock_and_the_dream_backlog(settings, lay):
    ws = str(lay.root)
    auto_memory(settings, say("Our platform team has 5 engineers in Berlin."), "a")
    assert run_cli("-w", ws, "index").returncode == 0
    auto_memory(settings, say("The staging cluster runs Kubernetes 1.29.", day="2026-04-02"), "b")
    with workspace_lock(lay.state_dir, "dream"):
        res = run_cli("-w", ws, "status", "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["index"]["stale"] and report["index"]["changed_since"] >= 1
    assert report["lock"]["job"] == "dream" and report["lock"]["alive"]
    assert report["dream"]["backlog"] == 2 and report["dream"]["last_run"] is None
    assert report["jobs"]["index"]["result"] == "ok"
    assert report["layers"]["daily"]["chunks"] >= 1 and report["layers"]["session"]["logs"] == 2
    assert report["models"]["chat"]["model"] == ""
    assert any("changed since the last index run" in w for w in report["warnings"])
    text = run_cli("-w", ws, "status").stdout
    assert "dream: backlog 2 note(s)" in text and "lock: free" in text


def test_a_failed_job_run_is_recorded_and_warned(settings, lay):
    ws = str(lay.root)
    (lay.root / "memflow.toml").write_text('chat_model = "openai/x"\nmodel_api_base = "http://127.0.0.1:9/v1"\n'
                                            'model_api_key = "k"\nmodel_timeout = 2\n')
    res = run_cli("-w", ws, "capture", "--session", "s", "-", input=json.dumps(say("I keep bees.")))
    assert res.returncode == 1
    report = json.loads(run_cli("-w", ws, "status", "--json").stdout)
    assert report["jobs"]["capture"]["result"] == "failed"
    assert any("the last capture run failed" in w for w in report["warnings"])


def test_internals_are_never_written_by_file_operations(settings, lay):
    ws = str(lay.root)
    auto_memory(settings, say("I keep bees on the garage roof."), "bees")
    log = (lay.root / "session/dialog/bees.jsonl").read_bytes()
    for args in (["write", "metadata/state/lock.json", "--content", "{}"],
                 ["write", "session/dialog/bees.jsonl", "--content", "x"],
                 ["move", "daily/2026-04-01.md", "metadata/x.md"],
                 ["delete", "session/dialog/bees.jsonl"],
                 ["edit", "session/dialog/bees.jsonl", "--old", "bees", "--new", "wasps"]):
        res = run_cli("-w", ws, *args)
        assert res.returncode == 1 and "refused:" in res.stderr, (args, res.stderr)
    assert not (lay.state_dir / "lock.json").exists()
    assert (lay.root / "session/dialog/bees.jsonl").read_bytes() == log
    assert run_cli("-w", ws, "--wait", "0", "index").returncode == 0  # not left busy


def test_every_file_operation_leaves_an_inbox_event(settings, lay):
    ws = str(lay.root)
    steps = [["write", "digest/wiki/a.md", "--content", "# A\n\nalpha\n"],
             ["edit", "digest/wiki/a.md", "--old", "alpha", "--new", "beta"],
             ["fm", "set", "digest/wiki/a.md", "name=A"],
             ["move", "digest/wiki/a.md", "digest/wiki/b.md"],
             ["delete", "digest/wiki/b.md"]]
    for args in steps:
        res = run_cli("-w", ws, *args)
        assert res.returncode == 0, (args, res.stderr)
    jobs = [e["job"] for e in read_events(lay)]
    assert jobs == ["write", "edit", "fm-set", "move", "delete"]
    assert read_events(lay)[-1]["summary"] == "deleted digest/wiki/b.md"


def test_deep_status_calls_each_model_once(model_settings, lay, fake_model):
    from memflow import api

    fake_model.script.append({"content": "OK"})
    report = api.status(model_settings, deep=True)
    assert report["models"]["chat"]["health"].startswith("ok (")
    assert report["models"]["embedding"]["health"].startswith("ok (")
    assert [r["path"] for r in fake_model.requests] == ["/v1/chat/completions", "/v1/embeddings"]
    fake_model.script.append({"status": 500})
    broken = api.status(model_settings.model_copy(update={"embedding_model": ""}), deep=True)
    assert broken["models"]["chat"]["health"].startswith("failed:")
    assert any("chat model openai/test-chat failed" in w for w in broken["warnings"])


def test_a_successful_reindex_clears_the_failed_index_run(settings, lay):
    """`status` says what is true now: an index run that failed, then a reindex that rebuilt
    everything, is not a failed index any more (a later failed index run is)."""
    ws = str(lay.root)
    auto_memory(settings, say("The staging cluster runs Kubernetes 1.29."), "a")
    try:
        with workspace_lock(lay.state_dir, "index"):
            raise OSError("disk full while writing the snapshot")
    except OSError:
        pass
    report = json.loads(run_cli("-w", ws, "status", "--json").stdout)
    assert any("the last index run failed" in w for w in report["warnings"])
    assert run_cli("-w", ws, "reindex").returncode == 0
    report = json.loads(run_cli("-w", ws, "status", "--json").stdout)
    assert report["jobs"]["reindex"]["result"] == "ok"
    assert not any("index run failed" in w for w in report["warnings"]), report["warnings"]


def test_resources_that_all_failed_make_the_run_failed_in_status(settings, lay):
    """Issue 57: with the model down every resource failed, and status said
    `capture_resources: ok`. The run is recorded failed, with how many and why; status warns;
    the next run that reads them records ok again."""
    ws = str(lay.root)
    for name in ("trip.txt", "plan.txt"):
        (lay.root / "resource" / name).write_text(f"Notes of the {name} kind: Oslo in May.\n")
    (lay.root / "memflow.toml").write_text('chat_model = "openai/x"\nmodel_api_base = "http://127.0.0.1:9/v1"\n'
                                            'model_api_key = "k"\nmodel_timeout = 2\n')
    res = run_cli("-w", ws, "resources")
    assert res.returncode == 1 and "failed: resource/" in res.stderr
    report = json.loads(run_cli("-w", ws, "status", "--json").stdout)
    run = report["jobs"]["capture_resources"]
    assert run["result"] == "failed" and "2 of 2 resource(s) failed" in run["error"], run
    assert any("the last capture_resources run failed" in w for w in report["warnings"])
    text = run_cli("-w", ws, "status").stdout
    assert "capture_resources: ok" not in text
    (lay.root / "memflow.toml").write_text("model_retry_seconds = 0\n")  # offline reader, retried now
    assert run_cli("-w", ws, "resources").returncode == 0
    assert json.loads(run_cli("-w", ws, "status", "--json").stdout)["jobs"]["capture_resources"]["result"] == "ok"


def test_a_refused_binary_resource_is_said_but_the_run_exits_0(settings, lay):
    """Issue 57: one binary file among resources made `resources` exit 1 though the run did all
    it could: re-running cannot read it. It is named on stderr and in status (not read, with
    its reason), the run is ok and exits 0; a failure where reading should work still exits 1."""
    ws = str(lay.root)
    (lay.root / "resource/photo.txt").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0IHDR" + bytes(range(256)) * 4)
    (lay.root / "resource/plan.txt").write_text("Move billing to Postgres 16 in Q3.\n")
    res = run_cli("-w", ws, "resources")
    assert res.returncode == 0, res.stderr
    assert "refused: resource/photo.txt: " in res.stderr and "binary" in res.stderr
    assert "created: daily/" in res.stdout and "refused=1 failed=0" in res.stdout
    report = json.loads(run_cli("-w", ws, "status", "--json").stdout)
    assert "resource/photo.txt" in report["resources"]["not_read"]
    assert report["jobs"]["capture_resources"]["result"] == "ok"
    assert run_cli("-w", ws, "resources").returncode == 0  # said once; still 0
