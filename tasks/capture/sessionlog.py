"""Session logs: `session/dialog/<session_id>.jsonl`, one cleaned message per line.

Before saving, whole `tool` messages, tool-result content blocks (OpenAI and Anthropic shapes)
and base64 data blocks (images, files, audio) are removed, so recalled memories and media never
count as new evidence. Messages are de-duplicated by `id`, or by a hash of role, timestamp and
content when they have none. Lines are only ever appended.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Callable
from datetime import date

from memflow.tasks.ground.transcript import message_date, message_text, own_time  # noqa: F401 (re-exported)
from memflow.tasks.ground.workspace import Layout, check_session_id
from memflow.tasks.stores.files import append_line

TOOL_RESULT_TYPES = {"tool_result", "function_call_output", "tool_call_output", "computer_call_output"}
MEDIA_TYPES = {"image", "image_url", "input_image", "file", "input_file", "document", "audio",
               "input_audio"}


def log_path(lay: Layout, session_id: str) -> str:
    return f"{lay.session}/dialog/{check_session_id(session_id)}.jsonl"


def _is_data_block(block: dict) -> bool:
    kind = block.get("type", "")
    if kind in MEDIA_TYPES:
        return True
    blob = json.dumps(block, ensure_ascii=False)
    return "base64" in blob and ("data:" in blob or '"source"' in blob)


def clean_message(message: dict) -> dict | None:
    """A message fit for the log, or None when nothing of it is evidence."""
    if not isinstance(message, dict) or message.get("role") in (None, "tool", "function"):
        return None
    cleaned = {k: v for k, v in message.items() if k not in {"tool_calls", "function_call"}}
    content = message.get("content")
    if isinstance(content, list):
        kept, omitted = [], []
        for block in content:
            if isinstance(block, dict) and block.get("type") in TOOL_RESULT_TYPES:
                omitted.append(block.get("type"))
            elif isinstance(block, dict) and _is_data_block(block):
                omitted.append(block.get("type", "data"))
            else:
                kept.append(block)
        cleaned["content"] = kept
        if omitted:
            cleaned["omitted"] = omitted
    if not message_text(cleaned).strip():
        return None
    return cleaned


def message_key(message: dict) -> str:
    if message.get("id") not in (None, ""):
        return f"id:{message['id']}"
    blob = json.dumps([message.get("role"), message.get("timestamp"), message.get("content")],
                      ensure_ascii=False, sort_keys=True, default=str)
    return "sha:" + hashlib.sha256(blob.encode()).hexdigest()


def read_log(lay: Layout, session_id: str) -> list[dict]:
    """Every logged message, in order; line N of the file is element N-1."""
    path = lay.root / log_path(lay, session_id)
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line.strip()]


def resent(logged: list[str], given: list[str]) -> list[bool]:
    """Per message of `given` (keys, in order): is it one of the log's messages sent again,
    rather than a new one (possibly a repeat: "Noted." after every turn, "Yes." to two
    questions)? Told by order, not by key alone:
    - a run of `given` that is the log's last messages (all of them: the whole conversation
      resent; its tail: a window of it; two or more of them after other messages: a history
      the host compacted) is sent again, and everything after it is new;
    - before such a run, or with none (only new messages; a history the host edited), a
      message is sent again when its key is logged and a neighbour in `given` is its
      neighbour in the log too (part of a resent stretch); a lone known message is said anew.
    What a host sends and the log differ in may make a resent message look lone (a summary the
    host put before a window, logged, stands between two messages the next window sends side by
    side): it is logged twice, never lost."""
    if not logged:
        return [False] * len(given)
    positions: dict[str, list[int]] = {}
    for at, key in enumerate(logged):
        positions.setdefault(key, []).append(at)
    start, size = len(given), 0
    for j, key in enumerate(given):
        at = positions.get(key, [])
        # a log suffix that fits in what is left of `given`, the longest first
        for p in at[bisect.bisect_left(at, len(logged) - (len(given) - j)):]:
            if (j == 0 or len(logged) - p >= 2) and given[j:j + len(logged) - p] == logged[p:]:
                start, size = j, len(logged) - p
                break
        if size:
            break
    pairs = set(zip(logged, logged[1:]))
    out = []
    for n, key in enumerate(given[:start]):
        before = n > 0 and (given[n - 1], key) in pairs
        after = n + 1 < len(given) and (key, given[n + 1]) in pairs
        out.append(key in positions and (before or after))
    return out + [True] * size + [False] * (len(given) - start - size)


def append_messages(lay: Layout, session_id: str, messages: list[dict],
                    forgotten: Callable[[dict], dict | None] | None = None,
                    day: date | None = None, today: date | None = None) -> tuple[list[dict], list[int], int]:
    """Append new cleaned messages; returns (the whole log, 1-based lines of the new ones, how
    many new ones `forgotten` stopped: forgotten by `memflow forget`, so not logged again).
    `forgotten` gives a new message as it may be logged (without sentences a forget removed),
    or None when none of it may.

    A message with no time of its own (OpenAI-style messages have none) is logged with the day
    it was captured as `logged_at` (`day`, the capture's date, else `today`): its transcript
    lines are dated like its daily note, so search shows their date and orders what changed
    (`transcript.message_date`). Without `day`, one after a message with a time takes that
    message's date instead, as before. `logged_at` is not part of a message's identity: the
    same message sent again is still recognised (`message_key`).

    Messages sent again are told from new ones by their order, not by their key alone
    (`resent`): a message said twice ("Noted." after each turn) is logged twice, as it was
    said, and the whole conversation sent again, or a window of its end, adds only what follows
    what is logged. A message with an id or its own time is logged once whatever the order it
    comes again in."""
    log = read_log(lay, session_id)
    seen = {message_key(m) for m in log}
    path = lay.root / log_path(lay, session_id)
    given, stopped, stopped_keys = [], 0, set()
    for message in messages:
        cleaned = clean_message(message)
        if cleaned is None:
            continue
        key = message_key(cleaned)
        if key not in seen and forgotten:
            kept = forgotten(cleaned)
            if kept is None:
                stopped += key not in stopped_keys  # counted once however often it is repeated
                stopped_keys.add(key)
                continue
            # logged as cut: sent again, it is known by the key of what was logged
            cleaned, key = kept, message_key(kept)
        given.append((key, cleaned))
    again = resent([message_key(m) for m in log], [key for key, _ in given])
    # a message with an id or a time of its own is that message wherever it comes again (a
    # host's history that skips one); only one with neither ("Noted.") may be said twice
    again = [sent or (key in seen and (bool(cleaned.get("id")) or own_time(cleaned) is not None))
             for sent, (key, cleaned) in zip(again, given)]
    new_lines = []
    timed = any(own_time(m) is not None for m in log)
    for (key, cleaned), sent_before in zip(given, again):
        if sent_before:
            continue
        if own_time(cleaned) is not None:
            timed = True
        elif day is not None or not timed:
            cleaned["logged_at"] = (day or today or date.today()).isoformat()
        append_line(path, json.dumps(cleaned, ensure_ascii=False, default=str))
        log.append(cleaned)
        new_lines.append(len(log))
    return log, new_lines, stopped


def date_lines(log: list[dict], tz: str, explicit: date | None, today: date,
               lines: list[int] | None = None) -> dict[date, list[int]]:
    """Group log lines (all, or `lines`) by note date: explicit date, else the message's own
    timestamp, else the previous timestamped message's date, else today."""
    groups: dict[date, list[int]] = {}
    current = None
    wanted = set(lines) if lines is not None else None
    for number, message in enumerate(log, 1):
        stamp = message_date(message, tz)
        current = stamp or current
        if wanted is not None and number not in wanted:
            continue
        day = explicit or current or today
        groups.setdefault(day, []).append(number)
    return groups
