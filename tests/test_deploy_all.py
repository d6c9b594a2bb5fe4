"""`prefect --no-prompt deploy --all` from a fresh copy of the repository (no `../shared`, no
MEMFLOW_FLEET_ROOT), against a Prefect server of this test's own: every deployment in
prefect.yaml is created, and each one run once by a process worker completes.

Its own server has the scheduler service off, so the only flow runs are the ones this test
starts (a scheduled run beside them would meet the deployments' concurrency limit of 1)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from memflow.tasks.capture.conversation import auto_memory

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

# What a user's first run of each deployment would change: no start jitter (the nightly ones
# spread their start over up to 30 minutes), the day the captured message was written, a query.
RUN_PARAMS = {
    "dream-nightly": {"date": "2026-08-01", "start_jitter_seconds": 0},
    "fleet-dream-nightly": {"date": "2026-08-01", "start_jitter_seconds": 0},
    "recall": {"queries": ["wifi password"]},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen) -> None:
    """End a process started in its own session, with its children (SIGKILL after 30 s)."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`prefect server start` on a free loopback port, its home in a tmp folder, killed by
    process group at teardown; yields the API URL."""
    home = tmp_path_factory.mktemp("deploy-all-server")
    port = free_port()
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED": "false",
           "PREFECT_UI_ENABLED": "false", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    env.pop("PREFECT_API_URL", None)
    log = open(home / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
                             "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5) as res:
                    if res.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, (home / "server.log").read_text()
            assert time.monotonic() < deadline, "the Prefect server did not start in 240 s"
            time.sleep(1)
        yield url
    finally:
        stop(proc)
        log.close()


def fresh_copy(dest: Path) -> Path:
    """The repository's files as a clone would have them (tracked and new, nothing ignored)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (REPO / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, dest / rel)
    return dest


def prefect(*args: str, env: dict, cwd: Path, timeout: float = 600) -> str:
    res = subprocess.run([sys.executable, "-m", "prefect", *args], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, f"prefect {' '.join(args)} failed:\n{res.stdout}\n{res.stderr}"
    return res.stdout + res.stderr


def api(url: str, path: str, body: dict | None = None):
    request = urllib.request.Request(f"{url}/{path}", method="POST" if body is not None else "GET",
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as res:
        return json.load(res)


def finished(url: str, run_id: str, timeout: float = 900) -> dict:
    """The flow run once it reached a final state."""
    deadline = time.monotonic() + timeout
    while (run := api(url, f"flow_runs/{run_id}"))["state_type"] not in (
            "COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
        assert time.monotonic() < deadline, f"flow run {run['name']} still {run['state_type']}"
        time.sleep(1)
    return run


def printed(url: str, run_id: str) -> str:
    logs = api(url, "logs/filter", {"logs": {"flow_run_id": {"any_": [run_id]}}})
    return "\n".join(entry["message"] for entry in logs)


def test_deploy_all_from_a_fresh_copy_then_each_deployment_runs_once_to_completion(
        server, settings, lay, tmp_path):
    auto_memory(settings, [{"id": "1", "role": "user", "timestamp": "2026-08-01T08:00:00Z",
                            "content": "The office wifi password rotates every Monday morning."}], "dep")
    repo = fresh_copy(tmp_path / "clone" / "memory-flows")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMFLOW_", "PREFECT_"))}
    env.update({"PREFECT_API_URL": server, "PREFECT_HOME": str(tmp_path / "cli-home"), "PWD": str(repo),
                "MEMFLOW_WORKSPACE": str(lay.root), "PREFECT_WORKER_QUERY_SECONDS": "2",
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"})
    prefect("work-pool", "create", "memflow", "--type", "process", env=env, cwd=repo)
    deployed = prefect("--no-prompt", "deploy", "--all", env=env, cwd=repo)
    assert "Traceback" not in deployed

    declared = [d["name"] for d in yaml.safe_load((repo / "prefect.yaml").read_text())["deployments"]]
    listed = {d["name"]: d for d in json.loads(prefect("deployment", "ls", "-o", "json", env=env, cwd=repo))}
    assert sorted(listed) == sorted(declared)
    fleet_roots = {listed[n]["parameters"]["root"] for n in declared if n.startswith("fleet-")}
    assert fleet_roots == {str(lay.root)}  # no MEMFLOW_FLEET_ROOT: the workspace is a fleet of one
    assert listed["evaluate-locomo"]["parameters"]["data"] == ""  # the shipped sample

    worker = subprocess.Popen([sys.executable, "-m", "prefect", "worker", "start", "--pool", "memflow"],
                              cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    runs = {}
    try:
        for name in declared:  # one at a time, in loop order: a fleet finding its workspace locked is busy
            params = [a for k, v in RUN_PARAMS.get(name, {}).items()
                      for a in ("--param", f"{k}={json.dumps(v)}")]
            started = prefect("deployment", "run", "--id", listed[name]["id"], *params, env=env, cwd=repo)
            runs[name] = re.search(r"UUID:\s*([0-9a-f-]{36})", started).group(1)
            run = finished(server, runs[name])
            assert run["state_type"] == "COMPLETED", (name, run["state"], printed(server, runs[name]))
    finally:
        stop(worker)

    for name in ("fleet-dream-nightly", "fleet-index"):
        assert "1 workspace(s), ok=1 busy=0 failed=0" in printed(server, runs[name]), name
    assert any("wifi password" in p.read_text() for p in (lay.root / "digest").rglob("*.md"))
    assert list((lay.root.parent / "memflow-backups").glob(f"{lay.root.name}-*.tar.zst"))
    summary = json.loads((lay.root.parent / "memflow-eval" / "summary.json").read_text())
    assert Path(summary["run"]["data"]).name == "locomo_sample.json" and summary["questions"] > 0
