"""Stage 2, index: a large run's files parsed in worker processes, results in their order.

Parsing a file (frontmatter, blocks, chunks, terms, links) is pure CPU work in Python, about
two thirds of a cold index; the LanceDB writes and the snapshot build stay in the calling
process. A worker is a fresh interpreter that imports this module, not a fork and not
`multiprocessing`: the caller has LanceDB's threads running (forking it could deadlock), and
multiprocessing's spawn runs the caller's main script again in every worker (a script without
an `if __name__ == "__main__"` guard would index inside each worker). Each worker gets its share
of the parts in a job file, part i going to worker i mod n, and sends each result back on its
stdout as it is done; the caller reads them in order, so a worker that runs ahead waits on a
full pipe (memory stays bounded). What a worker logged comes back with its result and is
logged here, in order.
"""

from __future__ import annotations

import logging
import os
import pickle
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
_SERVE = f"import sys; from {__name__} import serve; serve(sys.argv[1])"


def worker_count(setting: int, files: int) -> int:
    """Processes to parse `files` with: 1 (this process) for small runs or when `setting` is
    1, else `setting` (0: one per core this process may use), no more than one per
    FILES_PER_WORKER files."""
    if setting == 1 or files < MIN_FILES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(setting or cores, files // FILES_PER_WORKER))


def ordered_map(work: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """`work` over `items`, results in the items' order: in this process when `workers` is 1,
    else in that many worker processes. `work` must be a module-level function (or a partial
    of one) and its items and results picklable. A worker that fails raises here."""
    if workers <= 1:
        yield from map(work, items)
        return
    items = list(items)
    level = logging.getLogger("memflow").getEffectiveLevel()
    with tempfile.TemporaryDirectory(prefix="memflow-parse-") as folder:
        procs = []
        try:
            for k in range(workers):
                job = Path(folder) / f"job-{k}.pickle"
                job.write_bytes(pickle.dumps((work, level, items[k::workers]), pickle.HIGHEST_PROTOCOL))
                procs.append(subprocess.Popen([sys.executable, "-c", _SERVE, str(job)],
                                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE))
            for i in range(len(items)):
                yield _replayed(_received(procs[i % workers]))
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
                proc.stdout.close()


def _received(proc: subprocess.Popen) -> R:
    try:
        outcome = pickle.load(proc.stdout)
    except EOFError:
        raise RuntimeError(f"a file-parsing worker stopped (exit code {proc.wait()}); "
                           "its error is printed above") from None
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


def serve(job: str) -> None:
    """A worker: each item of the job's share, its result and what it logged, pickled to the
    stdout this process started with (anything else printed goes to stderr)."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's: it stops the workers
    from memflow.tasks.ground.memory import lean_allocators

    lean_allocators()
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

