"""Process memory: allocators that give back what a bulk job freed.

An index run streams rows through Arrow (Python side) and LanceDB (Rust threads). Arrow's
default mimalloc pool keeps freed buffers for reuse, and glibc gives every thread that allocates
its own arena (up to 8 per core), so memory freed by one phase is not the memory the next phase
gets, and the peak is paid twice. Measured on a 4,800-note cold index: 356 -> 295 MiB peak RSS,
same time (benchmarks/scale.py). And glibc raises its mmap threshold each time a mapped block is
freed (up to 32 MiB), after which large blocks come from the heap and stay with the process
when freed: a fixed threshold of 1 MiB keeps big Arrow and NumPy buffers mapped, so each phase's
are given back before the next (24,000 notes, one process: 562 -> 418 MiB peak with the
snapshot build's changes, same time).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_M_ARENA_MAX = -8  # glibc mallopt parameters
_M_MMAP_THRESHOLD = -3
_MMAP_FROM = 1 << 20  # blocks this large are mapped, so freeing one gives it back at once
_DONE = False
FEW_COLLECTIONS = 100_000  # new container objects between two young collections in a bulk job


def lean_allocators(arrow: bool = True) -> None:
    """Arrow on the system allocator (unless not `arrow`: a process that never loads Arrow),
    at most two glibc arenas and a fixed mmap threshold, once per process (before LanceDB starts
    its threads). A no-op where the allocator is not glibc's."""
    global _DONE
    if _DONE:
        return
    _DONE = True
    if arrow:
        import pyarrow as pa

        pa.set_memory_pool(pa.system_memory_pool())
    if sys.platform.startswith("linux"):
        name = ctypes.util.find_library("c")
        libc = ctypes.CDLL(name) if name else None
        if libc is not None and hasattr(libc, "mallopt"):
            libc.mallopt(_M_ARENA_MAX, 2)
            libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_FROM)


@contextmanager
def few_collections() -> Iterator[None]:
    """The cyclic garbage collector run rarely while a bulk job (a cold index parsing every file)
    makes millions of short-lived dicts and lists, none of them in a cycle: with the default
    threshold (700) it walked them, and the long-lived rows beside them, thousands of times
    (~5% of a 24,000-file cold index's CPU). Reference counting still frees everything at once;
    the thresholds before are put back on exit."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], FEW_COLLECTIONS), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
