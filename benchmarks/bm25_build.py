"""Building the BM25 score matrix from the terms cached per chunk: bm25s's own `index()` against
the vectorised `bm25_matrix` (same scores, see tests/test_indexing.py), on the benchmark corpus.
Every index run that changes anything pays this once.

    .venv/bin/python benchmarks/bm25_build.py [--sizes 2300,10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus import build  # noqa: E402


def best_of(fn, repeat: int = 3) -> float:
    values = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        values.append(time.perf_counter() - started)
    return min(values)


def main() -> None:
    import bm25s

    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import init_workspace, layout
    from memflow.tasks.index import run_index
    from memflow.tasks.stores import keyword
    from memflow.tasks.stores.lance import IndexStore

    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="2300,10000")
    args = parser.parse_args()
    print("| notes | chunks | bm25s index() (s) | bm25_matrix (s) | ratio |")
    print("|---|---|---|---|---|")
    for count in map(int, args.sizes.split(",")):
        settings = load_settings(tempfile.mkdtemp())
        init_workspace(layout(settings))
        build(layout(settings).root, count)
        run_index(settings)
        terms = IndexStore(layout(settings).index_dir / "lance").chunk_columns(["terms"]).column("terms")
        as_lists = terms.to_pylist()
        theirs = best_of(lambda: bm25s.BM25(method="lucene", k1=1.5, b=0.75).index(
            as_lists, show_progress=False))
        ours = best_of(lambda: keyword.bm25_matrix(terms))
        print(f"| {count} | {len(as_lists)} | {theirs:.3f} | {ours:.3f} | {ours / theirs:.2f} |")


if __name__ == "__main__":
    main()
