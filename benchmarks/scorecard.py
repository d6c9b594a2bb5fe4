"""The scorecard: LoCoMo dev (evidence recall), memright dev (the current value first) and the
generated technical chats (evidence recall on long messages), run with the same settings and
printed side by side, one column per run. A default changes only when no line of it drops
beyond noise against the run before.

    .venv/bin/python benchmarks/scorecard.py --out /tmp/sc/after                    # run all three
    .venv/bin/python benchmarks/scorecard.py --out /tmp/sc/before --set pack_answers_tokens=0
    .venv/bin/python benchmarks/scorecard.py --show /tmp/sc/before /tmp/sc/after    # compare runs

`--dream` dreams every workspace first; `--set K=V ...` are setting overrides, as `memflow eval`
takes them. Each evaluation writes its own folder under `--out` (locomo/, memright/, techchat/)
with its summary.json; `--show` reads those back, so a run is never repeated to be compared.
Data: `../shared/data/locomo/locomo-dev.json` and `../shared/data/memory-right/` beside the
repository (or `--locomo`, `--memright`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SHARED = HERE.parent / "shared" / "data"
MEMFLOW = [sys.executable, "-m", "memflow.cli"]
KINDS = ["update", "chain", "coexist", "not_a_change", "stable", "past", "all"]


def run(out: Path, dream: bool, overrides: list[str], locomo: Path, memright: Path) -> None:
    """The three evaluations, one after the other, each into its folder under `out`."""
    extra = (["--dream"] if dream else []) + (["--set", *overrides] if overrides else [])
    jobs = {"locomo": ["eval", "locomo", str(locomo), "--budgets", "250,500,1000,2000"],
            "memright": ["eval", "memright", str(memright)],
            "techchat": ["eval", "techchat", "--budgets", "250,500,1000,2000,4000"]}
    for name, args in jobs.items():
        print(f"== {name}", file=sys.stderr, flush=True)
        subprocess.run([*MEMFLOW, *args, "--out", str(out / name), *extra], check=True,
                       stdout=subprocess.DEVNULL)


def lines(folder: Path) -> dict[str, float | None]:
    """Metric name -> value of one scorecard run (None where an evaluation is missing)."""
    out: dict[str, float | None] = {}
    for name in ("locomo", "techchat"):
        path = folder / name / "summary.json"
        summary = json.loads(path.read_text()) if path.exists() else {}
        for budget, value in (summary.get("budget_recall_any") or {}).items():
            out[f"{name} budget_any@{budget}"] = value
        for budget, value in (summary.get("current_first") or {}).items():
            out[f"{name} current_first@{budget}"] = value
    path = folder / "memright" / "summary.json"
    if path.exists():
        summary = json.loads(path.read_text())
        for system in ("memflow", "bm25", "bm25-newest"):
            table = summary["systems"][system]
            label = "memright" if system == "memflow" else f"memright[{system}]"
            for kind in KINDS:
                for budget, cell in table.get(kind, {}).items():
                    out[f"{label} {kind} current_first@{budget}"] = cell["current_first"]
        profile = summary.get("profile") or {}
        if "share" in profile:
            out["memright profile current share"] = profile["share"]
        if "stale_shown" in profile:
            out["memright profile stale shown"] = float(profile["stale_shown"])
        if "stale_alone" in profile:
            out["memright profile old value alone"] = float(profile["stale_alone"])
    return out


def show(folders: list[Path]) -> None:
    """A Markdown table: a row per metric, a column per run (and the change from the first)."""
    runs = [lines(folder) for folder in folders]
    names = list(dict.fromkeys(name for found in runs for name in found))
    print("| metric | " + " | ".join(folder.name for folder in folders)
          + (" | change |" if len(folders) > 1 else " |"))
    print("|---|" + "---|" * (len(folders) + (len(folders) > 1)))
    for name in names:
        values = [found.get(name) for found in runs]
        cells = ["-" if v is None else f"{v:.3f}" for v in values]
        change = ""
        if len(values) > 1 and values[0] is not None and values[-1] is not None:
            change = f" | {values[-1] - values[0]:+.3f}"
        elif len(values) > 1:
            change = " | -"
        print(f"| {name} | " + " | ".join(cells) + change + " |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, help="folder for this run's three evaluations")
    p.add_argument("--dream", action="store_true", help="dream every workspace before searching")
    p.add_argument("--set", nargs="*", default=[], metavar="K=V", help="setting overrides")
    p.add_argument("--locomo", type=Path, default=SHARED / "locomo" / "locomo-dev.json")
    p.add_argument("--memright", type=Path, default=SHARED / "memory-right")
    p.add_argument("--show", nargs="+", type=Path, metavar="DIR", help="print earlier runs side by side")
    args = p.parse_args(argv)
    if args.show:
        show(args.show)
        return 0
    if not args.out:
        p.error("--out or --show is required")
    run(args.out, args.dream, args.set, args.locomo, args.memright)
    show([args.out])
    return 0


if __name__ == "__main__":
    sys.exit(main())
