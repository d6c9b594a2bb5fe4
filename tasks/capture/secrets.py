"""Secrets stay out of capture (pure): a message's text, or the text of its content parts, with
every secret replaced by `[secret masked]` (`ground.secrets`) before capture writes anything (the
session log, so the daily note, the digest and the index never see the value)."""

from __future__ import annotations

from collections.abc import Iterable

from memflow.tasks.ground.secrets import MARK, mask_secrets

__all__ = ["MARK", "mask_secrets", "mask_message"]


def mask_message(message: dict, enabled: bool = True, extra: Iterable[str] = ()) -> tuple[dict, int]:
    """A message with its text (a string, or the text of content parts) masked."""
    content = message.get("content")
    if isinstance(content, str):
        masked, count = mask_secrets(content, enabled, extra)
        return ({**message, "content": masked}, count) if count else (message, 0)
    if isinstance(content, list):
        parts, total = [], 0
        for part in content:
            if isinstance(part, str):
                part, count = mask_secrets(part, enabled, extra)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                masked, count = mask_secrets(part["text"], enabled, extra)
                part = {**part, "text": masked} if count else part
            else:
                count = 0
            parts.append(part)
            total += count
        return ({**message, "content": parts}, total) if total else (message, 0)
    return message, 0
