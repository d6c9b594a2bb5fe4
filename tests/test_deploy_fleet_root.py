"""`prefect deploy` of the fleet deployments with MEMFLOW_FLEET_ROOT unset fails at deploy time
(a build step refuses an empty root), and deploys once it is set."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.usefixtures("prefect_server")


def prefect(*args, env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "prefect", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def test_fleet_deploy_without_a_fleet_root_fails_at_deploy_time(tmp_path):
    from prefect.settings import PREFECT_API_URL

    env = {k: v for k, v in os.environ.items() if k != "MEMFLOW_FLEET_ROOT"}
    env.update({"PREFECT_API_URL": PREFECT_API_URL.value(), "PWD": str(REPO),
                "PREFECT_LOGGING_LEVEL": "WARNING"})
    prefect("work-pool", "create", "memflow", "--type", "process", "--overwrite", env=env)
    refused = prefect("--no-prompt", "deploy", "--name", "fleet-index", env=env)
    assert refused.returncode != 0
    assert "MEMFLOW_FLEET_ROOT is unset" in refused.stdout + refused.stderr
    listing = prefect("deployment", "ls", env=env).stdout
    assert "fleet-index" not in listing
    (tmp_path / "fleet").mkdir()
    made = prefect("--no-prompt", "deploy", "--name", "fleet-index",
                   env={**env, "MEMFLOW_FLEET_ROOT": str(tmp_path / "fleet")})
    assert made.returncode == 0, made.stdout + made.stderr
    assert "fleet-index" in prefect("deployment", "ls", env=env).stdout
