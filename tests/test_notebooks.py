"""Both notebooks run top to bottom: on their own (building the demo workspace and a small
evaluation in a fresh temporary folder), and on a workspace and eval runs given to them, which
they read without changing a byte."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from memflow.tasks.evaluate import run_evaluation

pytestmark = pytest.mark.slow  # runs both notebooks

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
SAMPLE = Path(__file__).resolve().parents[1] / "memflow" / "samples" / "locomo_sample.json"
PARAMS = ("MEMFLOW_NOTEBOOK_WORKSPACE", "MEMFLOW_NOTEBOOK_EVAL_DIRS")


def execute(name: str, env: dict, tmp: Path) -> nbformat.NotebookNode:
    """Run a notebook with only `env` as its parameters and `tmp` as its temporary folder."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    env = {**{k: "" for k in PARAMS}, **env, "TMPDIR": str(tmp)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp)}}).execute()
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return nb


def outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def printed(nb: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in outputs(nb) if o.get("output_type") == "stream")


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def demo_workspace(tmp_path_factory):
    import memflow

    return memflow.demo(tmp_path_factory.mktemp("nb") / "demo", out=lambda *a: None)


def test_workspace_notebook_builds_the_demo_when_given_nothing(tmp_path):
    nb = execute("workspace_analytics.ipynb", {}, tmp_path)
    assert not [o for o in outputs(nb) if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs(nb))
    assert f"workspace: {tmp_path}" in printed(nb)  # built in its own temporary folder
    assert list(tmp_path.glob("memflow-nb-*/demo/digest/*/*.md"))


def test_workspace_notebook_never_writes_into_the_workspace_it_reads(demo_workspace, tmp_path):
    before = tree_digest(demo_workspace)
    nb = execute("workspace_analytics.ipynb", {"MEMFLOW_NOTEBOOK_WORKSPACE": str(demo_workspace)},
                 tmp_path)
    assert f"workspace: {demo_workspace}" in printed(nb)
    assert any("image/png" in o.get("data", {}) for o in outputs(nb))
    assert tree_digest(demo_workspace) == before


def test_analytics_of_an_unindexed_workspace_is_a_clear_error_and_creates_nothing(tmp_path):
    import memflow
    from memflow.tasks.evaluate import analytics

    memflow.init(tmp_path / "ws")
    before = tree_digest(tmp_path / "ws")
    lay = analytics.open_layout(tmp_path / "ws")
    with pytest.raises(LookupError, match="run memflow index"):
        analytics.chunk_table(lay)
    assert tree_digest(tmp_path / "ws") == before
    assert not (lay.index_dir / "lance").exists()


def test_retrieval_notebook_evaluates_the_sample_when_given_nothing(tmp_path):
    nb = execute("retrieval_eval.ipynb", {}, tmp_path)
    assert not [o for o in outputs(nb) if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs(nb))
    assert "sample-bm25" in printed(nb) and "sample-dream" in printed(nb)
    assert len(list(tmp_path.glob("memflow-nb-eval-*/sample-*/summary.json"))) == 2


def test_retrieval_notebook_reads_the_runs_it_is_given(tmp_path):
    runs = []
    for name, chunk in (("a", 1000), ("b", 2000)):
        out = tmp_path / "runs" / name
        from memflow.schemas.settings import load_settings

        run_evaluation(SAMPLE, out, load_settings(out, chunk_bytes=chunk), [1, 5], [250, 1000])
        runs.append(out)
    before = [tree_digest(r) for r in runs]
    nb = execute("retrieval_eval.ipynb", {"MEMFLOW_NOTEBOOK_EVAL_DIRS": ",".join(map(str, runs))},
                 tmp_path)
    assert any("image/png" in o.get("data", {}) for o in outputs(nb))
    assert [tree_digest(r) for r in runs] == before
    assert not list(tmp_path.glob("memflow-nb-eval-*"))
