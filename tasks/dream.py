"""Stage 3, consolidate ("dream"): new daily notes -> digest nodes, reversible, plus topics.

extract -> integrate (per unit) -> topics -> finish. A dream catalog records the sha256 of each
daily note when it was consolidated; a run takes every note up to `date` that is new or changed
since (oldest first, at most `max_notes`), so a missed night is caught up. Daily notes and
session logs are never modified. The caller holds the workspace lock.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import date, timedelta

import yaml

from memflow.schemas.dream import (
    ActionRecord, Corroborate, Correct, Create, Decision, DreamSummary, Refine, Topic, Unit,
)
from memflow.schemas.recall import Filters
from memflow.schemas.settings import Settings
from memflow.tasks import digest
from memflow.tasks.consolidation import choose_topics, decide_offline, extract_units, note_facts
from memflow.tasks.dream_runs import RunRecord
from memflow.tasks.events import append_event
from memflow.tasks.indexing import run_index
from memflow.tasks.notes import parse_note
from memflow.tasks.recall import IndexMissing, search
from memflow.tasks.stores.files import atomic_write_json, atomic_write_text, read_json, read_text
from memflow.tasks.workspace import BUCKETS, Layout, date_of, is_day_index, layout, slugify, unique_path

log = logging.getLogger("memflow.dream")
CATALOG = "dream_catalog.json"
VERBS = {"create": "Derived from", "corroborate": "Corroborated by", "refine": "Refined by",
         "correct": "Corrected by"}

Extract = Callable[[list], list[tuple[Unit, str]]]
Decide = Callable[[Unit, dict[str, str], str], Decision]


def catalog_path(lay: Layout):
    return lay.state_dir / CATALOG


def daily_notes(lay: Layout, until: date) -> list[str]:
    base = lay.root / lay.daily
    found = []
    for path in base.glob("*/*.md") if base.is_dir() else []:
        rel = path.relative_to(lay.root).as_posix()
        day = date_of(rel)
        if day and day <= until and not is_day_index(lay, rel) and not path.name.startswith("."):
            found.append(rel)
    return sorted(found, key=lambda r: (date_of(r), r))


def select_notes(lay: Layout, until: date, max_notes: int) -> tuple[list[tuple[str, str]], int, list[str]]:
    """(notes to read with their sha256, notes left for later, catalog entries of deleted notes)."""
    catalog = read_json(catalog_path(lay), {})
    pending = []
    for rel in daily_notes(lay, until):
        sha = hashlib.sha256((lay.root / rel).read_bytes()).hexdigest()
        if catalog.get(rel) != sha:
            pending.append((rel, sha))
    gone = [rel for rel in catalog if not (lay.root / rel).exists()]
    return pending[:max_notes], max(0, len(pending) - max_notes), gone


def candidates(settings: Settings, unit: Unit) -> dict[str, str]:
    """Digest nodes recalled for a unit (filtered to digest/ before top-k)."""
    lay = layout(settings)
    try:
        response = search(settings, f"{unit.name} {unit.summary}"[:1000], limit=5,
                          filters=Filters(layer="digest"), link_limit=0,
                          with_watermark=False)
    except IndexMissing:
        return {}
    paths = dict.fromkeys(r.path for r in response.results)
    return {p: read_text(lay.root / p) for p in paths if (lay.root / p).exists()}


def validate(lay: Layout, decision: Decision, unit: Unit) -> None:
    match decision:
        case Create(path=path):
            folder = f"{lay.digest}/{unit.bucket}/"
            if not path.startswith(folder) or "/" in path[len(folder):] or not path.endswith(".md"):
                raise ValueError(f"CREATE must write a new file in {folder}, got {path}")
            if (lay.root / path).exists():
                raise ValueError(f"CREATE target exists: {path}")
        case Corroborate(path=path) | Refine(path=path) | Correct(path=path):
            if not path.startswith(f"{lay.digest}/") or not (lay.root / path).is_file():
                raise ValueError(f"{decision.action.upper()} needs an existing digest node, got {path}")


def source_lines(unit: Unit, verb: str, known: set[str]) -> list[str]:
    lines = []
    for fact in unit.evidence:
        link = f"{fact.path}#L{fact.lines[0]}" if len(fact.lines) == 1 else \
            f"{fact.path}#L{fact.lines[0]}-L{fact.lines[-1]}"
        if link not in known:
            known.add(link)
            lines.append(digest.source_line(verb, link, fact.text))
    return lines


def apply_decision(lay: Layout, decision: Decision, unit: Unit) -> tuple[str, str | None, bool]:
    """(path, new text or None for a no-op, created?) of one decision."""
    verb = VERBS[decision.action]
    match decision:
        case Create(path=path, name=name, description=description, claims=claims, related=related):
            sources = source_lines(unit, verb, set())
            return path, digest.render_node(name, description, claims, related, sources), True
        case _:
            path = decision.path
            text = read_text(lay.root / path)
            new_sources = source_lines(unit, verb, digest.sources_of(text))
            if not new_sources:
                return path, None, False  # every source is there already: idempotent re-run
    match decision:
        case Refine(additions=additions):
            known = set(digest.claims_of(text))
            text = digest.add_claims(text, [a for a in additions if digest.plain(a) not in known])
        case Correct(old=old, new=new, reason=reason):
            link = new_sources[0].split("[[", 1)[1].split("]]", 1)[0]
            text = digest.correct_claim(text, old, new, link, reason)
            text = digest.set_meta(text, description=new[:200])
    for line in new_sources:
        text = digest.add_source(text, line)
    return path, text, False


def integrate(settings: Settings, run: RunRecord, unit: Unit, decide: Decide) -> ActionRecord:
    lay = layout(settings)
    folder = f"{lay.digest}/{unit.bucket}"
    new_path = unique_path(lay, folder, slugify(unit.name))
    decision = decide(unit, candidates(settings, unit), new_path)
    validate(lay, decision, unit)
    path, text, created = apply_decision(lay, decision, unit)
    record = ActionRecord(unit=unit.name, action=decision.action if text else "none", path=path,
                          created=created)
    if text is None:
        return record
    run.before_write(path)
    record.pre_sha256 = None if created else hashlib.sha256((lay.root / path).read_bytes()).hexdigest()
    atomic_write_text(lay.root / path, text)
    run.after_write(path, record)
    run_index(settings)  # the next unit's recall sees this node
    return record


def write_topics(settings: Settings, run: RunRecord, day: date, topics: list[Topic],
                 count: int, diversity_days: int) -> str:
    lay = layout(settings)
    rel = f"{lay.daily}/{day.isoformat()}/interests.yaml"
    data = {"date": day.isoformat(), "topic_count": count, "diversity_days": diversity_days,
            "topics": [t.model_dump() for t in topics]}
    run.before_write(rel)
    atomic_write_text(lay.root / rel, yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    run.after_write(rel)
    return rel


def recent_topics(lay: Layout, day: date, days: int) -> set[str]:
    titles = set()
    for back in range(1, days + 1):
        path = lay.root / lay.daily / (day - timedelta(days=back)).isoformat() / "interests.yaml"
        if path.exists():
            data = yaml.safe_load(read_text(path)) or {}
            titles |= {str(t.get("title", "")).lower() for t in data.get("topics") or []}
    return titles


def offline_extract(notes: list) -> list[tuple[Unit, str]]:
    return extract_units(notes)


def run_dream(settings: Settings, day: date, hint: str = "", max_units: int = 5, max_notes: int = 50,
              topic_count: int = 3, topic_diversity_days: int = 7, extract: Extract | None = None,
              decide: Decide | None = None) -> DreamSummary:
    lay = layout(settings)
    selected, left, gone = select_notes(lay, day, max_notes)
    catalog = read_json(catalog_path(lay), {})
    for rel in gone:
        catalog.pop(rel, None)
    if gone:
        atomic_write_json(catalog_path(lay), catalog)
    summary = DreamSummary(date=day.isoformat(), notes_read=len(selected), notes_left=left)
    if not selected:
        summary.status = "no change"
        return summary
    if not (lay.index_dir / "watermark.json").exists():
        run_index(settings)
    notes = [parse_note(rel, read_text(lay.root / rel)) for rel, _ in selected]
    units = (extract or offline_extract)(notes)
    run = RunRecord(lay)
    summary.run_id = run.run_id
    blocked = {origin for _, origin in units[max_units:]}  # cut by max_units: not consumed
    for unit, origin in units[:max_units]:
        try:
            record = integrate(settings, run, unit, decide or decide_offline)
        except Exception as exc:  # noqa: BLE001 - a failed unit leaves its notes for the next run
            log.error("dream unit %r failed: %s", unit.name, exc)
            summary.failed_units[unit.name] = f"{type(exc).__name__}: {exc}"
            blocked.add(origin)
            continue
        summary.actions[record.action] = summary.actions.get(record.action, 0) + 1
        if record.action != "none" and record.path not in summary.files_written:
            summary.files_written.append(record.path)
    summary.units = min(len(units), max_units)
    facts = [f for note in notes for f in note_facts(note)]
    topics = choose_topics(facts, topic_count, recent_topics(lay, day, topic_diversity_days))
    if topics:
        summary.files_written.append(write_topics(settings, run, day, topics, topic_count,
                                                  topic_diversity_days))
        summary.topics = [t.title for t in topics]
    consumed = {rel: sha for rel, sha in selected if rel not in blocked}
    catalog.update(consumed)
    atomic_write_json(catalog_path(lay), catalog)
    summary.notes_consumed = len(consumed)
    summary.status = "partial" if summary.failed_units else "ok"
    run.finish(summary.status, consumed, summary.model_dump())
    append_event(lay, "auto_dream", summary.files_written,
                 ", ".join(f"{k}={v}" for k, v in sorted(summary.actions.items())) or "no action")
    return summary


def proactive(settings: Settings, day: date) -> dict:
    """The topics of `day`'s interests.yaml, or a clean skipped result."""
    lay = layout(settings)
    path = lay.root / lay.daily / day.isoformat() / "interests.yaml"
    if not path.exists():
        return {"status": "skipped", "date": day.isoformat(), "reason": f"no {path.relative_to(lay.root)}"}
    data = yaml.safe_load(read_text(path)) or {}
    return {"status": "ok", "date": day.isoformat(), "topics": data.get("topics") or []}


__all__ = ["run_dream", "proactive", "select_notes", "BUCKETS"]
