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
    ActionRecord,
    Correct,
    Corroborate,
    Create,
    Decision,
    DreamPlan,
    DreamSummary,
    Refine,
    Topic,
    Unit,
)
from memflow.schemas.recall import Filters
from memflow.schemas.settings import Settings
from memflow.tasks.dream import digest
from memflow.tasks.dream.consolidation import (
    choose_topics,
    decide_offline,
    extract_units,
    note_facts,
)
from memflow.tasks.dream.dream_runs import RunRecord
from memflow.tasks.ground.events import append_event
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.workspace import (
    BUCKETS,
    Layout,
    date_of,
    is_day_index,
    layout,
    slugify,
    unique_path,
)
from memflow.tasks.index import run_index
from memflow.tasks.recall import IndexMissing, search
from memflow.tasks.stores.files import (
    atomic_write_json,
    atomic_write_text,
    read_json,
    read_text,
)

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


def split_if_full(lay: Layout, decision: Decision, unit: Unit, new_path: str, limit: int) -> Decision:
    """A node past `limit` bytes is not grown: the unit becomes a node of its own subject that
    links to the full one (CORRECT still fixes the claim where it stands)."""
    match decision:
        case Refine(path=path) | Corroborate(path=path) if (lay.root / path).stat().st_size > limit:
            return Create(path=new_path, name=unit.name, description=unit.summary[:200],
                          claims=[f.text for f in unit.evidence] or [unit.summary], related=[path])
    return decision


def integrate(settings: Settings, run: RunRecord, unit: Unit, decide: Decide) -> ActionRecord:
    lay = layout(settings)
    folder = f"{lay.digest}/{unit.bucket}"
    new_path = unique_path(lay, folder, slugify(unit.name))
    decision = decide(unit, candidates(settings, unit), new_path)
    validate(lay, decision, unit)
    decision = split_if_full(lay, decision, unit, new_path, settings.digest_node_bytes)
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


def extract_stage(settings: Settings, day: date, max_notes: int, max_units: int,
                  extract: Extract | None = None) -> DreamPlan | None:
    """Select new or changed daily notes and extract units; None when there is nothing to do."""
    lay = layout(settings)
    selected, left, gone = select_notes(lay, day, max_notes)
    if gone:
        catalog = read_json(catalog_path(lay), {})
        for rel in gone:
            catalog.pop(rel, None)
        atomic_write_json(catalog_path(lay), catalog)
    if not selected:
        return None
    if not (lay.index_dir / "watermark.json").exists():
        run_index(settings)
    notes = [parse_note(rel, read_text(lay.root / rel)) for rel, _ in selected]
    pairs = (extract or offline_extract)(notes)
    return DreamPlan(date=day.isoformat(), run_id=RunRecord(lay).run_id, selected=selected,
                     notes_left=left, units=[u for u, _ in pairs], origins=[o for _, o in pairs],
                     max_units=max_units)


def integrate_stage(settings: Settings, run_id: str, unit: Unit, decide: Decide | None = None) -> ActionRecord:
    """Integrate one unit into exactly one digest node (raises when the decision is invalid)."""
    return integrate(settings, RunRecord(layout(settings), run_id), unit, decide or decide_offline)


def topics_stage(settings: Settings, plan: DreamPlan, topic_count: int, diversity_days: int) -> str | None:
    """Write `daily/<date>/interests.yaml` from the run's notes; returns its path."""
    lay = layout(settings)
    day = date.fromisoformat(plan.date)
    facts = [f for rel, _ in plan.selected for f in note_facts(parse_note(rel, read_text(lay.root / rel)))]
    topics = choose_topics(facts, topic_count, recent_topics(lay, day, diversity_days))
    if not topics:
        return None
    return write_topics(settings, RunRecord(lay, plan.run_id), day, topics, topic_count, diversity_days)


def finish_stage(settings: Settings, plan: DreamPlan, records: list[ActionRecord | str],
                 interests: str | None) -> DreamSummary:
    """Advance the catalog for notes whose units all succeeded, log the event, summarise.

    `records[i]` is the action of unit i, or the error text when it failed."""
    lay = layout(settings)
    summary = DreamSummary(run_id=plan.run_id, date=plan.date, notes_read=len(plan.selected),
                           notes_left=plan.notes_left, units=len(records))
    blocked = set(plan.origins[plan.max_units:])  # cut by max_units: not consumed
    for unit, origin, record in zip(plan.units, plan.origins, records):
        if isinstance(record, str):
            summary.failed_units[unit.name] = record
            blocked.add(origin)
            continue
        summary.actions[record.action] = summary.actions.get(record.action, 0) + 1
        if record.action != "none" and record.path not in summary.files_written:
            summary.files_written.append(record.path)
    if interests:
        summary.files_written.append(interests)
        summary.topics = [t["title"] for t in (yaml.safe_load(read_text(lay.root / interests)) or {}).get("topics", [])]
    consumed = {rel: sha for rel, sha in plan.selected if rel not in blocked}
    catalog = read_json(catalog_path(lay), {})
    catalog.update(consumed)
    atomic_write_json(catalog_path(lay), catalog)
    summary.notes_consumed = len(consumed)
    summary.status = "partial" if summary.failed_units else "ok"
    RunRecord(lay, plan.run_id).finish(summary.status, consumed, summary.model_dump())
    append_event(lay, "auto_dream", summary.files_written,
                 ", ".join(f"{k}={v}" for k, v in sorted(summary.actions.items())) or "no action")
    return summary


def run_dream(settings: Settings, day: date, hint: str = "", max_units: int = 5, max_notes: int = 50,
              topic_count: int = 3, topic_diversity_days: int = 7, extract: Extract | None = None,
              decide: Decide | None = None) -> DreamSummary:
    """The whole run, stage after stage (the dream flow runs the same stages as tasks)."""
    plan = extract_stage(settings, day, max_notes, max_units, extract)
    if plan is None:
        return DreamSummary(date=day.isoformat(), status="no change")
    records: list[ActionRecord | str] = []
    for unit in plan.units[:max_units]:
        try:
            records.append(integrate_stage(settings, plan.run_id, unit, decide))
        except Exception as exc:  # noqa: BLE001 - recorded in the summary; its notes stay unconsumed
            log.error("dream unit %r failed: %s", unit.name, exc)
            records.append(f"{type(exc).__name__}: {exc}")
    interests = topics_stage(settings, plan, topic_count, topic_diversity_days)
    return finish_stage(settings, plan, records, interests)


def proactive(settings: Settings, day: date) -> dict:
    """The topics of `day`'s interests.yaml, or a clean skipped result."""
    lay = layout(settings)
    path = lay.root / lay.daily / day.isoformat() / "interests.yaml"
    if not path.exists():
        return {"status": "skipped", "date": day.isoformat(), "reason": f"no {path.relative_to(lay.root)}"}
    data = yaml.safe_load(read_text(path)) or {}
    return {"status": "ok", "date": day.isoformat(), "topics": data.get("topics") or []}


def summary_markdown(summary: DreamSummary) -> str:
    """A dream run as Markdown: status, counts, actions, files written, failures, backlog."""
    actions = ", ".join(f"{k} {v}" for k, v in sorted(summary.actions.items())) or "none"
    lines = [f"# Dream {summary.date}: {summary.status}", "",
             f"run `{summary.run_id or '-'}`: {summary.notes_read} notes read, {summary.units} units, "
             f"{summary.notes_consumed} notes consumed, {summary.notes_left} left for the next run",
             "", f"**actions**: {actions}", ""]
    if summary.files_written:
        lines += ["## Files written", "", *[f"- `{path}`" for path in summary.files_written], ""]
    if summary.failed_units:
        lines += ["## Failed units (their notes stay for the next run)", "",
                  *[f"- {name}: {why}" for name, why in summary.failed_units.items()], ""]
    if summary.topics:
        lines += ["## Interest topics", "", *[f"- {topic}" for topic in summary.topics], ""]
    return "\n".join(lines)


__all__ = ["run_dream", "proactive", "select_notes", "BUCKETS", "summary_markdown"]
