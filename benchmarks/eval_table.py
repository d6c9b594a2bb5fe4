"""Markdown tables of `memflow eval locomo` runs: one row per output folder, the raw-turn
baseline of the first run last; then `budget_recall_any` per question category.

    .venv/bin/python benchmarks/eval_table.py DIR [DIR ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def row(name: str, s: dict, seconds) -> str:
    r, b = s["recall_any"], s["budget_recall_any"]
    return (f"| {name} | {r['1']:.3f} | {r['5']:.3f} | {r['10']:.3f} | {b['500']:.3f} | {b['1000']:.3f} | "
            f"{b['2000']:.3f} | {s['mrr']:.3f} | {s['ndcg@10']:.3f} | {seconds} |")


def main(folders: list[str]) -> None:
    print("| run | recall_any@1 | @5 | @10 | budget_any@500 | @1000 | @2000 | MRR | nDCG@10 | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    first = None
    for folder in folders:
        summary = json.loads((Path(folder) / "summary.json").read_text())
        first = first or summary
        print(row(Path(folder).name, summary, summary["run"]["seconds"]))
    print(row("raw-turn BM25 baseline", first["baseline"], "-"))
    if "transcript" in first:
        print(row("transcript (memory-flows over the raw transcripts)", first["transcript"], "-"))
    categories(folders)


def categories(folders: list[str], budgets=("500", "1000", "2000")) -> None:
    """budget_recall_any per LoCoMo category, one row per run and category."""
    print()
    print("| run | category | questions | " + " | ".join(f"budget_any@{b}" for b in budgets) + " |")
    print("|---|---|---|" + "---|" * len(budgets))
    for folder in folders:
        summary = json.loads((Path(folder) / "summary.json").read_text())
        for name, block in summary.get("per_category", {}).items():
            cells = " | ".join(f"{block['budget_recall_any'][b]:.3f}" for b in budgets)
            print(f"| {Path(folder).name} | {name} | {block['questions']} | {cells} |")


if __name__ == "__main__":
    main(sys.argv[1:])
