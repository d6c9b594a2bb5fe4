"""Stage 1b, auto_resource: files under resource/ become daily notes.

Files directly in resource/ belong to today; files under resource/YYYY-MM-DD/... (any depth) to
that date. Added or modified files get (or update) their note with `source_resource`; a deleted
file loses only the note generated for it. The catalog advances only after a note is written, so
a file that failed is tried again next time. The caller holds the workspace lock.

Two kinds of "not read" in the catalog: `refused` (the content itself: binary, undecodable,
past a limit) stays refused until the file changes (the run's `refused`: said, not a failure:
re-running cannot help); `failed` (the model or the network: errors,
timeouts, refused connections, 429/5xx, invalid output) keeps `attempts` and `failed_at`, and
the first run `model_retry_seconds` later (doubled per attempt, capped at a day) tries again; a
run before then counts the file as waiting.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable
from datetime import date, datetime, timezone
from pathlib import Path

from memflow.schemas.capture import ResourceResult
from memflow.schemas.settings import Settings
from memflow.tasks.capture.dayindex import day_index_stale, note_where, refresh_day_index
from memflow.tasks.ground.convert import DOCUMENT_SUFFIXES, READABLE_SUFFIXES, Converted, NotText, read_resource
from memflow.tasks.ground.anchors import citable
from memflow.tasks.ground.events import append_event
from memflow.tasks.ground.guard import FileRefused, guarded
from memflow.tasks.ground.llm import ModelCallError, ModelOutputError
from memflow.tasks.ground.lock import run_fell_short
from memflow.tasks.ground.notes import render_note
from memflow.tasks.ground.secrets import mask_lines, mask_secrets
from memflow.tasks.ground.workspace import (
    Layout,
    date_of,
    file_stats,
    layout,
    slugify,
    today,
    unique_path,
)
from memflow.tasks.stores.files import atomic_write_json, atomic_write_text, read_json

log = logging.getLogger("memflow.resources")
SUFFIXES = READABLE_SUFFIXES
CATALOG = "resource_catalog.json"
CARD_LINES = 12

# A reader turns (resource path, text, truncated?) into (description, card body lines).
Reader = Callable[[str, str, bool], tuple[str, str]]


def resource_date(lay: Layout, rel: str, fallback: date) -> date:
    inner = rel.removeprefix(f"{lay.resource}/")
    first = inner.split("/", 1)[0]
    if "/" in inner and re.fullmatch(r"\d{4}-\d{2}-\d{2}", first):
        return date_of(first) or fallback
    return fallback


def extractive_card(rel: str, text: str, truncated: bool) -> tuple[str, str]:
    """Offline reading: the first informative lines, each linked to its line in the file (only
    lines `memflow check` accepts as cited: text or a heading, not a comment or `---`)."""
    picked = []
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip().lstrip("#").strip()
        if len(stripped) < 3 or re.fullmatch(r"[-=*_#|:` ]+", stripped) or not citable(line):
            continue
        picked.append(f"- {stripped[:200]} [[{rel}#L{number}]]")
        if len(picked) >= CARD_LINES:
            break
    first = next((p[2:].split(" [[")[0] for p in picked), "")
    description = f"{rel.rsplit('/', 1)[-1]}: {first[:150]}"
    if truncated:
        picked.append(f"- (read in part: the file is larger than the size limit) [[{rel}]]")
    return description, "\n".join(picked)


def skip_reason(rel: str) -> str:
    suffix = Path(rel).suffix.lower()
    kind = f"a {suffix} file" if suffix else "a file without a suffix"
    return f"{kind} is not read (read: {' '.join(s.lstrip('.') for s in SUFFIXES)})"


def scan_resources(lay: Layout, problems: dict[str, str] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """(path -> sha256 for files of a readable type, path -> why it is left out for the others).
    Files that cannot be read (symlink loops, FIFOs, permissions) go to `problems` with their
    reason."""
    problems = {} if problems is None else problems
    found, skipped = {}, {}
    for rel in sorted(file_stats(lay, [lay.resource], ("",), problems)):
        if not rel.lower().endswith(SUFFIXES):
            skipped[rel] = skip_reason(rel)
            log.info("skipping %s: %s", rel, skipped[rel])
            continue
        try:
            found[rel] = hashlib.sha256((lay.root / rel).read_bytes()).hexdigest()
        except OSError as exc:
            problems[rel] = f"cannot be read: {exc.strerror or exc}"
    return found, skipped


_ANCHOR_RE = re.compile(r"\[\[([^\]#|]+)#L(\d+)\]\]")


def _relink(card: str, rel: str, converted: Converted) -> str:
    """Card links to lines of the converted text -> links to the file's lines (or to the file
    when conversion moved its lines, as HTML or JSON do, with the page of a PDF's line)."""
    def fix(match: re.Match) -> str:
        if match.group(1) != rel:
            return match.group(0)
        if not converted.lines_match_file:
            labels, line = converted.line_labels, int(match.group(2))
            return f"[[{rel}]] ({labels[line - 1]})" if 0 < line <= len(labels) else f"[[{rel}]]"
        return f"[[{rel}#L{int(match.group(2)) + converted.first_line - 1}]]"

    return _ANCHOR_RE.sub(fix, card)


def card_of(lay: Layout, folder: str, rel: str) -> str | None:
    """The card already written for `rel` in `folder` (a run killed before its catalog update
    wrote it): rewritten in place, never a second card."""
    return note_where(lay, folder, "resource-*.md", lambda meta: meta.get("source_resource") == f"[[{rel}]]")


def write_resource_note(lay: Layout, settings: Settings, rel: str, day: date, reader: Reader,
                        current: str | None) -> str:
    converted, truncated = read_for_card(lay, settings, rel)
    # the file is the user's and stays; its card (and a model reading it) sees no secret
    text, _ = mask_lines(converted.text, settings.mask_secrets, settings.secret_patterns)
    description, card = reader(rel, text, truncated)
    card = _relink(card, rel, converted)
    name = rel.rsplit("/", 1)[-1]
    folder = f"{lay.daily}/{day.isoformat()}"
    target = current or card_of(lay, folder, rel) or unique_path(lay, folder, "resource-" + slugify(name))
    own = converted.meta
    if isinstance(own.get("description") or own.get("title"), str):
        description = f"{name}: {str(own.get('description') or own.get('title'))[:150]}"
    meta = {"name": name, "description": description, "source_resource": f"[[{rel}]]"}
    if converted.encoding not in ("utf-8", "ascii", ""):
        meta["encoding"] = converted.encoding  # what the file was read as (it is not UTF-8)
    if converted.document is not None:
        sections = converted.document.sections
        meta["pages" if rel.lower().endswith(".pdf") else "sections"] = len(sections)
        if converted.document.partial:
            meta["read_in_part"] = converted.document.partial
    if own:  # the file's own frontmatter, as fields of the card (never as text)
        meta["resource_meta"] = {str(k): _masked(settings, v) if isinstance(v, str) else
                                 v if isinstance(v, (int, float, bool)) else _masked(settings, str(v))
                                 for k, v in list(own.items())[:20]}
    meta["description"] = _masked(settings, description)
    atomic_write_text(lay.root / target, render_note(meta, f"\n# {name}\n\n{card}\n"))
    return target


def _masked(settings: Settings, text: str) -> str:
    return mask_secrets(text, settings.mask_secrets, settings.secret_patterns)[0]


def read_for_card(lay: Layout, settings: Settings, rel: str) -> tuple[Converted, bool]:
    """(the file's text, read in part?): a text file's first `resource_max_bytes` bytes; a PDF or
    Word file whole (up to `resource_index_max_bytes`), its text cut to `resource_max_bytes`."""
    path, limit = lay.root / rel, settings.resource_max_bytes
    if not rel.lower().endswith(DOCUMENT_SUFFIXES):
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
        converted = read_resource(rel, data[:limit], settings.decode_errors, partial=len(data) > limit)
        return converted, len(data) > limit
    size = path.stat().st_size
    if size > settings.resource_index_max_bytes:
        raise NotText(f"{rel}: {size:,} bytes is over resource_index_max_bytes "
                      f"({settings.resource_index_max_bytes:,}); not read")
    converted = read_resource(rel, path.read_bytes(), settings.decode_errors)
    cut = len(converted.text.encode("utf-8")) > limit
    if cut:
        converted.text = converted.text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
    return converted, cut or bool(converted.document and converted.document.partial)


TRANSIENT = (ModelCallError, ModelOutputError, ConnectionError, TimeoutError)
RETRY_CAP = 24 * 3600.0  # the longest wait between two tries of a failed resource
# Catalogs written before `failed` existed recorded model failures as `refused`: tried again.
OLD_TRANSIENT = re.compile(r"^(ModelCallError|ConnectionError|TimeoutError|\w*Timeout\w*):| reply is not a valid ")


def transient(exc: FileRefused) -> bool:
    """A failure that can pass without the file changing: the model or the network (errors,
    timeouts, refused connections, HTTP 429/5xx, invalid output after retries)."""
    return isinstance(exc.__cause__, TRANSIENT)


def failed_entry(sha: str, known: dict | None, reason: str, now: float) -> dict:
    """The catalog entry of a transient failure: when it failed and how often at this content."""
    again = known and known.get("sha256") == sha and known.get("failed")
    return {"sha256": sha, "note": (known or {}).get("note"), "failed": reason,
            "attempts": (known.get("attempts", 0) if again else 0) + 1,
            "failed_at": datetime.fromtimestamp(now, timezone.utc).isoformat(timespec="seconds")}


def retry_after(entry: dict, base: float) -> str:
    """When a failed resource is due again: `base` seconds after its last failure, doubled per
    attempt, capped at RETRY_CAP (from the settings of the run asking: lowering
    `model_retry_seconds` brings every retry forward)."""
    wait = min(base * 2 ** (max(1, entry.get("attempts", 1)) - 1), RETRY_CAP)
    failed_at = datetime.fromisoformat(entry.get("failed_at") or "1970-01-01T00:00:00+00:00")
    return datetime.fromtimestamp(failed_at.timestamp() + wait, timezone.utc).isoformat(timespec="seconds")


def waiting_until(known: dict | None, sha: str, base: float, now: float) -> str | None:
    """The retry time of a failed resource not yet due (same content); None when it is due."""
    if not known or not known.get("failed") or known.get("sha256") != sha:
        return None
    due = retry_after(known, base)
    return due if datetime.fromisoformat(due).timestamp() > now else None


def _done(lay: Layout, known: dict | None, sha: str, reading: str) -> bool:
    """Nothing to do: converted (its note exists) or refused on its own, at this content."""
    if not known or known["sha256"] != sha or known.get("failed"):
        return False
    if known.get("refused"):
        return known.get("reading") == reading and not OLD_TRANSIENT.search(known["refused"])
    return bool(known.get("note")) and (lay.root / known["note"]).exists()


def _refused(lay: Layout, settings: Settings, catalog: dict, rel: str, sha: str, exc: FileRefused,
             result: ResourceResult, reading: str) -> None:
    """Record why a resource was not read: content refused on its own stays refused until it
    changes; a model or network failure waits its backoff; the disk is retried next run."""
    known, reason = catalog.get(rel), str(exc)
    log.error("resource %s not read: %s", rel, reason)
    if transient(exc):
        entry = failed_entry(sha, known, reason, time.time())
        due = retry_after(entry, settings.model_retry_seconds)
        result.failed[rel] = f"{reason} (attempt {entry['attempts']}; tried again by the first run after {due})"
        catalog[rel] = entry
        event = f"failed {rel} (attempt {entry['attempts']}, tried again after {due}): {reason}"
    elif isinstance(exc.__cause__, OSError):
        result.failed[rel] = reason
        return  # the disk, not the file: tried again on the next run
    else:
        result.refused[rel] = reason
        catalog[rel] = {"sha256": sha, "note": (known or {}).get("note"), "refused": reason, "reading": reading}
        event = f"refused {rel}: {reason}"
    atomic_write_json(lay.state_dir / CATALOG, catalog)
    append_event(lay, "auto_resource", [rel], event)


def _remove_gone(lay: Layout, catalog: dict, gone: list[str], result: ResourceResult, days: set) -> None:
    for rel in gone:
        note = catalog[rel].get("note")
        if note and (lay.root / note).exists():
            (lay.root / note).unlink()  # the generated note only; the resource is already gone
            result.removed.append(note)
            day = date_of(note)
            if day:
                days.add(day)
        del catalog[rel]
        atomic_write_json(lay.state_dir / CATALOG, catalog)


def note_skipped(lay: Layout, catalog: dict, skipped: dict[str, str]) -> None:
    """Record the files left out for their type in the catalog (what `status` lists) and name
    the ones not left out before in one inbox event; a file left out before is not named again."""
    fresh = {rel: why for rel, why in skipped.items() if catalog.get(rel, {}).get("skipped") != why}
    for rel, why in skipped.items():
        if "note" not in catalog.get(rel, {}) or not catalog[rel].get("note"):
            catalog[rel] = {"skipped": why}
    if fresh:
        atomic_write_json(lay.state_dir / CATALOG, catalog)
        append_event(lay, "auto_resource", sorted(fresh), f"skipped {len(fresh)} file(s): " + "; ".join(
            f"{rel}: {why}" for rel, why in sorted(fresh.items())[:20]))


def auto_resource(settings: Settings, reader: Reader | None = None) -> ResourceResult:
    lay = layout(settings)
    read = reader or extractive_card
    catalog_path = lay.state_dir / CATALOG
    catalog: dict[str, dict] = read_json(catalog_path, {})
    problems: dict[str, str] = {}
    found, skipped = scan_resources(lay, problems)
    result = ResourceResult(skipped=skipped, failed=dict(problems))
    days: set[date] = set()
    # how a refused file was read (2: encodings detected, PDF and Word read): a new way retries it
    reading = f"{settings.decode_errors}|{settings.resource_max_bytes}|2"
    now = time.time()
    note_skipped(lay, catalog, skipped)
    for rel, sha in found.items():
        known = catalog.get(rel) if "skipped" not in catalog.get(rel, {}) else None
        if _done(lay, known, sha, reading):
            continue
        if due := waiting_until(known, sha, settings.model_retry_seconds, now):
            result.waiting[rel] = due
            continue
        day = resource_date(lay, rel, today(settings))
        try:
            note = guarded(rel, lambda: write_resource_note(lay, settings, rel, day, read,
                                                            known and known.get("note")))
        except FileRefused as exc:
            _refused(lay, settings, catalog, rel, sha, exc, result, reading)
            continue
        (result.updated if known and known.get("note") else result.created).append(note)
        catalog[rel] = {"sha256": sha, "note": note}
        atomic_write_json(catalog_path, catalog)  # after the note: a failure is retried
        days.add(day)
    _remove_gone(lay, catalog, sorted(set(catalog) - set(found) - set(problems) - set(skipped)), result, days)
    # a day whose index a killed run did not refresh is refreshed now
    card_days = {date_of(entry["note"]) for entry in catalog.values() if entry.get("note")}
    days |= {d for d in card_days if d and day_index_stale(lay, d)}
    indexes = [refresh_day_index(lay, d) for d in sorted(days)]
    changed = result.created + result.updated + result.removed + [i for i in indexes if i]
    append_event(lay, "auto_resource", changed,
                 f"created {len(result.created)}, updated {len(result.updated)}, "
                 f"removed {len(result.removed)}" + (f", {len(result.waiting)} waiting to retry"
                                                     if result.waiting else ""))
    if result.failed:  # the job's record says so (`status`), not "ok"
        tried = len(result.failed) + len(result.created) + len(result.updated) + len(result.refused)
        first, why = next(iter(sorted(result.failed.items())))
        run_fell_short(f"{len(result.failed)} of {tried} resource(s) failed ({first}: {why})")
    return result


def catalog_counts(lay: Layout, base: float) -> dict:
    """What `status` reports of the resource catalog: refused (until the file changes) and
    waiting to retry after a model/network failure, with the earliest retry time."""
    catalog: dict[str, dict] = read_json(lay.state_dir / CATALOG, {}) or {}
    waiting = sorted(retry_after(e, base) for e in catalog.values() if e.get("failed"))
    return {"refused": sum(1 for e in catalog.values() if e.get("refused") and not e.get("failed")),
            "waiting_to_retry": len(waiting), "next_retry": waiting[0] if waiting else None,
            "not_read": {rel: e.get("skipped") or e.get("refused") for rel, e in sorted(catalog.items())
                         if (e.get("skipped") or e.get("refused")) and not e.get("failed")}}


def adopt_resource_notes(settings: Settings, notes: dict[str, str], current: bool = True) -> int:
    """Record resources another system already turned into notes ({resource path: its note}) as
    converted, at their current content, so `auto_resource` does not convert them again (not
    `current`: at no content, so it converts them again, into that note rather than beside
    it). Only pairs whose resource and note both exist are recorded; returns how many."""
    lay = layout(settings)
    catalog_path = lay.state_dir / CATALOG
    catalog: dict[str, dict] = read_json(catalog_path, {})
    adopted = 0
    for rel, note in notes.items():
        if (lay.root / rel).is_file() and (lay.root / note).is_file():
            sha = hashlib.sha256((lay.root / rel).read_bytes()).hexdigest() if current else ""
            catalog[rel] = {"sha256": sha, "note": note}
            adopted += 1
    if adopted:
        atomic_write_json(catalog_path, catalog)
    return adopted
