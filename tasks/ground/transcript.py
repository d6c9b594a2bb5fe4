"""Session-log messages as text: what a message says, when, and one transcript line per log line
(`Speaker: text`), so a log is readable and searchable by its own line numbers."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo


def message_text(message: dict) -> str:
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


def message_date(message: dict, tz: str) -> date | None:
    """Date of a message's timestamp (ISO string or epoch seconds) in the workspace timezone."""
    stamp = message.get("timestamp") or message.get("time") or message.get("created_at")
    if stamp in (None, ""):
        return None
    try:
        if isinstance(stamp, (int, float)):
            moment = datetime.fromtimestamp(stamp / 1000 if stamp > 1e11 else stamp, timezone.utc)
        else:
            moment = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=ZoneInfo(tz))
    except (ValueError, OverflowError, OSError):
        return None
    return moment.astimezone(ZoneInfo(tz)).date()


def message_line(message: dict) -> str:
    """`Speaker: text` on one line (the speaker's name, else the role)."""
    who = message.get("name") or message.get("role", "?")
    return f"{who}: {' '.join(message_text(message).split())}"


def transcript_lines(text: str, tz: str) -> list[tuple[str, date | None]]:
    """A session log's text -> (transcript line, date) per log line; a blank or unreadable line
    stays as an empty line, so line N of the transcript is line N of the log. A message without
    a timestamp takes the date of the one before it."""
    out: list[tuple[str, date | None]] = []
    current = None
    for raw in text.split("\n"):
        try:
            message = json.loads(raw) if raw.strip() else None
        except json.JSONDecodeError:
            message = None
        if not isinstance(message, dict) or not message_text(message).strip():
            out.append(("", current))
            continue
        current = message_date(message, tz) or current
        out.append((message_line(message), current))
    if out and out[-1][0] == "" and text.endswith("\n"):
        out.pop()  # the newline that ends the last line is not a line of its own
    return out
