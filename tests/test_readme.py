"""Every Python example in README.md runs as written, on a fresh home folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPETS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)


def test_readme_has_python_examples():
    assert len(SNIPPETS) >= 2


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet-{i}" for i in range(len(SNIPPETS))])
def test_readme_python_example_runs(code, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("MEMFLOW_WORKSPACE", None)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "an example that prints nothing shows nothing"
    if "memflow.init(\"~/memory\")" in code:
        # `~` means the user's home, not a folder named `~` under the current one
        assert (home / "memory" / "daily").is_dir() and not (tmp_path / "~").exists()
        assert "rollback.sh" in done.stdout or "roll back" in done.stdout
        assert "demo" in done.stdout and not list(Path(env.get("TMPDIR", "/tmp")).glob(
            "memflow-demo-*/daily")), "the demo without a folder removes its temporary workspace"
