"""Tokenizer choice for Chinese: character bigrams vs jieba words, measured on the generated
Chinese/English regression set (hit@5 per language), plus per-process start cost.

    .venv/bin/python benchmarks/tokenizer_choice.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path


def hit_rates(kind: str) -> tuple[float, float, float]:
    from memflow.schemas.settings import load_settings
    from memflow.tasks.evaluate.regression_data import generate, write_notes
    from memflow.tasks.ground.workspace import init_workspace, layout
    from memflow.tasks.index import run_index
    from memflow.tasks.recall import search

    settings = load_settings(tempfile.mkdtemp(), keyword_tokenizer=kind)
    lay = layout(settings)
    init_workspace(lay)
    notes, cases = generate()
    write_notes(lay.root, notes)
    started = time.perf_counter()
    run_index(settings)
    seconds = time.perf_counter() - started
    rates = []
    for lang in ("zh", "en"):
        chosen = [c for c in cases if c.lang == lang]
        hits = sum(c.path in [r.path for r in search(settings, c.query, limit=5, link_limit=0,
                                                      with_watermark=False).results] for c in chosen)
        rates.append(hits / len(chosen))
    return rates[0], rates[1], seconds


def start_cost(kind: str) -> float:
    code = ("import time; t = time.perf_counter(); from memflow.tasks.ground.tokenize import tokenize; "
            f"tokenize('我每天骑自行车上班', {kind!r}); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def warm_up() -> None:
    """Import the stack once so the first tokenizer measured does not pay for it."""
    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import init_workspace, layout
    from memflow.tasks.index import run_index

    settings = load_settings(tempfile.mkdtemp())
    init_workspace(layout(settings))
    (Path(settings.workspace) / "daily" / "x.md").write_text("warm up")
    run_index(settings)


if __name__ == "__main__":
    warm_up()
    print("| tokenizer | Chinese hit@5 | English hit@5 | index 520 notes (s) | start cost per process (s) |")
    print("|---|---|---|---|---|")
    for kind in ("bigram", "jieba"):
        zh, en, seconds = hit_rates(kind)
        print(f"| {kind} | {zh:.3f} | {en:.3f} | {seconds:.2f} | {start_cost(kind):.2f} |")
