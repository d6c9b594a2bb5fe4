"""No file can stop a job: index, dream, check, status, fm get, read, resources and capture run
as processes on a workspace holding the hostile corpus (every kind, plus a FIFO, a dangling
symlink, a symlink loop and a folder named x.md under digest/, random bytes as a .txt resource,
a 200,000-deep JSON conversation). Each must end within its timeout (a hang fails), by exit,
not by a signal, with no traceback, and name every file it left out with a reason.

Default: one file per kind; `MEMFLOW_RELIABILITY=full` plants harness.HOSTILE_PER_KIND."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from harness import HOSTILE_PER_KIND, memflow
from hostile import KINDS, SPECIALS, deep_json, make_hostile, make_hostile_specials

from memflow import api

pytestmark = pytest.mark.slow  # every job as a process on the hostile corpus

WARNED_NEW = {"yaml_bad_timestamp", "yaml_unknown_tag", "alias_long_string", "huge_heading"}
DIGEST_SKIPPED = {"digest/fifo.md", "digest/dangling.md", "digest/loop.md"}
TIMEOUT = 900


class Runs:
    """Every job run, counted for the suite's figures: tracebacks, signal deaths, hangs."""

    def __init__(self, ws: Path):
        self.ws, self.count, self.tracebacks, self.signals, self.hangs = ws, 0, [], [], []

    def __call__(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess | None:
        self.count += 1
        try:
            res = memflow(self.ws, *args, input=input, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.hangs.append(args)
            return None
        if res.returncode < 0:
            self.signals.append((args, res.returncode))
        if "Traceback" in res.stderr:
            self.tracebacks.append((args, res.stderr[-1500:]))
        return res

    def clean(self) -> bool:
        return not (self.tracebacks or self.signals or self.hangs)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    ws = tmp_path_factory.mktemp("hostile-jobs") / "ws"
    api.init(ws)
    day = ws / "daily" / "2026-01-02"
    day.mkdir(parents=True)
    (day / "hike.md").write_text("---\nname: Hike\n---\n\n# Hike\n\n- Alice went hiking in the Alps.\n")
    planted = make_hostile(ws, HOSTILE_PER_KIND)
    planted.update(make_hostile_specials(ws))
    return ws, planted


def test_index_names_every_bad_file_and_bounds_every_column(hostile):
    ws, planted = hostile
    run = Runs(ws)
    res = run("index", "--json")
    assert run.clean(), (run.tracebacks, run.signals, run.hangs)
    assert res.returncode == 0, res.stderr[-2000:]
    summary = json.loads(res.stdout)
    for rel, kind in planted.items():
        if kind in WARNED_NEW:
            assert rel in summary["warnings"] or rel in summary["skipped"], (rel, kind)
    assert DIGEST_SKIPPED <= set(summary["skipped"])
    assert all(why.strip() for why in [*summary["skipped"].values(), *summary["warnings"].values()])
    found = api.search("needle0 likes tea", ws, limit=50, layer="daily").results
    assert "daily/2026-01-01/yaml_bad_timestamp-0.md" in {r.path for r in found}
    index_bytes = sum(p.stat().st_size for p in (ws / "metadata" / "index").rglob("*") if p.is_file())
    n_files = len(planted) + 3
    print(f"\nhostile jobs: index over {n_files} hostile files: exit 0, {len(summary['skipped'])} "
          f"skipped, {len(summary['warnings'])} indexed with a warning, index {index_bytes / 1e6:.1f} MB; "
          "tracebacks 0, signals 0, hangs 0")
    assert index_bytes < 200e6 * max(1, HOSTILE_PER_KIND // 10)  # was 1.6 GB for 13 aliased names


def test_dream_check_status_fm_read_survive_and_name_what_they_skip(hostile):
    ws, planted = hostile
    run = Runs(ws)
    dream = run("dream", "--json")
    assert dream is not None and dream.returncode == 0, dream and dream.stderr[-2000:]
    summary = json.loads(dream.stdout)
    assert DIGEST_SKIPPED <= set(summary["skipped"]), summary["skipped"]
    assert all(summary["skipped"].values())
    again = run("dream")  # the next run (nothing or the backlog) still names them
    assert again is not None and again.returncode == 0
    assert "skipped digest/fifo.md: not a regular file" in again.stderr
    check = run("check")
    assert check is not None and check.returncode in (0, 1)
    assert "digest/loop.md: symlink loop" in check.stdout + check.stderr
    status = run("status")
    assert status is not None and status.returncode == 0
    one_per_kind = {kind: rel for rel, kind in planted.items() if rel.endswith(".md")}
    for kind, rel in sorted(one_per_kind.items()):
        for args in (("fm", "get", rel), ("read", rel, "--start", "1", "--end", "3")):
            res = run(*args)
            if res is not None and res.returncode:
                assert res.stderr.strip().splitlines()[-1].startswith("error: "), (kind, args, res.stderr)
    bad = run("fm", "get", "digest/wiki/bad-timestamp.md")
    assert bad.returncode == 1 and "'yesterday' is not a date or time" in bad.stderr
    for special in ("digest/fifo.md", "digest/loop.md", "digest/x.md"):
        res = run("read", special)
        assert res.returncode == 1 and res.stderr.strip().splitlines()[-1].startswith(f"error: {special}")
    assert run.clean(), (run.tracebacks, run.signals, run.hangs)
    print(f"\nhostile jobs: {run.count} runs of dream, check, status, fm get, read over "
          f"{len(planted) + 3} hostile files ({len(KINDS)} kinds, {len(SPECIALS) + 3} specials): "
          f"dream skipped {len(summary['skipped'])}, each named; tracebacks 0, signals 0, hangs 0")


def test_capture_and_resources_refuse_hostile_input_in_one_line(hostile, tmp_path):
    ws, _ = hostile
    run = Runs(ws)
    deep = tmp_path / "deep.json"
    deep.write_text(deep_json())
    for args, stdin, name in ((("capture", "--session", "deep", str(deep)), None, str(deep)),
                              (("capture", "--session", "deep", "-"), deep_json(), "stdin")):
        res = run(*args, input=stdin)
        assert res.returncode == 1
        assert res.stderr.strip() == (f"error: {name}: JSON nested 200,000 levels deep, over the "
                                      "limit of 100; give a list of message objects")
    res = run("resources")
    assert res.returncode in (0, 1)
    assert "resource/noise.txt" in res.stderr and "binary content" in res.stderr
    assert not list((ws / "daily").glob("*/noise*"))  # no card made of it
    assert run.clean(), (run.tracebacks, run.signals, run.hangs)


def test_json_depth_counts_brackets_outside_strings():
    from memflow.tasks.ground.guard import json_depth

    assert json_depth('[{"a": "[[[[\\"[[", "b": [1, [2]]}]') == 4
    assert json_depth("[]") == 1 and json_depth('"[[["') == 0 and json_depth(deep_json(500)) == 500


def test_random_bytes_without_nul_are_binary_and_latin1_text_is_not():
    import random

    from memflow.tasks.ground.convert import binary_reason

    rng = random.Random(5)
    assert all(binary_reason(bytes(rng.randrange(1, 256) for _ in range(rng.randrange(200, 5000))))
               for _ in range(200))
    assert binary_reason("Ça été très élevé, naïve façade über straße. ".encode("latin-1") * 20) == ""
    assert binary_reason("Plain text, 中文, emoji 🙂\n".encode() * 300) == ""


def test_frontmatter_loader_builds_plain_types_only():
    from datetime import date

    from memflow.tasks.ground.notes import parse_note

    ok = parse_note("a.md", "---\nd: 2026-01-02\nn: 3\nl: [a, b]\n---\nbody\n")
    assert ok.metadata == {"d": date(2026, 1, 2), "n": 3, "l": ["a", "b"]} and not ok.warning
    for value in ("!!timestamp 'yesterday'", "!!binary aGk=", "!!set {a, b}", "!!python/name:os.system",
                  "!custom x"):
        note = parse_note("a.md", f"---\nx: {value}\n---\nbody\n")
        assert note.metadata == {} and note.warning.startswith("malformed frontmatter"), value


def test_oversized_column_values_are_cut_and_named():
    from memflow.tasks.index.bounds import FIELD_MAX_CHARS, TEXT_MAX_CHARS, bound_rows

    rows = [{"id": "x" * 5000, "path": "p" * 3000, "name": "n" * 10_000, "text": "t" * 100_000,
             "terms": ["w" * 500] * 20_000, "start_line": 1}]
    assert bound_rows(rows) == {"name", "text", "terms"}
    row = rows[0]
    assert len(row["id"]) == 5000 and len(row["path"]) == 3000  # identities are never cut
    assert len(row["name"]) == FIELD_MAX_CHARS and len(row["text"]) == TEXT_MAX_CHARS
    assert len(row["terms"]) == 16 * 1024 and {len(t) for t in row["terms"]} == {64}
    assert bound_rows(rows) == set()
