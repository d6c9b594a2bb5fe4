"""Stage 1, capture: conversations become daily notes (auto_memory).

The session log is written first, so evidence is never lost even when a writer fails. For each
date the call touches, the note of that session and date is found by frontmatter, rewritten
inside its `<!-- memory:auto -->` markers (text outside them is the person's and is kept), under
the same file name even when its name changes, and the day index is refreshed. The caller holds the
workspace lock.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import date

from memflow.schemas.capture import (
    AutoMemoryResult,
    DayNoteResult,
    Item,
    StructuredNote,
)
from memflow.schemas.settings import Settings
from memflow.tasks.capture.dayindex import note_where, refresh_day_index
from memflow.tasks.capture.extractive import separate_speakers, title_of, write_extractive
from memflow.tasks.capture.secrets import mask_message
from memflow.tasks.capture.sessionlog import (
    append_messages,
    date_lines,
    log_path,
    message_key,
    message_text,
)
from memflow.tasks.capture.validate import check_messages
from memflow.tasks.ground import tombstones
from memflow.tasks.ground.sentences import cut_message
from memflow.tasks.ground.anchors import format_anchor, repoint_inbound
from memflow.tasks.ground.events import append_event
from memflow.tasks.ground.llm import ModelOutputError
from memflow.tasks.ground.markdown import line_text
from memflow.tasks.ground.notes import parse_note, render_note
from memflow.tasks.ground.speakers import OTHERS_TITLE
from memflow.tasks.ground.workspace import (
    Layout,
    check_session_id,
    layout,
    slugify,
    today,
    unique_path,
)
from memflow.tasks.stores.files import (
    atomic_write_json,
    atomic_write_text,
    read_json,
    read_text,
)

log = logging.getLogger("memflow.capture")
QUESTIONS_TITLE = "Questions and requests"
AUTO_START, AUTO_END = "<!-- memory:auto -->", "<!-- /memory:auto -->"
_AUTO_RE = re.compile(re.escape(AUTO_START) + r".*?" + re.escape(AUTO_END), re.DOTALL)
SECTIONS = (("facts", "Facts"), ("decisions", "Decisions"), ("open_items", "Open items"),
            ("reflections", "Reflections"), ("questions", QUESTIONS_TITLE), ("others", OTHERS_TITLE))

# A writer turns (log, lines of one date, hint, existing note text or "") into a StructuredNote.
Writer = Callable[[list[dict], list[int], str, str, str], StructuredNote]


def stopped_line(stopped: int, trimmed: int = 0) -> str:
    """How a capture reports the messages tombstones kept out or cut (CLI, API, MCP, inbox)."""
    cut = f"{trimmed} logged without the sentences forget removed" if trimmed else ""
    return ", ".join(x for x in (f"{stopped} stopped by forget tombstones" if stopped else "", cut) if x)


def unforgotten(tomb: tombstones.Tombstones, message: dict, trimmed: list[str]) -> dict | None:
    """A new message as it may be logged: None when it is a forgotten message (its key or all
    its words) or states nothing but forgotten sentences; else without those sentences (its
    key is added to `trimmed`)."""
    key = message_key(message)
    if tomb.holds(key, message_text(message)):
        return None
    kept, cut = cut_message(message, tomb.cut)
    if kept is not None and cut:
        trimmed.append(key)
    return kept


def offline_writer(log_: list[dict], lines: list[int], hint: str, existing: str, source: str) -> StructuredNote:
    # Re-reads every line of the day, so an update merges by construction.
    return write_extractive(log_, lines, hint)


def check_not_empty(note: StructuredNote, log_: list[dict], lines: list[int]) -> None:
    """A writer's note that keeps nothing (`keep` left true, every section empty: `{"ok": true}`
    validates) where the day's lines hold statements (the offline writer finds some) is a
    failed attempt, not a note: ModelOutputError, the log kept and the day still pending (the
    next capture tries again; `status` shows the failed run). `keep: false` is the writer's
    decision and stands."""
    if note.keep and not any(getattr(note, field) for field, _ in SECTIONS):
        found = offline_writer(log_, lines, "", "", "")
        said = sum(len(getattr(found, field)) for field, _ in SECTIONS)
        if said:
            raise ModelOutputError(f"the writer kept nothing of {len(lines)} message(s) in which "
                                   f"{said} statement(s) were found: not written, tried again next time")


def find_note(lay: Layout, session_id: str, day: date) -> str | None:
    source = f"[[{log_path(lay, session_id)}]]"
    return note_where(lay, f"{lay.daily}/{day.isoformat()}", "*.md",
                      lambda meta: meta.get("session_id") == session_id
                      or meta.get("source_conversation") == source)


def section_kind(title: str) -> str:
    """What a daily note's `## title` section holds: "own" (the user's statements), "questions"
    (asked, not stated) or "others" (another speaker's words)."""
    title = title.strip()
    if title == QUESTIONS_TITLE:
        return "questions"
    return "others" if title.startswith(OTHERS_TITLE + " ") else "own"


def _others_title(items: list[Item]) -> str:
    names = list(dict.fromkeys(i.who or "Assistant" for i in items))
    shown = ["the assistant" if n == "Assistant" else n for n in names]
    return f"{OTHERS_TITLE} {' and '.join(shown) if len(shown) < 3 else ', '.join(shown)}"


def render_auto(note: StructuredNote, source: str) -> str:
    """The system-written block; every item line ends with its provenance link. An item of
    another speaker names them even without a name in the log ("Assistant: ...")."""
    lines = [AUTO_START, f"# {note.name}", ""]
    for key, title in SECTIONS:
        items: list[Item] = getattr(note, key)
        if not items:
            continue
        if key == "others":
            items = [i if i.who else i.model_copy(update={"who": "Assistant"}) for i in items]
            title = _others_title(items)
        lines += [f"## {title}", ""]
        lines += [f"- {item.who + ': ' if item.who else ''}{' '.join(item.text.split())} "
                  f"[[{source}#{anchor(item.lines)}]]" for item in items]
        lines.append("")
    lines.append(AUTO_END)
    return "\n".join(lines)


def anchor(numbers: list[int]) -> str:
    """[3, 4, 5, 9] -> `L3-L5,L9`."""
    return format_anchor(numbers)


def check_citations(note: StructuredNote, allowed: list[int]) -> None:
    """Every item must cite lines of this session and date."""
    ok = set(allowed)
    for key, _ in SECTIONS:
        for item in getattr(note, key):
            if not set(item.lines) <= ok:
                raise ValueError(f"item cites lines {item.lines} outside {anchor(allowed)}: {item.text[:60]}")


def write_day_note(lay: Layout, session_id: str, day: date, note: StructuredNote,
                   lines: list[int]) -> tuple[str, bool, bool]:
    """Create or update the session's note for `day`; returns (path, created, modified)."""
    source = log_path(lay, session_id)
    block = render_auto(note, source)
    folder = f"{lay.daily}/{day.isoformat()}"
    current = find_note(lay, session_id, day)
    meta = {"name": note.name, "description": note.description, "session_id": session_id,
            "source_conversation": f"[[{source}]]"}
    if current is None:
        rel = unique_path(lay, folder, slugify(note.name))
        atomic_write_text(lay.root / rel, render_note(meta, f"\n{block}\n"))
        return rel, True, False
    old_text = read_text(lay.root / current)
    parsed = parse_note(current, old_text)
    body = _AUTO_RE.sub(lambda _m: block, parsed.body, count=1) if _AUTO_RE.search(parsed.body) \
        else f"\n{block}\n{parsed.body}"
    new_text = render_note({**parsed.metadata, **meta}, body)
    # The file keeps its name when the note's name changes: links to it stay valid and the
    # dream sees an update of one note, not a new note.
    changed = new_text != old_text
    if changed:
        atomic_write_text(lay.root / current, new_text)
    return current, False, changed


def retitle(text: str) -> tuple[str, str]:
    """(old name, text) of a captured daily note named again from the items it still holds, by
    the offline writer's rule (`title_of`: a short phrase of its main statement; the first items as
    description): after a forget
    took some of its lines, its title and description no longer summarise what was forgotten."""
    note = parse_note("note", text)
    match = _AUTO_RE.search(note.body)
    if match is None:
        return note.name, text
    block = match.group(0).split("\n")
    items = [line_text(line) for line in block if line.startswith("- ")]
    name = title_of(items) if items else "forgotten"
    description = "; ".join(item[:100] for item in items[:3])[:300]
    heading = next((n for n, line in enumerate(block) if line.startswith("# ")), None)
    if heading is None:
        block.insert(1, f"# {name}")
    else:
        block[heading] = f"# {name}"
    body = note.body[:match.start()] + "\n".join(block) + note.body[match.end():]
    return note.name, render_note({**note.metadata, "name": name, "description": description}, body)


def _state_path(lay: Layout, session_id: str):
    return lay.state_dir / "capture" / f"{session_id}.json"


def _advance(lay: Layout, session_id: str, done: dict, day: date, lines: list[int]) -> None:
    done[day.isoformat()] = max(lines)
    atomic_write_json(_state_path(lay, session_id), done)


def auto_memory(settings: Settings, messages: list[dict], session_id: str, memory_hint: str = "",
                day: date | None = None, writer: Writer | None = None,
                skip_invalid: bool = False) -> AutoMemoryResult:
    """Conversation -> session log + one daily note per date touched; returns what changed.

    Every message is validated first (`validate.check_messages`): a bad one rejects the call
    with nothing written, or with `skip_invalid` is left out and listed in `result.skipped`."""
    lay = layout(settings)
    check_session_id(session_id)
    messages, skipped = check_messages(messages, skip_invalid)
    # secrets are masked before the log is written: nothing downstream ever sees their values
    masked = [mask_message(m, settings.mask_secrets, settings.secret_patterns) for m in messages]
    messages, secrets = [m for m, _ in masked], sum(n for _, n in masked)
    write = writer or offline_writer
    tomb = tombstones.load(lay)
    trimmed: list[str] = []
    full_log, new_lines, stopped = append_messages(
        lay, session_id, messages, lambda m: unforgotten(tomb, m, trimmed), day, today(settings))
    source = log_path(lay, session_id)
    result = AutoMemoryResult(session_id=session_id, source_conversation=f"[[{source}]]",
                              new_messages=len(new_lines), skipped=skipped, stopped=stopped,
                              trimmed=len(set(trimmed)),
                              secrets_masked=secrets)
    by_day = date_lines(full_log, settings.timezone, day, today(settings))
    done = read_json(_state_path(lay, session_id), {})
    # A date is (re)written when it has lines past its watermark: new messages, or a writer
    # that failed last time (the log was kept, the watermark not advanced).
    touched = [d for d, lines in by_day.items() if max(lines) > done.get(d.isoformat(), 0)]
    changed_paths: list[str] = []
    for note_day in sorted(touched):
        lines = by_day[note_day]
        if tomb.stops_note(session_id, note_day.isoformat()):
            _advance(lay, session_id, done, note_day, lines)  # a forgotten note stays forgotten
            continue
        existing = find_note(lay, session_id, note_day)
        existing_text = read_text(lay.root / existing) if existing else ""
        note = write(full_log, lines, memory_hint, existing_text, source)
        if write is not offline_writer:
            check_not_empty(note, full_log, lines)
        if not note.keep:
            result.notes.append(DayNoteResult(date=note_day, path=existing, created=False,
                                              modified=False, n_messages=len(lines), index=None))
            _advance(lay, session_id, done, note_day, lines)
            continue
        check_citations(note, lines)
        note = separate_speakers(note, full_log)
        rel, created, modified = write_day_note(lay, session_id, note_day, note, lines)
        # The update moved lines the digest may cite: its links follow their text.
        relinked = repoint_inbound(lay, rel, existing_text, read_text(lay.root / rel), [lay.digest]) \
            if modified and existing_text else []
        index = refresh_day_index(lay, note_day)
        _advance(lay, session_id, done, note_day, lines)
        if created or modified:
            changed_paths += [rel, index, *relinked] if index else [rel, *relinked]
        result.notes.append(DayNoteResult(date=note_day, path=rel, created=created,
                                          modified=modified, n_messages=len(lines), index=index))
    if result.notes:
        last = result.notes[-1]
        result.date, result.path, result.created = last.date, last.path, last.created
        result.modified, result.n_messages, result.index = last.modified, last.n_messages, last.index
    summary = ", ".join(f"{n.path} ({'created' if n.created else 'updated'})"
                        for n in result.notes if n.created or n.modified)
    if skipped:
        summary = f"{summary or 'no change'}; skipped {len(skipped)} invalid message(s): {skipped[0]}"
    if stopped or trimmed:
        summary = f"{summary or 'no change'}; {stopped_line(stopped, len(set(trimmed)))}"
    if secrets:
        summary = f"{summary or 'no change'}; {secrets} secret(s) masked"
    append_event(lay, "auto_memory", changed_paths, summary or "no change")
    return result
