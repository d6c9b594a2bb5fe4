"""Both notebooks run top to bottom against a small workspace and eval run made here."""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from memflow.tasks.locomo_eval import run_evaluation

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def execute(name: str, env: dict) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return nb


@pytest.fixture(scope="module")
def demo_workspace(tmp_path_factory):
    from memflow.demo_loop import run_demo

    return run_demo(str(tmp_path_factory.mktemp("nb") / "demo"), out=lambda *a: None)


def test_workspace_analytics_notebook_runs(demo_workspace):
    nb = execute("workspace_analytics.ipynb", {"MEMFLOW_NOTEBOOK_WORKSPACE": str(demo_workspace)})
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)


def test_retrieval_eval_notebook_runs(settings, tmp_path):
    data = Path(__file__).parent / "data" / "two_conversations.json"
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        run_evaluation(data, out, settings.model_copy(update={"workspace": out}), [1, 5], [250, 1000])
        runs.append(str(out))
    nb = execute("retrieval_eval.ipynb", {"MEMFLOW_NOTEBOOK_EVAL_DIRS": ",".join(runs)})
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert any("image/png" in o.get("data", {}) for o in outputs)
