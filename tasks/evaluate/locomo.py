"""LoCoMo data (pure): samples -> conversations to capture, evidence ids -> turns."""

from __future__ import annotations

import re
from datetime import datetime

_EVIDENCE_RE = re.compile(r"D(\d+):(\d+)")


def session_numbers(conversation: dict) -> list[int]:
    return sorted(int(k.split("_")[1]) for k in conversation
                  if re.fullmatch(r"session_\d+", k) and isinstance(conversation[k], list))


def session_time(conversation: dict, number: int) -> str | None:
    """`1:56 pm on 8 May, 2023` -> ISO timestamp (naive: the workspace timezone applies)."""
    raw = conversation.get(f"session_{number}_date_time")
    if not raw:
        return None
    try:
        return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").isoformat()
    except ValueError:
        return None


def turn_text(turn: dict) -> str:
    caption = turn.get("blip_caption")
    text = turn.get("text", "")
    return f"{text} [image: {caption}]" if caption else text


def session_messages(sample: dict, number: int) -> list[dict]:
    """One LoCoMo session as messages: id = dia_id, name = speaker, captions kept as text."""
    conversation = sample["conversation"]
    stamp = session_time(conversation, number)
    speaker_a = conversation.get("speaker_a")
    messages = []
    for turn in conversation[f"session_{number}"]:
        message = {"id": turn["dia_id"], "role": "user" if turn["speaker"] == speaker_a else "assistant",
                   "name": turn["speaker"], "content": turn_text(turn)}
        if stamp:
            message["timestamp"] = stamp
        messages.append(message)
    return messages


def session_id(sample: dict, number: int) -> str:
    return f"{sample['sample_id']}-s{number}"


def parse_evidence(evidence: list) -> tuple[list[str], int]:
    """Evidence entries -> (dia ids, number of malformed entries). `D8:6; D9:17` gives both ids
    and counts as malformed once."""
    ids, malformed = [], 0
    for entry in evidence or []:
        text = str(entry).strip()
        found = _EVIDENCE_RE.findall(text)
        if not (len(found) == 1 and text == f"D{found[0][0]}:{found[0][1]}"):
            malformed += 1
        ids.extend(f"D{a}:{b}" for a, b in found)
    return ids, malformed
