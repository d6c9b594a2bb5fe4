"""A large index run parses its files in worker processes (issue #30): the tables and the search
snapshot are the ones a run in one process writes, row for row and in the same order; what a
worker logs reaches the caller; a worker's failure is an error, never a shorter index; a script
without a main guard can run it."""

import contextlib
import logging
import operator
import os
import random
import subprocess
import sys
import textwrap
from functools import partial

import pytest

from memflow.tasks.fleet import jobs
from memflow.tasks.index import indexing, parallel, run_index, run_reindex
from memflow.tasks.stores.lance import IndexStore

from test_scale_writes import note, rows, word

SEEDS = [int(s) for s in os.environ.get("MEMFLOW_SEEDS", "7,1234").split(",")]


def workspace(lay, rng: random.Random) -> list[str]:
    names = [f"daily/2026-04-{1 + n % 9:02d}/{word(rng)}-{n}.md" for n in range(28)]
    names += [f"digest/wiki/{word(rng)}-{n}.md" for n in range(6)]
    for path in names:
        (lay.root / path).parent.mkdir(parents=True, exist_ok=True)
        (lay.root / path).write_text(note(rng, names), encoding="utf-8")
    cut = lay.root / "daily/2026-04-01/a-long-line.md"
    cut.write_text("# x\n\n" + "y" * 100_000 + "\n", encoding="utf-8")  # indexed, values cut: a warning
    refused = lay.root / "daily/2026-04-01/nested.md"
    refused.write_text("# x\n\n" + "> " * 120 + "deep\n", encoding="utf-8")  # over nesting_max_depth
    (lay.root / "resource" / "blob.txt").write_bytes(bytes(range(256)) * 40)  # no text: logged
    return names


def chunk_ids(lay) -> list[str]:
    return IndexStore(lay.index_dir / "lance").chunks.to_arrow().column("id").to_pylist()


@pytest.mark.parametrize("seed", SEEDS)
def test_an_index_parsed_in_workers_equals_one_parsed_in_this_process(settings, lay, monkeypatch,
                                                                       caplog, seed):
    rng = random.Random(seed)
    workspace(lay, rng)
    monkeypatch.setattr(parallel, "MIN_FILES", 1)
    monkeypatch.setattr(parallel, "FILES_PER_WORKER", 1)
    monkeypatch.setattr(indexing, "BATCH", 7)  # several commit groups, parts not dividing them
    monkeypatch.setattr(indexing, "ROWS_BATCH", 3)
    started = []
    popen = subprocess.Popen
    monkeypatch.setattr(parallel.subprocess, "Popen",
                        lambda argv, **k: started.extend(a for a in argv if "serve" in a) or popen(argv, **k))
    with caplog.at_level(logging.WARNING, logger="memflow"):
        in_workers = run_index(settings.model_copy(update={"index_workers": 3}))  # this one and two workers
    assert len(started) == 2
    assert [r.getMessage() for r in caplog.records if "blob.txt" in r.getMessage()] == [
        "resource/blob.txt is not indexed: binary content (NUL bytes), not text; no note written"]
    parsed_apart, order = rows(lay, settings), chunk_ids(lay)
    caplog.clear()
    in_process = run_reindex(settings.model_copy(update={"index_workers": 1}))
    assert len(started) == 2
    assert rows(lay, settings) == parsed_apart
    assert chunk_ids(lay) == order
    assert (in_workers.skipped, in_workers.warnings) == (in_process.skipped, in_process.warnings)
    assert "daily/2026-04-01/nested.md" in in_workers.skipped
    assert "daily/2026-04-01/a-long-line.md" in in_workers.warnings
    assert (in_workers.added, in_workers.chunks) == (in_process.added, in_process.chunks)
    # a run that is not cold but changes many files (past a delta's) starts its workers when it writes
    monkeypatch.setattr(indexing, "SMALL_CHANGE", 0)
    for path in sorted(lay.root.glob("d*/**/*.md")):
        path.write_text(path.read_text(encoding="utf-8") + f"\n- {word(rng)} {word(rng)}\n", encoding="utf-8")
    edited = run_index(settings.model_copy(update={"index_workers": 3}))
    assert len(started) == 4 and edited.modified >= 34
    parsed_apart, order = rows(lay, settings), chunk_ids(lay)
    run_reindex(settings.model_copy(update={"index_workers": 1}))
    assert (rows(lay, settings), chunk_ids(lay)) == (parsed_apart, order)


def test_results_come_in_order_and_a_failing_worker_is_an_error():
    with parallel.Workers(2) as pool:  # this process and two workers
        assert list(pool.map(partial(operator.mul, 3), range(40))) == [3 * i for i in range(40)]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"), parallel.Workers(1) as pool:
        list(pool.map(partial(operator.truediv, 1.0), [1, 2, 0, 4]))
    with pytest.raises(RuntimeError, match="exit code 3"), parallel.Workers(1) as pool:
        list(pool.map(os._exit, [3, 3]))


PROBE = """
import sys
from memflow.tasks.index.rows import parse_part

def parse_and_report(job):
    parsed = parse_part(*job)
    return len(parsed.chunks), sorted(m for m in ("numpy", "pyarrow", "lancedb", "polars") if m in sys.modules)
"""


def test_a_worker_parses_without_numpy_arrow_or_lancedb(settings, lay, tmp_path, monkeypatch):
    """A worker loads only what a file's rows are made with (about half the memory of one
    that loaded the writers' modules); the caller makes the Arrow batches."""
    names = workspace(lay, random.Random(SEEDS[0]))
    (tmp_path / "probe_rows.py").write_text(PROBE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import probe_rows

    job = (lay, settings, indexing.pipeline_version(settings), names)
    with parallel.Workers(1) as pool:  # item 0 goes to the worker, item 1 to this process
        (chunks, loaded), (same, _) = pool.map(probe_rows.parse_and_report, [job, job])
    assert chunks == same > len(names)
    assert loaded == []


def test_the_index_package_exports_every_name_it_lists():
    """The package imports its modules on first use (so a worker does not load the writers'):
    every name in `__all__` resolves, and nothing else is made up."""
    import memflow.tasks.index as index

    assert all(callable(getattr(index, name)) for name in index.__all__)
    with pytest.raises(AttributeError):
        index.no_such_name  # noqa: B018


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are set on Linux only")
def test_a_worker_can_send_a_part_ahead_without_waiting():
    """A worker's pipe holds about a part's result (the default 64 KiB made it wait for this
    process, busy writing tables, after every part)."""
    import fcntl

    allowed = int(open("/proc/sys/fs/pipe-max-size").read())
    with parallel.Workers(1) as pool:
        size = fcntl.fcntl(pool.procs[0].stdout.fileno(), fcntl.F_GETPIPE_SZ)
    assert size >= min(parallel.PIPE_BYTES, allowed) > 65536


def test_workers_only_for_large_runs_and_never_when_set_to_one():
    assert parallel.worker_count(0, parallel.MIN_FILES - 1) == 1
    assert parallel.worker_count(1, 10 * parallel.MIN_FILES) == 1
    assert parallel.worker_count(3, 100 * parallel.FILES_PER_WORKER) == 3
    assert parallel.worker_count(64, parallel.MIN_FILES) == parallel.MIN_FILES // parallel.FILES_PER_WORKER
    # one per core by default, never more than AUTO_MAX (a large host or a container's quota)
    assert 1 <= parallel.worker_count(0, 10**7) == min(parallel.usable_cores(), parallel.AUTO_MAX)


def test_a_script_without_a_main_guard_indexes_with_workers(settings, lay):
    names = workspace(lay, random.Random(11))
    script = lay.root.parent / "index_now.py"
    script.write_text(textwrap.dedent(f"""\
        from memflow.schemas.settings import load_settings
        from memflow.tasks.index import parallel, run_index
        parallel.MIN_FILES = parallel.FILES_PER_WORKER = 1
        print(run_index(load_settings({str(lay.root)!r})).added)
        """), encoding="utf-8")
    env = {**os.environ, "MEMFLOW_INDEX_WORKERS": "3"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(len(names) + 3)]  # the refused and binary files are recorded too


def test_a_fleet_parses_each_workspace_in_one_process_unless_the_workspace_says(settings, monkeypatch):
    seen = []
    monkeypatch.setitem(jobs.JOBS, "index", lambda s, **_: seen.append(s.index_workers) or ("", None, ""))
    unlocked = lambda *_: contextlib.nullcontext()  # noqa: E731
    assert jobs.run_workspace("index", str(settings.workspace), unlocked).status == "ok"
    monkeypatch.setenv("MEMFLOW_INDEX_WORKERS", "2")
    assert jobs.run_workspace("index", str(settings.workspace), unlocked).status == "ok"
    assert seen == [1, 2]


def test_workers_that_cannot_start_leave_the_run_to_this_process(settings, lay, monkeypatch, caplog):
    names = workspace(lay, random.Random(5))
    monkeypatch.setattr(parallel, "MIN_FILES", 1)
    monkeypatch.setattr(parallel, "FILES_PER_WORKER", 1)
    monkeypatch.setattr(parallel.sys, "executable", str(lay.root / "no-such-python"))
    with caplog.at_level(logging.WARNING, logger="memflow"):
        summary = run_index(settings.model_copy(update={"index_workers": 2}))
    assert summary.added == len(names) + 3
    assert any("could not start" in r.getMessage() for r in caplog.records)
