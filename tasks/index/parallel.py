"""Stage 2, index: a large run's files parsed in worker processes, results in their order.

Parsing a file (frontmatter, blocks, chunks, terms, links) is pure CPU work in Python, about
two thirds of a cold index; the LanceDB writes and the snapshot build stay in the calling
process, which parses its own share beside the workers. A worker is a fresh interpreter that
imports this module and what a file's rows are made with (`PRELOAD`: no numpy, Arrow or
LanceDB, ~50 MiB a worker; the caller makes the Arrow batches), not a fork and not
`multiprocessing`: the caller has LanceDB's threads running (forking it could deadlock), and
multiprocessing's spawn runs the caller's main script again in every worker (a script without
an `if __name__ == "__main__"` guard would index inside each worker). Workers may start before
their parts are known, so that their start overlaps the caller's. Each gets its share of the
parts in a job file, part i going to worker i mod (n + 1) (the last share is the caller's), and
sends each result back on its stdout as it is done; the caller reads them in order, so a worker
that runs ahead waits once its pipe (`PIPE_BYTES`, about a part's result) is full (memory
stays bounded). What a worker logged comes back with its result and is logged here, in order.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
MIN_FILES = 2000  # files to parse in one run from which workers pay for their start (~0.5 s each)
FILES_PER_WORKER = 1000  # fewer files than this per worker: not worth a process
Records = list[tuple[str, int, str]]
_SERVE = f"from {__name__} import serve; serve()"
PRELOAD = ("memflow.tasks.index.rows",)  # what a job's work will need (no numpy, Arrow, LanceDB)
AUTO_MAX = 4  # processes `index_workers = 0` starts at most (each worker holds ~50 MiB)
PIPE_BYTES = 1 << 20  # a worker's pipe (`_widen`): about one part's result


def worker_count(setting: int, files: int) -> int:
    """Processes to parse `files` with, this one included: 1 (this process alone) for small
    runs or when `setting` is 1, else `setting` (0: one per core this process may use, at most
    AUTO_MAX), no more than one per FILES_PER_WORKER files."""
    if setting == 1 or files < MIN_FILES:
        return 1
    return max(1, min(setting or min(usable_cores(), AUTO_MAX), files // FILES_PER_WORKER))


def usable_cores() -> int:
    """Cores this process may run on: its CPU affinity, within a cgroup v2 CPU quota when one
    is set (a container limited to 2 CPUs of a 64-core host gets 2)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    return cores


class Workers:
    """Worker processes beside this one, started before their work is known: each imports the
    index modules while the caller does other things (opens LanceDB, scans). `map` hands them
    their one job; `close` ends them (those still running are killed)."""

    def __init__(self, count: int):
        self.folder = tempfile.mkdtemp(prefix="memflow-parse-")  # 0700: the job holds the settings
        self.procs: list[subprocess.Popen] = []
        # the modules this process imports (a notebook may have added to sys.path)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            for _ in range(count):
                self.procs.append(subprocess.Popen([sys.executable, "-c", _SERVE], stdin=subprocess.PIPE,
                                                   stdout=subprocess.PIPE, env=env))
                _widen(self.procs[-1].stdout)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def map(self, work: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """`work` over `items`, results in the items' order, this process doing its share: with
        n workers, item i goes to worker i mod (n + 1), the last share being this process's.
        `work` must be a module-level function (or a partial of one) and its items and results
        picklable. A worker that fails or stops raises here."""
        items = list(items)
        level = logging.getLogger("memflow").getEffectiveLevel()
        shares = len(self.procs) + 1
        for k, proc in enumerate(self.procs):
            job = Path(self.folder) / f"job-{k}.pickle"
            job.write_bytes(pickle.dumps((work, level, items[k::shares]), pickle.HIGHEST_PROTOCOL))
            try:
                proc.stdin.write(f"{job}\n".encode())
                proc.stdin.close()
            except BrokenPipeError:
                raise _stopped(proc) from None
        for i, item in enumerate(items):
            k = i % shares
            yield work(item) if k == shares - 1 else _replayed(_received(self.procs[k]))

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                try:
                    pipe.close()
                except BrokenPipeError:  # a worker killed before it read its job
                    pass
        shutil.rmtree(self.folder, ignore_errors=True)


def _widen(pipe) -> None:
    """A pipe that holds about a part's result (1 MiB, where Linux allows it; 64 KiB is the
    default): a worker goes on with its next part while this process writes tables instead of
    waiting for it to read."""
    try:
        import fcntl

        fcntl.fcntl(pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError):  # not Linux, or over /proc/sys/fs/pipe-max-size: the default
        pass



def start_workers(count: int) -> Workers | None:
    """`Workers(count)`, or None (this process parses alone, with a warning) when no worker
    can be started: a missing interpreter, a process limit."""
    if count < 1:
        return None
    try:
        return Workers(count)
    except OSError as exc:
        logging.getLogger("memflow.index").warning(
            "file-parsing workers could not start (%s): parsing in this process", exc)
        return None


def _stopped(proc: subprocess.Popen) -> RuntimeError:
    return RuntimeError(f"a file-parsing worker stopped (exit code {proc.wait()}); its error is printed above")


def _received(proc: subprocess.Popen) -> tuple:
    try:
        outcome = pickle.load(proc.stdout)
    except EOFError:
        raise _stopped(proc) from None
    if outcome[0] == "error":
        raise RuntimeError(f"a file-parsing worker failed: {outcome[1]}")
    return outcome[1:]


def _replayed(done: tuple[R, Records]) -> R:
    result, records = done
    for name, level, message in records:
        logging.getLogger(name).log(level, "%s", message)
    return result


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: Records = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.name, record.levelno, record.getMessage()))


def serve() -> None:
    """A worker: imports the index modules, reads its job file's path from stdin, then sends
    each item's result and what it logged, pickled, to the stdout this process started with
    (anything else printed goes to stderr)."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's: it stops the workers
    from memflow.tasks.ground.memory import FEW_COLLECTIONS, lean_allocators

    lean_allocators(arrow=False)
    gc.set_threshold(FEW_COLLECTIONS)  # a worker only parses (`memory.few_collections`)
    for name in PRELOAD:
        importlib.import_module(name)
    job = sys.stdin.readline().strip()
    if not job:  # closed without work
        return
    work, level, items = pickle.loads(Path(job).read_bytes())
    logger = logging.getLogger("memflow")
    handler = _Records()
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    for item in items:
        handler.records = []
        try:
            outcome = ("ok", work(item), handler.records)
        except Exception as exc:  # sent to the caller, which raises it
            outcome = ("error", "".join(traceback.format_exception_only(exc)).strip()
                       + "\n" + traceback.format_exc())
        pickle.dump(outcome, out, pickle.HIGHEST_PROTOCOL)
        out.flush()
        if outcome[0] == "error":
            break

