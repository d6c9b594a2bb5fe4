"""Human-readable renderings of `memflow.api` results for the CLI (and the MCP server's text
content): plain values in, lines of text out. `--json` prints the values themselves."""

from __future__ import annotations

from typing import Any


def recent_lines(notes: list[dict]) -> list[str]:
    """`recent`: one line per file, newest first: modified time, path, name and description."""
    if not notes:
        return ["nothing changed in that time"]
    lines = []
    for note in notes:
        about = " - ".join(part for part in (note.get("name"), note.get("description")) if part)
        lines.append(f"{note['modified']}  {note['path']}" + (f"  {about}" if about else ""))
    return lines


def context_text(found: dict) -> str:
    """`context`: the note's text, then its related notes: `[hop>]` it links to, `[hop<]` links to it."""
    related = found["related"]
    lines = [found["text"].rstrip("\n"), "",
             f"related ({len(related)}{', truncated' if found['truncated'] else ''}):"]
    lines += [f"- [{r['hop']}{'>' if r['direction'] == 'out' else '<'}] {r['path']}: "
              f"{r.get('name', '')} {r.get('description', '')}".rstrip(" :") for r in related]
    return "\n".join(lines)


def proactive_lines(found: dict) -> list[str]:
    """`proactive`: the day's interest topics with why, their keywords and the notes behind them."""
    if found["status"] != "ok":
        return [f"no interest topics for {found['date']}: {found.get('reason', found['status'])} "
                "(a dream run of that day writes them)"]
    topics = found.get("topics") or []
    lines = [f"interest topics of {found['date']}: {len(topics)}"]
    for topic in topics:
        if not isinstance(topic, dict):
            lines.append(f"- {topic}")
            continue
        lines.append(f"- {topic.get('title', '')}" + (f": {topic['reason']}" if topic.get("reason") else ""))
        if topic.get("keywords"):
            lines.append("    keywords: " + ", ".join(str(k) for k in topic["keywords"]))
        lines += [f"    {path}" for path in topic.get("paths") or []]
    return lines


def frontmatter_text(values: dict[str, Any]) -> str:
    """`fm get/set`: the frontmatter as the YAML a note carries (key order kept)."""
    if not values:
        return "(no frontmatter)"
    import yaml

    return yaml.safe_dump(_plain(values), sort_keys=False, allow_unicode=True, width=100).rstrip("\n")


def _plain(value: Any) -> Any:
    """What YAML writes as it reads (text, numbers, dates) kept; anything else as text."""
    from datetime import date

    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, date, type(None))) else str(value)


def inbox_lines(events: list[dict]) -> list[str]:
    """`inbox`: one line per job event, then the paths it touched, indented."""
    if not events:
        return ["no events"]
    lines = []
    for event in events:
        lines.append(f"{event['time']}  {event['job']}  {event['title']}: {event['summary']}")
        lines += [f"    {rel}" for rel in event["paths"]]
    return lines


def runs_lines(runs: list[dict]) -> list[str]:
    """`dream runs`: id, start, status and action counts of each run, oldest first."""
    if not runs:
        return ["no dream runs yet"]
    lines = []
    for run in runs:
        actions = " ".join(f"{k}={v}" for k, v in sorted(run["actions"].items())) or "-"
        lines.append(f"{run['run_id']}  {run['started']}  {run['status']:<12} {actions}")
    return lines
