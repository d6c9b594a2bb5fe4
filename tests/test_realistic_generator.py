"""The benchmark workspace generator (benchmarks/realistic.py): seeded, a folder per day with
that day's mtime, notes citing session lines that exist."""

from __future__ import annotations

import re
import sys
from datetime import date, datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from realistic import build  # noqa: E402

LINK = re.compile(r"\[\[(session/dialog/[^#\]]+)#L(\d+)\]\]")


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_arguments_same_bytes_and_a_folder_per_day(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    summary = build(first, 600)
    build(second, 600)
    files = tree(first)
    assert files == tree(second)
    days = [p for p in (first / "daily").iterdir() if p.is_dir()]
    assert len(days) == summary["days"] == 60
    for folder in days:  # a day folder is dated by its name, not by when the generator ran
        written = datetime.fromtimestamp(folder.stat().st_mtime, timezone.utc).date()
        assert written == date.fromisoformat(folder.name)
    layers = {rel.split("/")[0] for rel in files}
    assert {"daily", "digest", "session", "resource"} <= layers


def test_every_note_link_cites_an_existing_session_line(tmp_path):
    build(tmp_path, 600)
    cited = 0
    for note in (tmp_path / "daily").glob("*/*.md"):
        for session, line in LINK.findall(note.read_text(encoding="utf-8")):
            lines = (tmp_path / session).read_text(encoding="utf-8").splitlines()
            assert 1 <= int(line) <= len(lines), f"{note}: {session}#L{line}"
            cited += 1
    assert cited > 100
