"""Deploy prefect.yaml against the test server and run one dream through a process worker."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memflow.tasks.capture.conversation import auto_memory

REPO = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]  # slow: Prefect deployment on a server


def prefect(*args, env, timeout=300):
    res = subprocess.run([sys.executable, "-m", "prefect", *args], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, f"prefect {' '.join(args)} failed:\n{res.stdout}\n{res.stderr}"
    return res.stdout


def test_nightly_dream_deploys_and_runs_through_a_worker(settings, lay):
    from prefect.settings import PREFECT_API_URL

    auto_memory(settings, [{"id": "1", "role": "user", "timestamp": "2026-08-01T08:00:00Z",
                            "content": "The office wifi password rotates every Monday morning."}], "dep")
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PWD": str(REPO),
           "MEMFLOW_WORKSPACE": str(lay.root), "PREFECT_LOGGING_LEVEL": "WARNING"}
    prefect("work-pool", "create", "memflow", "--type", "process", env=env)
    prefect("--no-prompt", "deploy", "--name", "dream-nightly", env=env)
    listing = prefect("deployment", "ls", env=env)
    assert "dream/dream-nightly" in listing
    prefect("deployment", "run", "dream/dream-nightly", "--param", "date=2026-08-01",
            "--param", "start_jitter_seconds=0", env=env)
    prefect("worker", "start", "--pool", "memflow", "--run-once", env=env, timeout=600)
    nodes = list((lay.root / "digest").rglob("*.md"))
    assert nodes and "wifi password" in nodes[0].read_text()
    assert (lay.root / "daily/2026-08-01/interests.yaml").exists()
