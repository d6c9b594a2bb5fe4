"""A search's vector product on one BLAS thread: the one module that imports threadpoolctl.

A search multiplies the snapshot's vectors (tens of thousands of rows) by its one or two query
vectors: one pass over the matrix, which a single core does at memory speed. NumPy's OpenBLAS
splits it over every core, and its worker threads then busy-wait for the next product
(OpenBLAS's thread timeout) on a core another process could use. Measured on this 2-core
machine (`benchmarks/realistic_search.py --writes --vectors --model
local/static-all-MiniLM-L6-v2`, 24k files, 45k x 256 vectors): a write -> searchable cost
59.5 ms CPU per write with the pool against 29.2 ms on one thread, the wall time the same; the
product alone, 45,000 x 256 by 2 columns on a loaded machine: 28 ms wall / 15 ms CPU pooled,
5.9 ms / 4.0 ms on one thread. Both give the same values (each row's dot product is summed in
the same order).
"""

from __future__ import annotations

import numpy as np

_CONTROLLER = None  # threadpoolctl's view of the loaded BLAS libraries: found once (~0.5 ms)


def _controller():
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def matmul(matrix: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """`matrix @ columns` with NumPy's BLAS held to one thread for the call (the setting is the
    process's: a product another thread runs meanwhile is on one thread too)."""
    with _controller().limit(limits=1, user_api="blas"):
        return np.matmul(matrix, columns)
