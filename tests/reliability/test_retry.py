"""Black-box: a resource whose card failed on the model or the network is not lost. It is
recorded as `failed` with its attempts (never `refused`), a run before its retry time says it
waits, `status` counts it apart from refused content and warns, and the first run after the
backoff writes its card. Content refused on its own (binary) stays refused.

Default: the CLI scenario and one resource per fault kind; `MEMFLOW_RELIABILITY=full`: 10
resources per fault kind (the figure README reports: resources lost to a transient fault).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # CLI scenario per fault kind

FULL = os.environ.get("MEMFLOW_RELIABILITY") == "full"
PER_FAULT = 10 if FULL else 1
ENV = {**os.environ, "PREFECT_API_URL": "", "MEMFLOW_LOCK_WAIT": "60"}
READING = json.dumps({"keep": True, "name": "Trip", "description": "Trip plan: Oslo in May",
                      "facts": [{"text": "The trip to Oslo is in May.", "lines": [1]}]})


def memflow(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memflow.cli", "-w", str(ws), *args],
                          capture_output=True, text=True, timeout=300, env=ENV)


def configure(ws: Path, api_base: str, retry_seconds: float) -> None:
    (ws / "memflow.toml").write_text(
        f'chat_model = "openai/test-chat"\nmodel_api_base = "{api_base}"\nmodel_api_key = "x"\n'
        f"model_timeout = 2.0\nmodel_retry_seconds = {retry_seconds}\n")


def catalog(ws: Path) -> dict:
    return json.loads((ws / "metadata/state/resource_catalog.json").read_text())


def test_a_failed_model_call_waits_its_backoff_then_the_card_is_written(tmp_path, fake_model):
    ws = tmp_path / "ws"
    assert memflow(ws, "init").returncode == 0
    (ws / "resource").mkdir(exist_ok=True)
    (ws / "resource/trip.txt").write_text("The trip to Oslo is in May.\nPack warm clothes.\n")
    (ws / "resource/blob.txt").write_bytes(bytes(range(256)) * 8)
    configure(ws, fake_model.api_base, 3600)
    fake_model.script.extend([{"status": 500}] * 5)

    first = memflow(ws, "resources")
    assert first.returncode == 1 and "Traceback" not in first.stderr
    assert "failed: resource/trip.txt" in first.stderr and "attempt 1" in first.stderr
    entries = catalog(ws)
    assert entries["resource/trip.txt"]["failed"] and entries["resource/trip.txt"]["attempts"] == 1
    assert "refused" not in entries["resource/trip.txt"]
    assert entries["resource/blob.txt"]["refused"]  # binary: refused on its own

    fake_model.script.clear()
    fake_model.default_chat = lambda messages: READING
    asked = len(fake_model.requests)
    early = memflow(ws, "resources")  # before the retry time: nothing asked, said waiting
    assert early.returncode == 0, early.stderr
    assert "1 waiting to retry" in early.stderr and "waiting=1" in early.stdout
    assert len(fake_model.requests) == asked
    status = memflow(ws, "status")
    assert "resources: 1 refused (until they change), 1 waiting to retry" in status.stdout
    assert "warning: 1 resource(s) failed on a model or network error" in status.stdout
    report = json.loads(memflow(ws, "status", "--json").stdout)
    assert report["resources"]["refused"] == 1 and report["resources"]["waiting_to_retry"] == 1

    configure(ws, fake_model.api_base, 0)  # the backoff has passed (0: due at once)
    fake_model.script.extend([{"status": 429}] * 5)
    again = memflow(ws, "resources")
    assert again.returncode == 1 and "attempt 2" in again.stderr
    assert catalog(ws)["resource/trip.txt"]["attempts"] == 2

    fake_model.script.clear()
    good = memflow(ws, "resources")
    assert good.returncode == 0, good.stderr
    entry = catalog(ws)["resource/trip.txt"]
    assert "failed" not in entry and "Oslo is in May" in (ws / entry["note"]).read_text()
    assert "blob.txt" not in good.stdout  # still refused, not tried again
    status = memflow(ws, "status", "--json")
    resources = json.loads(status.stdout)["resources"]
    assert {k: resources[k] for k in ("refused", "waiting_to_retry", "next_retry")} == {
        "refused": 1, "waiting_to_retry": 0, "next_retry": None}
    assert "binary content" in resources["not_read"]["resource/blob.txt"]  # named with its reason
    assert not any("resource(s) failed" in w for w in json.loads(status.stdout)["warnings"])


FAULTS = {"status 500": {"status": 500}, "status 429": {"status": 429}, "status 503": {"status": 503},
          "cut-off JSON": {"content": '{"keep": true, "name": "Tr'},
          "schema-invalid JSON": {"content": '{"keep": true, "facts": [{"text": 5}]}'},
          "hang": {"hang": 3}, "connection refused": None}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_every_transient_fault_is_retried_and_no_resource_is_lost(model_settings, lay, fake_model, fault):
    from memflow import api

    for n in range(PER_FAULT):
        path = lay.root / "resource" / f"note-{n}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Resource {n}: the trip to Oslo is in May.\n")
    settings = model_settings.model_copy(update={"model_timeout": 1.0, "model_retry_seconds": 0.0})
    if FAULTS[fault] is None:
        settings = settings.model_copy(update={"model_api_base": "http://127.0.0.1:9/v1"})
    else:
        fake_model.script.extend([FAULTS[fault]] * PER_FAULT)
    result = api.capture_resources(settings)
    assert len(result.failed) == PER_FAULT and not result.created
    entries = json.loads((lay.state_dir / "resource_catalog.json").read_text())
    assert all(e.get("failed") and not e.get("refused") for e in entries.values())
    fake_model.script.clear()
    fake_model.default_chat = lambda messages: READING
    recovered = api.capture_resources(model_settings.model_copy(update={"model_retry_seconds": 0.0}))
    lost = PER_FAULT - len(recovered.created)
    print(f"retry {fault}: {PER_FAULT} resource(s), {lost} lost")
    assert lost == 0 and not recovered.failed


def test_a_model_failure_an_older_catalog_recorded_as_refused_is_tried_again(model_settings, lay, fake_model):
    from memflow import api

    path = lay.root / "resource" / "trip.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("The trip to Oslo is in May.\n")
    sha = __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    reading = f"{model_settings.decode_errors}|{model_settings.resource_max_bytes}"
    (lay.state_dir / "resource_catalog.json").write_text(json.dumps({"resource/trip.txt": {
        "sha256": sha, "note": None, "reading": reading,
        "refused": "ModelCallError: openai/test-chat: litellm.InternalServerError: scripted 500"}}))
    fake_model.default_chat = lambda messages: READING
    result = api.capture_resources(model_settings)
    assert len(result.created) == 1 and not result.failed
