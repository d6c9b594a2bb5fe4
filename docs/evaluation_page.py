"""The evaluation page of the docs: tables and charts made from the `summary.json` files under
docs/results/ (each the `--out` of a `memflow eval` run; locomo/, memright/ and techchat/ are
a scorecard run's). docs/gen.py writes what these functions return."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"


def _summaries() -> list[tuple[str, dict]]:
    return [(str(path.parent.relative_to(RESULTS)), json.loads(path.read_text(encoding="utf-8")))
            for path in sorted(RESULTS.rglob("summary.json"))]


def _memright_section(name: str, summary: dict) -> str:
    run = summary.get("run", {})
    budgets = [str(b) for b in run.get("budgets", [])]
    systems = list(summary["systems"])
    kinds = list(summary["systems"][systems[0]])
    head = "| kind | n | " + " | ".join(f"{s} @{b}" for s in systems for b in budgets) + " |\n"
    rule = "|---|---|" + "---|" * (len(systems) * len(budgets)) + "\n"
    rows = []
    for kind in kinds:
        n = summary["systems"][systems[0]][kind][budgets[0]]["questions"]
        cells = [f"{summary['systems'][s][kind][b]['current_first']:.3f}" for s in systems for b in budgets]
        rows.append(f"| {kind} | {n} | " + " | ".join(cells) + " |\n")
    profile = summary.get("profile") or {}
    extra = ""
    if profile:
        extra = (f"\nProfile at {profile.get('budget')} tokens: it holds the current value of "
                 f"{profile.get('met')} of {profile.get('questions')} update, chain and stable "
                 f"questions ({profile.get('share', 0):.3f}); "
                 f"old values shown: {profile.get('stale_shown')}, "
                 f"an old value on a line without its current one: {profile.get('stale_alone')}.\n")
    return (f"## memright: the current value first (`{name}`)\n\n"
            f"`current_first@B`: every current value of the question is in the context packed to B "
            f"cl100k tokens, and no line holding only an old value comes before it. "
            f"{summary.get('questions')} questions, dream: {'yes' if run.get('dream') else 'no'}, "
            f"chat model: {run.get('chat_model') or 'none'}, embedding model: "
            f"{run.get('embedding_model') or 'none'}, {run.get('seconds')} s, code "
            f"`{str(run.get('git_commit', ''))[:10]}`.\n\n"
            f"```bash\n{_command(name, run)}\n```\n\n" + _chart_link(name) + head + rule + "".join(rows)
            + extra + "\n")


def _chart_link(name: str) -> str:
    return f"![{name}](img/eval-{name.replace('/', '-')}.svg)\n\n"


def _command(name: str, run: dict) -> str:
    data = "../shared/data/memory-right" if "memright" in name else ""
    dream = " --dream" if run.get("dream") else ""
    sets = "".join(f" {k}={v}" for k, v in (run.get("overrides") or {}).items())
    sets = f" --set{sets}" if sets else ""
    if "memright" in name:
        return f".venv/bin/memflow eval memright {data} --out docs/results/{name}{dream}{sets}"
    budgets = ",".join(str(b) for b in run.get("budgets", []))
    data = str(run.get("data", ""))
    what = "techchat" if "techchat" in name else f"locomo {data if data.endswith('.json') else 'DATA.json'}"
    return f".venv/bin/memflow eval {what} --budgets {budgets} --out docs/results/{name}{dream}{sets}"


def _recall_section(name: str, summary: dict) -> str:
    run = summary.get("run", summary.get("meta", {}))
    rows = []
    for label, block in (("memory-flows", summary), ("raw-turn BM25", summary.get("baseline") or {}),
                         ("transcript", summary.get("transcript") or {})):
        budget = block.get("budget_recall_any") or {}
        if budget:
            rows.append((label, "budget_any", budget))
        current = block.get("current_first") or {}
        if current:
            rows.append((label, "current_first", current))
    budgets = list(dict.fromkeys(b for _, _, values in rows for b in values))
    table = ("| system | metric | " + " | ".join(f"@{b}" for b in budgets) + " |\n"
             "|---|---|" + "---|" * len(budgets) + "\n")
    for label, metric, values in rows:
        table += f"| {label} | {metric} | " + " | ".join(
            "-" if values.get(b) is None else f"{values[b]:.3f}" for b in budgets) + " |\n"
    return (f"## {name}: evidence within a token budget\n\n"
            "`budget_any@B`: share of questions whose context packed to B cl100k tokens holds "
            "at least one evidence turn.\n\n"
            f"```bash\n{_command(name, run)}\n```\n\n" + _chart_link(name) + table + "\n"
            + _categories(summary, budgets))


def _categories(summary: dict, budgets: list[str]) -> str:
    """memory-flows' budget_any per question category (categories with questions only)."""
    cells = [(name, block) for name, block in (summary.get("per_category") or {}).items()
             if block.get("questions")]
    if not cells:
        return ""
    table = ("| category | questions | " + " | ".join(f"@{b}" for b in budgets) + " |\n"
             "|---|---|" + "---|" * len(budgets) + "\n")
    for name, block in cells:
        values = block.get("budget_recall_any") or {}
        table += f"| {name} | {block['questions']} | " + " | ".join(
            "-" if values.get(b) is None else f"{values[b]:.3f}" for b in budgets) + " |\n"
    return "memory-flows by question category:\n\n" + table + "\n"


COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]


def svg_chart(title: str, budgets: list[str], series: dict[str, list[float | None]]) -> str:
    """A line chart (metric against token budget, one line per system) as plain SVG text: no
    plotting library, and the same bytes for the same numbers, so `--check` can compare it."""
    width, height, left, top, plot_w, plot_h = 560, 300, 50, 30, 330, 220
    x = {b: left + plot_w * i / max(len(budgets) - 1, 1) for i, b in enumerate(budgets)}

    def y(value: float) -> float:
        return top + plot_h * (1 - value)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="18" font-size="13">{title}</text>']
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
                   'stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.2f}</text>')
    for b in budgets:
        out.append(f'<text x="{x[b]:.1f}" y="{top + plot_h + 16}" text-anchor="middle">{b}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle">tokens</text>')
    for i, (label, values) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        points = " ".join(f"{x[b]:.1f},{y(v):.1f}" for b, v in zip(budgets, values) if v is not None)
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<rect x="{left + plot_w + 20}" y="{top + 18 * i}" width="12" height="3" '
                   f'fill="{colour}"/>')
        out.append(f'<text x="{left + plot_w + 38}" y="{top + 18 * i + 5}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def evaluation_charts() -> dict[str, str]:
    """img/eval-<run>.svg for each result folder: the headline metric against the budget."""
    charts = {}
    for name, summary in _summaries():
        slug = name.replace("/", "-")
        if "systems" in summary:
            budgets = [str(b) for b in summary["run"]["budgets"]]
            series = {system: [table["all"][b]["current_first"] for b in budgets]
                      for system, table in summary["systems"].items()}
            title = f"{name}: current value first (all questions)"
        else:
            budgets = [str(b) for b in summary["run"]["budgets"]]
            series = {label: [(block.get("budget_recall_any") or {}).get(b) for b in budgets]
                      for label, block in (("memory-flows", summary),
                                           ("raw-turn BM25", summary.get("baseline") or {}),
                                           ("transcript", summary.get("transcript") or {}))
                      if block.get("budget_recall_any")}
            title = f"{name}: evidence within the budget (budget_any)"
        charts[f"img/eval-{slug}.svg"] = svg_chart(title, budgets, series)
    return charts


def _scorecard_section() -> str:
    """benchmarks/scorecard.py's table of docs/results/ (its locomo/, memright/ and techchat/
    folders are a scorecard run's), as `--show` prints it."""
    import contextlib

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import scorecard
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        scorecard.show([RESULTS])
    table = printed.getvalue().replace("| metric | results |", "| metric | value |")
    return ("## The scorecard\n\n"
            "Every line a default change is judged by: LoCoMo dev (evidence within the budget), "
            "memright dev (the current value first, per kind of question, beside two raw-message "
            "BM25 baselines) and the generated technical chats. A default changes only when no "
            "line drops beyond noise against the run before (LoCoMo dev: 999 questions; techchat "
            "108; memright 163).\n\n"
            "```bash\n"
            ".venv/bin/python benchmarks/scorecard.py --out /tmp/sc      # runs all three (~10 min)\n"
            "for e in locomo memright techchat; do\n"
            "  mkdir -p docs/results/$e && cp /tmp/sc/$e/summary.json docs/results/$e/\ndone\n"
            ".venv/bin/python docs/gen.py                                   # this page\n"
            ".venv/bin/python benchmarks/scorecard.py --show docs/results   # the table alone\n```\n\n"
            "Only each run's `summary.json` is kept in the repository (without the per-scenario "
            "values of memright's profile, which quote the data set), never the workspaces or "
            "`questions.parquet`.\n\n"
            + table + "\n")


def evaluation_page(head: str) -> str:
    parts = [head, "# Evaluation results\n\n",
             "Tables made from the `summary.json` files under `docs/results/` (each folder is the "
             "`--out` of the command shown above its table). To add a run, point its `--out` at a "
             "new folder there and run `.venv/bin/python docs/gen.py`. The full scorecard (LoCoMo "
             "dev, memright dev and the generated technical chats, side by side) is "
             "`.venv/bin/python benchmarks/scorecard.py --out DIR`; how each evaluation scores, and "
             "the decisions its figures made, are in [Evaluation: method and findings]"
             "(evaluation-notes.md). The LoCoMo dev split and the memright scenarios are read from "
             "`../shared/data/` beside the repository (not shipped); `locomo-sample` (the shipped "
             "sample) and `techchat` (generated) run on a fresh clone.\n\n"]
    parts.append(_scorecard_section())
    for name, summary in _summaries():
        if "systems" in summary:
            parts.append(_memright_section(name, summary))
        else:
            parts.append(_recall_section(name, summary))
    return "".join(parts).rstrip() + "\n"
