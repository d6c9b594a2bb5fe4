"""memflow import reme on a ReMe workspace copied with `cp -r` or cloned from git (every mtime
new): files are matched by content (ReMe's chunk texts at their lines), so every vector is
reused and every dreamt note adopted; a note edited since ReMe saw it is still dreamt again."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

FIXTURE = Path(__file__).parent / "data" / "reme"


def cloned(tmp_path: Path) -> Path:
    """The fixture as a clone leaves it: every file's mtime is now."""
    dst = tmp_path / "reme"
    shutil.copytree(FIXTURE / "workspace", dst)
    now = time.time()
    for path in dst.rglob("*"):
        if path.is_file():
            os.utime(path, (now, now))
    return dst


def cli(*args: str, fake_model) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "MEMFLOW_WORKSPACE")}
    env.update({"MEMFLOW_EMBEDDING_MODEL": "openai/fake-embed", "MEMFLOW_MODEL_API_BASE": fake_model.api_base,
                "MEMFLOW_MODEL_API_KEY": "x", "MEMFLOW_MODEL_TIMEOUT": "5"})
    return subprocess.run([sys.executable, "-m", "memflow.cli", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_a_cloned_reme_workspace_reuses_every_vector_and_adopts_every_dreamt_note(tmp_path, fake_model):
    src = cloned(tmp_path)
    done = cli("import", "reme", str(src), "--into", str(tmp_path / "mf"), "--reme-model", "fake-embed",
               fake_model=fake_model)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    skipped = [line for line in lines if line.startswith("vectors skipped")]
    # the two resource originals are all ReMe never indexed; nothing is "changed since"
    assert skipped == ["vectors skipped: 2 (ReMe did not index this file)"], done.stdout
    assert "notes already dreamt: 6" in lines and not any(line.startswith("note to dream") for line in lines)
    assert fake_model.requests == []


def test_a_note_edited_after_the_clone_is_dreamt_again_and_its_vectors_not_trusted(tmp_path, fake_model):
    from memflow import api

    src = cloned(tmp_path)
    note = src / "memory/2026-11-21/garden.md"
    note.write_text(note.read_text(encoding="utf-8").replace("garlic", "onion"), encoding="utf-8")
    appended = src / "memory/2026-11-20/bike.md"
    appended.write_text(appended.read_text(encoding="utf-8") + "\nA new line ReMe never saw.\n", encoding="utf-8")
    report = api.import_reme(src, tmp_path / "mf", reme_model="fake-embed",
                             embedding_model="openai/fake-embed", model_api_base=fake_model.api_base,
                             model_api_key="x", model_timeout=5.0)
    assert report.dream_pending == {"memory/2026-11-21/garden.md": "changed since ReMe dreamt it",
                                    "memory/2026-11-20/bike.md": "changed since ReMe dreamt it"}
    assert report.dreamt_adopted == 4
    assert report.skipped.get("file changed since ReMe indexed it", 0) >= 2
    json.dumps(report.model_dump(mode="json"))  # the report stays a plain record


def test_resources_of_a_cloned_reme_workspace_are_carded_once(tmp_path, fake_model):
    """Issue 57: after a plain copy (every mtime new) the import counted ReMe's resource notes as
    stale, and the next `memflow resources` wrote a second card beside ReMe's. Each resource
    keeps one card; a resource changed after the import has its card rewritten, not doubled."""
    from memflow import api
    from memflow.tasks.ground.notes import parse_note

    src = cloned(tmp_path)
    report = api.import_reme(src, tmp_path / "mf", reme_model="fake-embed", embedding_model="openai/fake-embed",
                             model_api_base=fake_model.api_base, model_api_key="x", model_timeout=5.0)
    ws = tmp_path / "mf"

    def cards() -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for path in sorted((ws / "memory").rglob("*.md")):
            source = parse_note(path.name, path.read_text(encoding="utf-8")).metadata.get("source_resource")
            if source:
                found.setdefault(source, []).append(path.relative_to(ws).as_posix())
        return found

    before = cards()
    assert before and all(len(notes) == 1 for notes in before.values()), before
    assert report.resources_adopted == len(before) and report.resources_pending == {}
    result = api.capture_resources(ws)
    assert result.created == [] and result.failed == {}, result
    assert cards() == before
    first = sorted(before)[0][2:-2]
    (ws / first).write_text((ws / first).read_text(encoding="utf-8") + "\nA line added after the import.\n",
                            encoding="utf-8")
    result = api.capture_resources(ws)
    assert result.created == [] and result.updated == before[f"[[{first}]]"]
    assert cards() == before
