"""Fleets: workspaces found under a root, a dream fanned out on a two-worker Dask LocalCluster
through the Prefect test server, and the workspace lock as a Prefect concurrency limit."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest

from memflow.schemas.settings import load_settings
from memflow.tasks.capture import auto_memory
from memflow.tasks.fleet import find_workspaces, plan_starts
from memflow.tasks.ground.lock import WorkspaceBusy, acquire, limit_name, release
from memflow.tasks.ground.workspace import init_workspace, layout

pytestmark = pytest.mark.slow  # fleets on Dask

FACTS = ["The staging database moved to port 6543 last week.",
         "Our on-call rotation switches every Tuesday at noon.",
         "I keep the release checklist in the ops wiki under Deploys.",
         "The nightly backup job writes to the cold bucket in Frankfurt.",
         "My team lead asked for weekly reports every Friday.",
         "The payments service retries a failed charge three times."]


def make_workspace(root: Path, name: str, fact: str, day: str = "2026-08-03") -> Path:
    settings = load_settings(root / name)
    init_workspace(layout(settings))
    auto_memory(settings, [{"id": "1", "role": "user", "timestamp": f"{day}T08:00:00Z",
                            "content": fact}], f"s-{name}")
    return settings.workspace


def test_workspaces_are_found_by_layout_or_memflow_toml_and_not_inside_each_other(tmp_path):
    init_workspace(layout(load_settings(tmp_path / "agents" / "a1")))
    (tmp_path / "agents" / "a2" / "daily").mkdir(parents=True)
    (tmp_path / "agents" / "a2" / "session").mkdir()
    (tmp_path / "agents" / "qp").mkdir()
    (tmp_path / "agents" / "qp" / "memflow.toml").write_text('daily_dir = "memory"\n')
    init_workspace(layout(load_settings(tmp_path / "agents" / "a1" / "daily" / "nested")))
    (tmp_path / "agents" / "not-one" / "notes").mkdir(parents=True)
    init_workspace(layout(load_settings(tmp_path / "agents" / ".trash" / "old")))
    os.symlink(tmp_path / "agents" / "a1", tmp_path / "agents" / "link-to-a1")
    found = find_workspaces(tmp_path)
    assert [Path(p).name for p in found] == ["a1", "a2", "qp"]
    assert find_workspaces(tmp_path / "agents" / "a1") == [str((tmp_path / "agents" / "a1").resolve())]
    with pytest.raises(FileNotFoundError):
        find_workspaces([str(tmp_path / "agents" / "a1"), str(tmp_path / "missing")])


def test_jitter_spreads_starts_stably_per_night():
    spaces = [f"/fleet/ws-{i}" for i in range(200)]
    plan = plan_starts(spaces, 600, "2026-08-03")
    offsets = [offset for _, offset in plan]
    assert offsets == sorted(offsets) and all(0 <= o < 600 for o in offsets)
    assert sum(o < 300 for o in offsets) in range(70, 131)  # spread, not bunched
    assert plan == plan_starts(list(reversed(spaces)), 600, "2026-08-03")
    assert plan != plan_starts(spaces, 600, "2026-08-04")
    assert {o for _, o in plan_starts(spaces, 0, "x")} == {0.0}


def test_a_lock_taken_under_the_limit_we_hold_is_stale_on_any_host_and_no_other_is(lay):
    name = limit_name(lay.root)
    assert name == limit_name(lay.root / "." ) and name.startswith("memflow-workspace-")
    other = {"job": "dream", "pid": 1, "host": "worker-b", "token": "t", "since": "2026-08-03"}
    lock = lay.state_dir / "lock.json"
    lock.write_text(json.dumps(other))
    with pytest.raises(WorkspaceBusy, match="pid 1 on worker-b"):
        acquire(lay.state_dir, "index", limit=name)  # taken without the limit: never taken over
    lock.write_text(json.dumps({**other, "limit": "memflow-workspace-another-000000000000"}))
    with pytest.raises(WorkspaceBusy):
        acquire(lay.state_dir, "index", limit=name)
    lock.write_text(json.dumps({**other, "limit": name}))
    with pytest.raises(WorkspaceBusy):
        acquire(lay.state_dir, "index")  # a caller without the slot cannot judge the lease
    token = acquire(lay.state_dir, "index", limit=name)  # its holder's lease ended: ours now
    held = json.loads(lock.read_text())
    assert held["limit"] == name and held["host"] == socket.gethostname() and held["pid"] == os.getpid()
    release(lay.state_dir, token)


@pytest.mark.usefixtures("prefect_server")
def test_fleet_dream_on_a_two_worker_dask_cluster_reports_every_workspace(tmp_path):
    from prefect.artifacts import Artifact

    from memflow.flows.artifacts import artifact_key
    from memflow.flows.fleet import fleet_dream

    root = tmp_path / "fleet"
    spaces = [make_workspace(root, f"agent-{i}", fact) for i, fact in enumerate(FACTS[:5])]
    broken = make_workspace(root, "agent-broken", FACTS[5])
    (broken / "memflow.toml").write_text("chunk_bytes = 5\n")  # an invalid setting
    summary = fleet_dream(str(root), runner="dask", workers=2, date="2026-08-03")
    by_name = {Path(o.workspace).name: o for o in summary.outcomes}
    assert len(by_name) == 6
    assert by_name["agent-broken"].status == "failed" and "chunk_bytes" in by_name["agent-broken"].error
    for ws, fact in zip(spaces, FACTS):
        outcome = by_name[ws.name]
        assert outcome.status == "ok" and outcome.backlog == 0 and "1 note(s) consumed" in outcome.changed
        catalog = json.loads((ws / "metadata/state/dream_catalog.json").read_text())
        assert catalog, ws  # the dream catalog advanced
        assert any(fact in p.read_text() for p in (ws / "digest").rglob("*.md"))
    table = Artifact.get(artifact_key("fleet-dream", str(root))).data
    assert all(f"agent-{i}" in table for i in range(5)) and "agent-broken" in table
    assert table.count('"status": "ok"') == 5 and table.count('"status": "failed"') == 1


@pytest.mark.usefixtures("prefect_server")
def test_two_fleets_on_one_workspace_are_serialised_by_its_concurrency_limit(tmp_path):
    from prefect.client.orchestration import get_client

    from memflow.flows.fleet import fleet_dream, fleet_index

    ws = tmp_path / "fleet" / "shared"
    settings = load_settings(ws)
    init_workspace(layout(settings))
    for day in range(1, 9):  # enough notes that both jobs take a while
        auto_memory(settings, [{"id": str(day), "role": "user", "timestamp": f"2026-08-{day:02d}T08:00:00Z",
                                "content": f"{FACTS[day % 6]} Noted on day {day}."}], f"s{day}")
    results = {}
    flows = {"index": lambda: fleet_index([str(ws)], runner="serial", wait=120),
             "dream": lambda: fleet_dream([str(ws)], runner="serial", wait=120, date="2026-08-31")}
    threads = [threading.Thread(target=lambda k=k: results.__setitem__(k, flows[k]())) for k in flows]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    [index], [dream] = results["index"].outcomes, results["dream"].outcomes
    assert {index.status, dream.status} <= {"ok", "busy"} and "ok" in {index.status, dream.status}
    ran = sorted((o for o in (index, dream) if o.status == "ok"), key=lambda o: o.started)
    for first, second in zip(ran, ran[1:]):
        assert first.finished <= second.started  # one after the other, never interleaved
    with get_client(sync_client=True) as client:
        limit = client.read_global_concurrency_limit_by_name(limit_name(ws))
    assert limit.limit == 1 and limit.active_slots == 0  # created by the first to ask, free again


@pytest.mark.usefixtures("prefect_server")
def test_a_workspace_whose_slot_another_worker_holds_is_busy_and_untouched(tmp_path):
    """The lock file is free (the holder runs on another machine): the limit alone refuses."""
    from prefect.concurrency.sync import concurrency

    from memflow.flows.fleet import fleet_index
    from memflow.flows.locking import ensure_limit

    ws = make_workspace(tmp_path / "fleet", "held", FACTS[0])
    name = limit_name(ws)
    ensure_limit(name)
    with concurrency(name, occupy=1, strict=True):
        summary = fleet_index(str(ws), runner="serial", wait=0.5)
    [outcome] = summary.outcomes
    assert outcome.status == "busy" and name in outcome.error
    assert not (ws / "metadata/state/lock.json").exists()
    assert not list((ws / "metadata/index").iterdir())  # nothing indexed


def test_every_deployment_names_a_flow_and_only_its_parameters():
    import importlib
    import inspect

    import yaml

    config = yaml.safe_load((Path(__file__).resolve().parents[1] / "prefect.yaml").read_text())
    names = set()
    for deployment in config["deployments"]:
        path, _, name = deployment["entrypoint"].partition(":")
        module = importlib.import_module("memflow." + path.removesuffix(".py").replace("/", "."))
        signature = inspect.signature(getattr(module, name).fn)
        assert set(deployment.get("parameters", {})) <= set(signature.parameters), deployment["name"]
        names.add(deployment["name"])
    assert {"fleet-dream-nightly", "fleet-index", "dream-nightly"} <= names


def test_an_evaluation_grid_writes_one_parquet_with_a_column_per_setting(tmp_path):
    import polars as pl

    from memflow.tasks.evaluate import parse_grid, run_evaluation
    from memflow.tasks.evaluate.analytics import sample_data

    grid = parse_grid(["chunk_bytes=500,1000", "pack_results=true"])
    out = tmp_path / "ev"
    summary = run_evaluation(sample_data(), out, load_settings(out), [1, 5], [500], grid=grid)
    frame = pl.read_parquet(out / "questions.parquet")
    assert sorted(frame["chunk_bytes"].unique().to_list()) == [500, 1000]
    assert frame["pack_results"].unique().to_list() == [True]
    per = frame.group_by("chunk_bytes").len().sort("chunk_bytes")["len"].to_list()
    assert per[0] == per[1] == summary["questions"] // 2
    assert [part["settings"] for part in summary["grid"]] == [
        {"chunk_bytes": "500", "pack_results": "true"}, {"chunk_bytes": "1000", "pack_results": "true"}]
    assert all("recall_any" in part["summary"] for part in summary["grid"])
    assert (out / "workspaces" / "chunk_bytes=500,pack_results=true").is_dir()
    with pytest.raises(ValueError, match="KEY=V1,V2"):
        parse_grid(["chunk_bytes"])


def test_a_grid_over_recall_settings_builds_each_sample_once_and_scores_as_separate_runs(tmp_path):
    from memflow.tasks.evaluate import parse_grid, run_evaluation
    from memflow.tasks.evaluate.analytics import sample_data

    out = tmp_path / "ev"
    grid = parse_grid(["pack_neighbours=0,2"])
    summary = run_evaluation(sample_data(), out, load_settings(out), [1, 5], [40, 80, 400], grid=grid)
    built = sorted(p.name for p in (out / "workspaces").iterdir())
    assert built == ["pack_neighbours=0"]  # the second combination searched the first's workspace
    for combo, part in zip(["0", "2"], summary["grid"]):
        alone = tmp_path / f"alone-{combo}"
        single = run_evaluation(sample_data(), alone, load_settings(alone, pack_neighbours=int(combo)),
                                [1, 5], [40, 80, 400])
        assert part["summary"]["budget_recall_any"] == single["budget_recall_any"]
        assert part["summary"]["transcript"]["budget_recall_any"] == single["transcript"]["budget_recall_any"]
    import polars as pl

    # the setting took effect: with neighbours the packed contexts hold more lines (at small
    # budgets the matching lines go in first either way, so recall may not move)
    rows = pl.read_parquet(out / "questions.parquet")
    used = {n: rows.filter(pl.col("pack_neighbours") == n)["tokens@400"].drop_nulls().sum() for n in (0, 2)}
    assert used[0] < used[2]
