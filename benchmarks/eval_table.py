"""Markdown tables of `memflow eval locomo` runs: one row per output folder (one per setting
combination for a `--grid` run), then the raw-turn and transcript baselines of the first run;
then `budget_recall_any` per question category, memory-flows beside the transcript baseline;
then, for knowledge updates (techchat), `current_first`: the share of contexts that state the
current value before every earlier value they show.

    .venv/bin/python benchmarks/eval_table.py DIR [DIR ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

BUDGETS = ["250", "500", "1000", "2000"]  # every budget of the first run (techchat adds 4000)


def row(name: str, s: dict, seconds) -> str:
    r, b = s["recall_any"], s["budget_recall_any"]
    cells = " | ".join(f"{b[k]:.3f}" for k in BUDGETS)
    return f"| {name} | {cells} | {r['1']:.3f} | {r['10']:.3f} | {s['mrr']:.3f} | {seconds} |"


def runs(folders: list[str]) -> list[tuple[str, dict, object]]:
    """(name, summary, seconds) per run; a grid run gives one per combination."""
    out = []
    for folder in folders:
        summary = json.loads((Path(folder) / "summary.json").read_text())
        seconds = round(summary["run"]["seconds"])
        for part in summary.get("grid") or [{"settings": {}, "summary": summary}]:
            label = " ".join(f"{k}={v}" for k, v in part["settings"].items())
            out.append((f"{Path(folder).name} {label}".strip(), part["summary"], seconds))
    return out


def main(folders: list[str]) -> None:
    found = runs(folders)
    BUDGETS[:] = list(found[0][1]["budget_recall_any"])
    print("| run | " + " | ".join(f"budget_any@{b}" for b in BUDGETS)
          + " | recall_any@1 | @10 | MRR | seconds |")
    print("|---|" + "---|" * (len(BUDGETS) + 4))
    for name, summary, seconds in found:
        print(row(name, summary, seconds))
    first = found[0][1]
    print(row("raw-turn BM25 baseline", first["baseline"], "-"))
    if first.get("transcript"):
        print(row("transcript (memory-flows over the raw transcripts)", first["transcript"], "-"))
    categories(found)
    current_first(found)


def current_first(found: list[tuple[str, dict, object]]) -> None:
    """The current value before every earlier one, per run and beside both baselines."""
    if not any(summary.get("current_first") for _, summary, _ in found):
        return
    print()
    print("| run | updates | " + " | ".join(f"current_first@{b}" for b in BUDGETS) + " |")
    print("|---|---|" + "---|" * len(BUDGETS))
    sides = [(name, summary) for name, summary, _ in found]
    sides += [("raw-turn BM25 baseline", found[0][1]["baseline"])]
    if found[0][1].get("transcript"):
        sides += [("transcript baseline", found[0][1]["transcript"])]
    for name, block in sides:
        if block.get("current_first"):
            cells = " | ".join(f"{block['current_first'][b]:.3f}" for b in BUDGETS)
            print(f"| {name} | {block['updates']} | {cells} |")


def categories(found: list[tuple[str, dict, object]]) -> None:
    """budget_recall_any per LoCoMo category, one row per run and category (transcript beside)."""
    print()
    print("| run | category | questions | " + " | ".join(f"@{b}" for b in BUDGETS)
          + " | transcript " + " / ".join(f"@{b}" for b in BUDGETS) + " |")
    print("|---|---|---|" + "---|" * (len(BUDGETS) + 1))
    for name, summary, _ in found:
        theirs = (summary.get("transcript") or {}).get("per_category", {})
        for category, block in summary.get("per_category", {}).items():
            cells = " | ".join(f"{block['budget_recall_any'][b]:.3f}" for b in BUDGETS)
            other = theirs.get(category)
            beside = " / ".join(f"{other['budget_recall_any'][b]:.3f}" for b in BUDGETS) if other else "-"
            print(f"| {name} | {category} | {block['questions']} | {cells} | {beside} |")


if __name__ == "__main__":
    main(sys.argv[1:])
