"""`prefect deploy` of a fleet deployment takes MEMFLOW_FLEET_ROOT as its root, else
MEMFLOW_WORKSPACE (a fleet of one); with neither set it fails at deploy time (a build step
refuses an empty root) and creates nothing."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]  # slow: prefect deploy on a server


def prefect(*args, env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "prefect", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def fleet_index_root(env) -> str | None:
    listed = json.loads(prefect("deployment", "ls", "-o", "json", env=env).stdout)
    return next((d["parameters"]["root"] for d in listed if d["name"] == "fleet-index"), None)


def test_fleet_root_is_the_fleet_root_else_the_workspace_else_deploy_refuses(tmp_path):
    from prefect.settings import PREFECT_API_URL

    env = {k: v for k, v in os.environ.items() if k not in ("MEMFLOW_FLEET_ROOT", "MEMFLOW_WORKSPACE")}
    env.update({"PREFECT_API_URL": PREFECT_API_URL.value(), "PWD": str(REPO),
                "PREFECT_LOGGING_LEVEL": "WARNING"})
    prefect("work-pool", "create", "memflow", "--type", "process", "--overwrite", env=env)
    prefect("deployment", "delete", "fleet-index/fleet-index", env=env)  # another test's, if any
    refused = prefect("--no-prompt", "deploy", "--name", "fleet-index", env=env)
    assert refused.returncode != 0
    assert "MEMFLOW_FLEET_ROOT and MEMFLOW_WORKSPACE are both unset" in refused.stdout + refused.stderr
    assert fleet_index_root(env) is None
    for var in ("MEMFLOW_WORKSPACE", "MEMFLOW_FLEET_ROOT"):  # the fleet root wins over the workspace
        env[var] = str(tmp_path / var)
        (tmp_path / var).mkdir()
        made = prefect("--no-prompt", "deploy", "--name", "fleet-index", env=env)
        assert made.returncode == 0, made.stdout + made.stderr
        assert fleet_index_root(env) == str(tmp_path / var)
