"""Progress of long CLI jobs on stderr: a tqdm bar on a terminal, otherwise a log line every
`MEMFLOW_PROGRESS_SECONDS` seconds (default 10; 0: a line at the start, on every step and at
the end, for tests and logs). Jobs that cannot count their steps get a heartbeat instead
(`activity`): elapsed time, so a quiet run is not mistaken for a hung one."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_SECONDS = 10.0


def interval() -> float:
    return float(os.environ.get("MEMFLOW_PROGRESS_SECONDS", DEFAULT_SECONDS))


class Progress:
    """Steps of one job (`total` known or None); owns a bar on a terminal, so it is a class."""

    def __init__(self, label: str, total: int | None = None, unit: str = "step", stream=None):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream or sys.stderr
        self.every, self.done, self.lines = interval(), 0, 0
        self.started = self.last = time.monotonic()
        self.lock = threading.Lock()
        self.bar = None
        if self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=label, unit=unit, file=self.stream, leave=False)
        elif self.every == 0:
            self._say("started")

    def _say(self, what: str) -> None:
        self.lines += 1
        print(f"{self.label}: {what}, {time.monotonic() - self.started:.0f} s", file=self.stream, flush=True)

    def _count(self) -> str:
        if self.total:
            return f"{self.done}/{self.total} {self.unit}(s) ({100 * self.done // self.total}%)"
        return f"{self.done} {self.unit}(s)" if self.done else "running"

    def update(self, n: int = 1) -> None:
        with self.lock:
            self.done += n
            if self.bar is not None:
                self.bar.update(n)
            elif time.monotonic() - self.last >= self.every:
                self.last = time.monotonic()
                self._say(self._count())

    def tick(self) -> None:
        """A heartbeat: the bar's clock, or a line when one is due."""
        self.update(0)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.lines:  # a job that said it was running says it ended
            self._say(f"done, {self._count()}")


@contextmanager
def progress(label: str, total: int | None = None, unit: str = "step") -> Iterator[Progress]:
    bar = Progress(label, total, unit)
    try:
        yield bar
    finally:
        bar.close()


@contextmanager
def activity(label: str) -> Iterator[Progress]:
    """A heartbeat for a job that cannot count its steps: a thread ticks once a second."""
    stop = threading.Event()
    with progress(label) as bar:
        beat = threading.Thread(target=lambda: [bar.tick() for _ in iter(lambda: stop.wait(1.0), True)],
                                daemon=True)
        beat.start()
        try:
            yield bar
        finally:
            stop.set()
            beat.join()
