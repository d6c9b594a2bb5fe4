"""Session-log messages as text: what a message says, when, and one transcript line per log line
(`Speaker: text`), so a log is readable and searchable by its own line numbers; a message
longer than a packing unit is several lines, its pieces, each naming its speaker, log line and
part (`transcript_units`)."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

from memflow.tasks.ground.pieces import LINE_END, message_pieces


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


def own_time(message: dict) -> object:
    """A message's own timestamp as given (`timestamp`, `time` or `created_at`), else None."""
    return next((message[k] for k in ("timestamp", "time", "created_at") if message.get(k) not in (None, "")), None)


def message_date(message: dict, tz: str) -> date | None:
    """Date of a message's timestamp (ISO string or epoch seconds) in the workspace timezone;
    for a message logged without one, the day it was captured (`logged_at`)."""
    stamp = own_time(message)
    if stamp is None:
        stamp = message.get("logged_at")
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


# a piece of a long message: `assistant (L45 part 2/5, id m-7): text` (the id when it has one)
PIECE_RE = re.compile(r"^(?P<who>[^\n]*?) \(L(?P<line>\d+) part (?P<part>\d+)/(?P<parts>\d+)"
                      r"(?:, id [^)\n]*)?\): ")


def piece_of(line: str) -> tuple[int, int] | None:
    """(log line, part) of a transcript line that is a piece of a long message, else None."""
    match = PIECE_RE.match(line) if " (L" in line else None  # the lazy prefix scans the line
    return (int(match.group("line")), int(match.group("part"))) if match else None


def line_places(text: str, end_line: int) -> list[tuple[int, int]]:
    """(file line, piece) of each line of a chunk's `text` (its breadcrumb above file lines
    ..end_line, counted back from the end): the pieces of a long message (`user (L3 part 4/5):
    ...`) all stand for their log line, numbered from 1; a whole line is piece 0."""
    lines = text.split("\n")
    places = [(0, 0)] * len(lines)
    number = end_line + 1
    for index in range(len(lines) - 1, -1, -1):
        piece = piece_of(lines[index]) if " part " in lines[index] else None
        number = piece[0] if piece else number - 1
        places[index] = (number, piece[1] if piece else 0)
    return places


def is_code(line: str) -> bool:
    """A transcript line that is a piece of code or a log (`pieces.split_code`)."""
    match = PIECE_RE.match(line) if " (L" in line else None
    body = line[match.end():] if match else ""
    return bool(match) and (LINE_END in body or body.lstrip().startswith(("```", "~~~")))


def unmarked(text: str) -> str:
    """Transcript text with the pieces' positions taken out (`assistant (L45 part 2/5): x` ->
    `assistant: x`): what search sees, where and which part being no words of the message."""
    if " part " not in text:
        return text
    return "\n".join(PIECE_RE.sub(lambda m: f"{m.group('who')}: ", line) for line in text.split("\n"))


def spoken(line: str) -> str:
    """What a transcript line says, without who said it (`user: x`, `Melanie: x`, `assistant
    (L45 part 2/5): x` -> `x`): a role names no one, so a speaker pattern of names misses it."""
    line = unmarked(line)
    at = line.find(": ")
    return line[at + 2:] if at >= 0 else line


def transcript_units(text: str, tz: str, piece_bytes: int) -> list[tuple[int, str, date | None]]:
    """`transcript_lines` with every message longer than `piece_bytes` (as its transcript line)
    in pieces (`pieces.message_pieces`): (log line, transcript line, date), one entry per log
    line, or one per piece, each piece saying who spoke, where and which part it is."""
    out: list[tuple[int, str, date | None]] = []
    raw = text.split("\n")
    for number, (line, day) in enumerate(transcript_lines(text, tz), 1):
        if len(line.encode("utf-8")) <= piece_bytes:
            out.append((number, line, day))
            continue
        message = json.loads(raw[number - 1])
        who = message.get("name") or message.get("role", "?")
        ident = f", id {message['id']}" if message.get("id") not in (None, "") else ""
        room = max(piece_bytes - len(f"{who} (L{number} part 00/00{ident}): ".encode("utf-8")), 80)
        parts = message_pieces(message_text(message), room)
        out.extend((number, f"{who} (L{number} part {k}/{len(parts)}{ident}): {part.text}", day)
                   for k, part in enumerate(parts, 1))
    return out
