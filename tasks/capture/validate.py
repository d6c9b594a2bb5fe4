"""Validation at the door (pure): every message of a conversation is checked before anything is
written. A bad message is a one-line error naming its position and what is wrong; with
`skip_invalid` it is left out and counted instead. Nothing is dropped silently."""

from __future__ import annotations

from datetime import datetime

from memflow.tasks.ground.transcript import own_time

ROLES = ("user", "assistant", "system", "developer", "tool", "function")


class InvalidMessages(ValueError):
    """The conversation was rejected; nothing of it was written."""


def _kind(value: object) -> str:
    return type(value).__name__ if value is not None else "null"


def problem_of(message: object) -> str | None:
    """What is wrong with one message, or None."""
    if not isinstance(message, dict):
        return f"expected an object with role and content, got {_kind(message)}"
    role = message.get("role")
    if role is None:
        return "no role (one of " + ", ".join(ROLES) + ")"
    if role not in ROLES:
        return f"role {role!r} is not one of " + ", ".join(ROLES)
    content = message.get("content")
    if isinstance(content, list):
        bad = [n for n, part in enumerate(content, 1)
               if not isinstance(part, (str, dict)) or (isinstance(part, dict) and "type" not in part
                                                        and "text" not in part)]
        if bad:
            return f"content part {bad[0]} is neither text nor an object with a type"
    elif not (isinstance(content, str) or (content is None and role in ("assistant", "tool", "function"))):
        return f"content must be text or a list of content parts, got {_kind(content)}"
    stamp = own_time(message)
    if stamp is not None and not _valid_time(stamp):
        return f"timestamp {stamp!r} is neither ISO 8601 nor epoch seconds"
    if "id" in message and not isinstance(message["id"], (str, int)) or isinstance(message.get("id"), bool):
        return f"id must be text or a number, got {_kind(message['id'])}"
    return None


def _valid_time(stamp: object) -> bool:
    if isinstance(stamp, bool):
        return False
    if isinstance(stamp, (int, float)):
        return 0 <= stamp < 1e14
    if isinstance(stamp, str):
        try:
            datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            return True
        except ValueError:
            return False
    return False


def check_messages(messages: object, skip_invalid: bool = False) -> tuple[list[dict], list[str]]:
    """(the valid messages, one line per skipped message). Raises InvalidMessages on the first
    bad message unless `skip_invalid`; positions are 1-based."""
    if not isinstance(messages, list):
        raise InvalidMessages(f"messages must be a list of message objects, got {_kind(messages)}")
    valid, skipped = [], []
    for number, message in enumerate(messages, 1):
        problem = problem_of(message)
        if problem is None:
            valid.append(message)
            continue
        line = f"message {number}: {problem}"
        if not skip_invalid:
            others = sum(1 for m in messages[number:] if problem_of(m) is not None)
            more = f" (and {others} more invalid; --skip-invalid leaves them out)" if others else ""
            raise InvalidMessages(line + more)
        skipped.append(line)
    return valid, skipped
