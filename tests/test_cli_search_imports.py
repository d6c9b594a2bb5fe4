"""Without a server, `memflow search` imports only what the search needs (issue #58): no Prefect,
LanceDB or litellm (seconds of import each, STACK-NOTES) in the CLI process, for a plain, a
packed (`--budget`) and a `--json --explain` search of an indexed workspace."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memflow import api

HEAVY = ("prefect", "lancedb", "litellm")
PROBE = """
import json, sys
from memflow.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}), file=sys.stderr)
"""


@pytest.mark.parametrize("extra", [[], ["--budget", "200"], ["--json", "--explain"]])
def test_a_cli_search_imports_no_prefect_lancedb_or_litellm(settings, lay, extra):
    ws = lay.root
    api.write("daily/2026-03-02/heron.md", "# Herons\n\n- the heron colony has forty nests\n", None, None, None, ws)
    api.write("digest/wiki/pier.md", "# Pier\n\n- the boat is moored at pier seven\n", None, None, None, ws)
    api.index(ws)
    done = subprocess.run([sys.executable, "-c", PROBE, "-w", str(ws), "search", "heron nests", *extra],
                          capture_output=True, text=True, timeout=120)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    assert "daily/2026-03-02/heron.md" in done.stdout
    assert [m for m in HEAVY if m in report["modules"]] == []
