"""Sentences as spans of a text, and cutting out the ones that state something (forget).

`memflow forget` and its tombstones remove the sentence that states a forgotten text, not the
message or line around it. A sentence ends after `.`, `!`, `?` or `…` followed by white space
(not after an initial or an abbreviation by shape: `Dr. Patel`, `J. R. Tolkien`), after `。！？`,
and at a line break. A split in the wrong place cannot hide a match: when a text is found only
across two or more neighbouring sentences, all of them go.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memflow.tasks.ground.markdown import NOT_AN_ABBREVIATION
from memflow.tasks.ground.transcript import message_text

_CLOSERS = "\"'”’)\\]」』）"
_END_RE = re.compile(rf"(?<=[.!?…]){NOT_AN_ABBREVIATION}[{_CLOSERS}]*\s+|(?<=[。！？])[{_CLOSERS}]*\s*|\n\s*")
REACH = 8  # neighbouring sentences a text found across a false split may span


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, its trailing punctuation and white space included; the
    spans cover `text` whole."""
    spans, start = [], 0
    for match in _END_RE.finditer(text):
        if match.end() > start:
            spans.append((start, match.end()))
            start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def cut(text: str, hit: Callable[[str], bool]) -> tuple[str, list[str]]:
    """(`text` without the sentences `hit` finds, the sentences removed). A hit spread over
    neighbouring sentences (and in none alone) takes each of them; nothing else goes."""
    parts = [text[a:b] for a, b in sentence_spans(text)]
    gone: set[int] = set()
    for i, part in enumerate(parts):
        if hit(part):
            gone.add(i)
            continue
        for j in range(i + 1, min(len(parts), i + REACH)):
            if hit(_join(parts[i:j + 1])):
                if not hit(_join(parts[i + 1:j + 1])):  # the hit starts in sentence i
                    gone.update(range(i, j + 1))
                break
    kept = "".join(p for n, p in enumerate(parts) if n not in gone).rstrip()
    return kept, [parts[n].strip() for n in sorted(gone)]


def cut_message(message: dict, cut_text: Callable[[str], tuple[str, list[str]]]) -> tuple[dict | None, list[str]]:
    """(A message with `cut_text` applied to its text (a string, or each text block), or None
    when no text is left; the sentences removed)."""
    content = message.get("content")
    if isinstance(content, str):
        kept, said = cut_text(content)
        out = {**message, "content": kept}
    elif isinstance(content, list):
        blocks, said = [], []
        for block in content:
            text = block if isinstance(block, str) else block.get("text") if isinstance(block, dict) else None
            if not isinstance(text, str):
                blocks.append(block)
                continue
            kept, gone = cut_text(text)
            said += gone
            if kept.strip():
                blocks.append(kept if isinstance(block, str) else {**block, "text": kept})
        out = {**message, "content": blocks}
    else:
        return None, [message_text(message)]
    if not message_text(out).strip():
        return None, [message_text(message)]
    return out, said


def _join(parts: list[str]) -> str:
    return " ".join(p.strip() for p in parts)
