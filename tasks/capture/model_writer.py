"""The model writer: a chat model reads one session's lines of one date and returns a
StructuredNote (validated JSON). On update it gets the existing note and returns the merged one.
Retries of invalid output belong to the Prefect task that calls it."""

from __future__ import annotations

import json

from memflow.schemas.capture import StructuredNote
from memflow.schemas.settings import Settings
from memflow.tasks.capture.sessionlog import message_text
from memflow.tasks.ground.llm import complete_json

SYSTEM = """You write an agent's daily memory note from a conversation log.
Reply with one JSON object: {"keep": bool, "name": str, "description": str, "facts": [item],
"decisions": [item], "open_items": [item], "reflections": [item], "questions": [item],
"others": [item]}, where item is {"text": str, "who": str, "lines": [int]}; `lines` are the log
line numbers (Lnn) the item comes from (cite only the lines you really use) and `who` is who said
it: the speaker's name when the log gives one, "Assistant" for the assistant, "" for the user.
Who said it decides the section: facts, decisions, open_items and reflections hold only what the
user stated (facts are things true about the user or the world; reflections are lessons: what to
do better next time); questions holds the user's questions and requests as asked, never turned
into facts; others holds what the assistant or any other speaker said, never as the user's fact.
Keep each statement's own words and details (names, numbers, dates). Drop greetings, thanks and
small talk. `name` is a short title naming the subject of the note (what the user talked about),
`description` one sentence naming the main facts. If an existing note is given, return the merged
note: keep its items, add new ones, no duplicates, timeline in order. If nothing is worth
remembering, reply {"keep": false}."""


def prompt(log: list[dict], lines: list[int], hint: str, existing: str) -> str:
    numbered = "\n".join(f"L{n} [{_speaker(log[n - 1])}] {message_text(log[n - 1])}" for n in lines)
    parts = [f"Conversation log lines:\n{numbered}"]
    if hint:
        parts.append(f"Focus hint from the caller: {hint}")
    if existing:
        parts.append(f"Existing note to merge into:\n{existing}")
    return "\n\n".join(parts)


def _speaker(message: dict) -> str:
    role, name = message.get("role", "?"), " ".join(str(message.get("name") or "").split())
    return f"{role} {name}" if name else role


def model_writer(settings: Settings):
    def write(log: list[dict], lines: list[int], hint: str, existing: str, source: str) -> StructuredNote:
        messages = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": prompt(log, lines, hint, existing)}]
        return complete_json(settings, messages, StructuredNote)
    return write


def example_reply(note: StructuredNote) -> str:
    """JSON text of a note, as a model would send it (used by docs and tests)."""
    return json.dumps(note.model_dump(), ensure_ascii=False)


def write_with_model(settings: Settings, log: list[dict], lines: list[int], hint: str,
                     existing: str, source: str) -> StructuredNote:
    """Module-level form of the model writer, for wrapping as a Prefect task with retries."""
    return model_writer(settings)(log, lines, hint, existing, source)


class _Reading(StructuredNote):
    pass


READ_SYSTEM = """You read a file an agent's user saved and write a short memory card of it.
Reply with one JSON object {"keep": true, "name": str, "description": str, "facts": [item]}
where item is {"text": str, "lines": [int]} citing the file's line numbers (Lnn) it uses."""


def read_with_model(settings: Settings, rel: str, text: str, truncated: bool) -> tuple[str, str]:
    """A model's reading of a resource: (description, card body lines with line links)."""
    numbered = "\n".join(f"L{n} {line}" for n, line in enumerate(text.split("\n"), 1))
    note = complete_json(settings, [{"role": "system", "content": READ_SYSTEM},
                                    {"role": "user", "content": f"File {rel}:\n{numbered}"}], _Reading)
    lines = [f"- {' '.join(i.text.split())} [[{rel}#L{i.lines[0]}]]" for i in note.facts]
    if truncated:
        lines.append(f"- (read in part: the file is larger than the size limit) [[{rel}]]")
    return note.description, "\n".join(lines)
