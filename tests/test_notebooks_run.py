"""`python notebooks/run.py` writes both notebooks executed, with their plots, where it is told."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "notebooks" / "run.py"


@pytest.mark.slow
def test_run_script_saves_both_notebooks_with_their_plots(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMFLOW_NOTEBOOK_")}
    env["TMPDIR"] = str(tmp_path / "tmp")  # what the notebooks build for themselves lands here
    (tmp_path / "tmp").mkdir()
    res = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "out")], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stdout + res.stderr
    for name in ("workspace_analytics.ipynb", "retrieval_eval.ipynb"):
        nb = nbformat.read(tmp_path / "out" / name, as_version=4)
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
        assert not [o for o in outputs if o.get("output_type") == "error"], name
        assert sum("image/png" in o.get("data", {}) for o in outputs) >= 2, name
        assert all(c.get("execution_count") for c in nb.cells if c.cell_type == "code" and c.source.strip())
        assert f"{tmp_path / 'out' / name}" in res.stdout
    assert list((tmp_path / "tmp").glob("memflow-nb-*/demo/digest/*/*.md"))  # built, not read from elsewhere


def test_run_script_refuses_a_notebook_that_does_not_exist(tmp_path):
    res = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "out"), "nope.ipynb"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "no notebook nope.ipynb" in res.stderr
    assert not (tmp_path / "out").exists()
