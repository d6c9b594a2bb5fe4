"""Search latency on a workspace of long technical sessions (issues #27, #28): `api.search` as
callers get it (watermark included), plain and packed to 1,000 and 4,000 tokens, over every
question of the generated technical-chat set (`memflow eval techchat`, seed 0: 3 conversations,
14 sessions each, messages of 200-1,150 tokens). Each tree builds its own workspaces with its own
`memflow eval techchat` (index formats differ between trees) and is measured in a fresh process;
with --baseline the two trees alternate round by round.

    .venv/bin/python benchmarks/techchat_latency.py --baseline <older tree>/.venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_latency import percentiles  # noqa: E402

BUDGETS = [None, 1000, 4000]


def one(out: Path) -> dict:
    """In this process: every question against its conversation's workspace, each budget."""
    from memflow import api

    data = json.loads((out / "techchat.json").read_text())
    jobs = [(out / "workspaces" / sample["sample_id"], qa["question"]) for sample in data for qa in sample["qa"]]
    result = {}
    for budget in BUDGETS:
        for ws, question in jobs[:5]:  # warm: snapshots mapped, caches as a resident process has them
            api.search(question, ws, limit=5, budget_tokens=budget)
        times = []
        for ws, question in jobs:
            started = time.perf_counter()
            api.search(question, ws, limit=5, budget_tokens=budget)
            times.append(time.perf_counter() - started)
        result[str(budget or "plain")] = percentiles(times)
    return result


def build(python: str, out: Path) -> None:
    memflow = Path(python).with_name("memflow")
    subprocess.run([str(memflow), "eval", "techchat", "--out", str(out)], check=True,
                   capture_output=True, cwd=tempfile.gettempdir())


def measure(python: str, out: Path) -> dict:
    res = subprocess.run([python, str(Path(__file__).resolve()), "--one", str(out)], capture_output=True,
                         text=True, check=False, cwd=tempfile.gettempdir())
    if res.returncode != 0:
        raise RuntimeError(f"{python} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="", help="python of the tree to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(Path(args.one))))
        return
    trees = {"this tree": sys.executable} | ({"baseline": args.baseline} if args.baseline else {})
    root = Path(tempfile.mkdtemp(prefix="techchat-latency-"))
    outs = {name: root / name.replace(" ", "-") for name in trees}
    for name, python in trees.items():
        build(python, outs[name])
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, python in trees.items():
            runs[name].append(measure(python, outs[name]))
    print("| search | " + " | ".join(f"{name} p50 / p95 (ms)" for name in trees)
          + (" | ratio (p50) |" if args.baseline else " |"))
    print("|---|" + "---|" * (len(trees) + bool(args.baseline)))
    for budget in BUDGETS:
        key = str(budget or "plain")
        cells = {name: [statistics.median(r[key][i] for r in runs[name]) for i in (0, 1)] for name in trees}
        row = f"| {'plain' if budget is None else f'packed, {budget:,} tokens'} | " + " | ".join(
            f"{cells[name][0]:.1f} / {cells[name][1]:.1f}" for name in trees)
        if args.baseline:
            row += f" | {cells['this tree'][0] / cells['baseline'][0]:.2f}x"
        print(row + " |")


if __name__ == "__main__":
    main()
