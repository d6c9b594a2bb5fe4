"""Stage 3, consolidate ("dream"): new daily notes -> digest nodes, reversible, plus topics.

extract -> integrate (per unit) -> topics -> finish. A dream catalog records the sha256 of each
daily note when it was consolidated; a run takes every note up to `date` that is new or changed
since (oldest first, at most `max_notes`), so a missed night is caught up. Daily notes and
session logs are never modified. The caller holds the workspace lock.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

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
    speaker,
    unit_links,
    worth_a_node,
)
from memflow.tasks.dream.dream_runs import RunRecord, recover_interrupted
from memflow.tasks.dream.change import named_old_values, ungrounded
from memflow.tasks.dream.nodes import (
    consolidated_before,
    digest_citations,
    edited_fact,
    sibling_nodes,
    skipped_files,
    subject_nodes,
)
from memflow.tasks.ground.events import append_event
from memflow.tasks.ground.guard import FileRefused, guarded, parse_markdown
from memflow.tasks.ground.markdown import parse_anchor
from memflow.tasks.ground.notes import load_yaml, parse_note
from memflow.tasks.ground.workspace import (
    BUCKETS,
    Layout,
    date_of,
    file_stats,
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
    decode,
    read_json,
    read_regular,
    read_text,
)

log = logging.getLogger("memflow.dream")
CATALOG = "dream_catalog.json"

Extract = Callable[[list], list[tuple[Unit, str]]]
Decide = Callable[[Unit, dict[str, str], str], Decision]


def catalog_path(lay: Layout):
    return lay.state_dir / CATALOG


def daily_notes(lay: Layout, until: date) -> list[str]:
    """Daily notes (`daily/<date>/<note>.md`, regular files only: no FIFO, no symlink loop) up
    to `until`, oldest first."""
    found = []
    for rel in file_stats(lay, [lay.daily]):
        day = date_of(rel)
        if (rel.count("/") == lay.daily.count("/") + 2 and day and day <= until
                and not is_day_index(lay, rel)):
            found.append(rel)
    return sorted(found, key=lambda r: (date_of(r), r))


def pending_notes(lay: Layout, until: date) -> tuple[list[tuple[str, str]], list[str]]:
    """(notes new or changed since they were consolidated, with their sha256, oldest first;
    catalog entries of notes that are gone)."""
    catalog = read_json(catalog_path(lay), {})
    pending = []
    for rel in daily_notes(lay, until):
        sha = hashlib.sha256(read_regular(lay.root / rel)).hexdigest()
        if catalog.get(rel) != sha:
            pending.append((rel, sha))
    gone = [rel for rel in catalog if not (lay.root / rel).exists()]
    return pending, gone


def refuse_note(lay: Layout, rel: str, sha: str, reason: str, run: RunRecord) -> None:
    run.write_catalog(catalog_path(lay), {rel: sha})
    append_event(lay, "auto_dream", [rel], f"skipped {rel}: {reason}")


def adopt_consolidated(settings: Settings, notes: list[str]) -> int:
    """Record daily notes another system already consolidated as consumed, at their current
    content (a later edit makes them pending again). Returns how many were recorded."""
    lay = layout(settings)
    catalog = read_json(catalog_path(lay), {})
    adopted = 0
    for rel in notes:
        if (lay.root / rel).is_file():
            catalog[rel] = hashlib.sha256((lay.root / rel).read_bytes()).hexdigest()
            adopted += 1
    atomic_write_json(catalog_path(lay), catalog)
    return adopted


def within_budget(pairs: list[tuple[Unit, str]], notes: list[str], max_units: int) -> list[str]:
    """Whole notes, in order, while their units fit `max_units` (the first note always: a note
    is consumed only with all of its units, so a budget never stalls on a big note)."""
    per_note: dict[str, int] = dict.fromkeys(notes, 0)
    for _, origin in pairs:
        per_note[origin] = per_note.get(origin, 0) + 1
    taken, used = [], 0
    for rel in notes:
        if taken and used + per_note[rel] > max_units:
            break
        taken.append(rel)
        used += per_note[rel]
    return taken


def candidates(settings: Settings, unit: Unit, with_search: bool,
               subjects: dict[str, list[str]] | None = None) -> dict[str, str]:
    """The nodes of the unit's subject, plus (for a model) digest nodes recalled for it.
    `subjects`: `subject_nodes` when the caller has it (it walks every node's frontmatter)."""
    lay = layout(settings)
    subjects = subject_nodes(lay) if subjects is None else subjects
    paths = list(subjects.get(unit.subject or f"name:{slugify(unit.name)}", []))
    if with_search:
        try:
            response = search(settings, f"{unit.name} {unit.summary}"[:1000], limit=5,
                              filters=Filters(layer="digest"), link_limit=0, with_watermark=False)
            paths += [r.path for r in response.results if r.path not in paths]
        except IndexMissing:
            pass
    return {p: read_text(lay.root / p) for p in dict.fromkeys(paths) if (lay.root / p).is_file()}


def naming_nodes(lay: Layout, unit: Unit, own: dict[str, str],
                 subjects: dict[str, list[str]] | None = None) -> dict[str, str]:
    """For a statement about something named ("Rex is 4 years old now", a node `Rex`): the
    people's nodes that name it too ("My dog Rex is 3 years old" is the user's): where the
    same fact or the one it changes may be, whatever node the name's first mention went to."""
    if not unit.subject.startswith("topic:") or not _NAME_RE.fullmatch(unit.name):
        return {}
    named = re.compile(rf"(?<![\w-]){re.escape(unit.name)}(?![\w-])")
    out: dict[str, str] = {}
    for key, paths in (subject_nodes(lay) if subjects is None else subjects).items():
        if key.startswith("person:"):
            for rel in paths:
                if rel not in own and (lay.root / rel).is_file():
                    text = read_text(lay.root / rel)
                    if named.search(text):
                        out[rel] = text
    return out


def value_nodes(lay: Layout, unit: Unit, own: dict[str, str],
                subjects: dict[str, list[str]] | None = None) -> dict[str, str]:
    """For a statement that names an old value ("RDS went from Postgres 14 to Postgres 16",
    "... instead of MySQL"): the digest nodes holding that value, where the fact it changes may
    stand under another subject (the node `Cluster` saying it writes to RDS Postgres 14). Read
    from the files, not the index (nodes of this very run are not indexed yet); searched, never
    added to; the `VALUE_NODES` holding most of the values."""
    values = [v for v in dict.fromkeys(named_old_values(speaker(unit.summary)[1])) if len(v) > 1]
    if not values:
        return {}
    named = [re.compile(rf"(?<![\w-]){re.escape(v)}(?![\w-])", re.IGNORECASE) for v in values]
    found = []
    for paths in (subject_nodes(lay) if subjects is None else subjects).values():
        for rel in paths:
            if rel not in own and (lay.root / rel).is_file():
                text = read_text(lay.root / rel)
                hits = sum(bool(p.search(text)) for p in named)
                if hits:
                    found.append((-hits, rel, text))
    return {rel: text for _, rel, text in sorted(found)[:VALUE_NODES]}


VALUE_NODES = 5


def facet_nodes(lay: Layout, unit: Unit, own: dict[str, str],
                subjects: dict[str, list[str]] | None = None) -> dict[str, str]:
    """For a person's statement: that person's other nodes (the facet nodes `person:<who>:<facet>`
    that earlier versions filed their facts under), where the fact a statement changes may be."""
    if not unit.subject.startswith("person:"):
        return {}
    person = unit.subject.split(":")[:2]
    return {rel: read_text(lay.root / rel)
            for key, paths in (subject_nodes(lay) if subjects is None else subjects).items()
            if key.split(":")[:2] == person and key != unit.subject
            for rel in paths if rel not in own and (lay.root / rel).is_file()}


def modified_nodes(lay: Layout, unit: Unit, own: dict[str, str],
                   subjects: dict[str, list[str]] | None = None) -> dict[str, str]:
    """For a statement about a thing ("The backup job runs at 3am now", a node `Backup job`):
    the node of the same thing named with one word more or less before its head ("Nightly backup
    job"), where the fact it changes may be; nothing when two or more such nodes exist (which of
    them the statement means, it does not say)."""
    kind, _, slug = unit.subject.partition(":")
    if kind not in ("group", "topic") or not slug:
        return {}
    words = slug.split("-")
    found = []
    for key, paths in (subject_nodes(lay) if subjects is None else subjects).items():
        other_kind, _, other_slug = key.partition(":")
        other = other_slug.split("-")
        if other_kind not in ("group", "topic") or key == unit.subject or abs(len(other) - len(words)) != 1:
            continue
        short, full = sorted((words, other), key=len)
        if full[-len(short):] == short:  # the same head, one modifier before it
            found.append(paths)
    if len(found) != 1:
        return {}
    return {rel: read_text(lay.root / rel) for rel in found[0] if rel not in own and (lay.root / rel).is_file()}


_NAME_RE = re.compile(r"[A-Z][a-z]+(?:[A-Z][a-z]+)?")  # a node named by one name ("Rex", "McKay")


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
            if not digest.is_fact_node(read_text(lay.root / path)):
                raise ValueError(f"{path} is in the earlier node format: run `memflow dream migrate`")


def context_reader(lay: Layout) -> Callable[[list[str]], tuple[str, str]]:
    """links (`daily/...md#L12`) -> (the text of the daily lines they cite, of their notes): what
    a statement was said with (`change.other_context`); files read once per reader, missing or
    non-daily ones read as empty."""
    files: dict[str, list[str]] = {}

    def lines_of(rel: str) -> list[str]:
        if rel not in files:
            path = lay.root / rel
            files[rel] = read_text(path).split("\n") if rel.startswith(f"{lay.daily}/") and path.is_file() else []
        return files[rel]

    def context_of(links: list[str]) -> tuple[str, str]:
        cited, notes = [], []
        for link in links:
            rel, _, anchor = link.partition("#")
            lines = lines_of(rel)
            notes.append("\n".join(lines))
            for first, last in parse_anchor(anchor):
                cited.extend(lines[first - 1:last])
        return "\n".join(cited), "\n".join(dict.fromkeys(notes))

    return context_of


def unit_date(unit: Unit) -> str:
    days = [d for d in (date_of(p) for p in unit.paths) if d]
    return unit.date or (max(days).isoformat() if days else date.today().isoformat())


def find_fact(text: str, wanted: str) -> digest.FactLine:
    target = digest.plain(wanted)
    for fact in digest.facts_of(text):
        if fact.text == target or fact.text == wanted:
            return fact
    raise ValueError(f"the node has no fact {wanted[:80]!r}")


def apply_decision(lay: Layout, decision: Decision, unit: Unit,
                   context_of: Callable[[list[str]], tuple[str, str]] | None = None,
                   edit: bool = False) -> tuple[str, str | None, bool]:
    """(path, new text or None for a no-op, created?) of one decision. An edit touches one fact
    line at most, and `check_only_changed` proves no other line moved or changed. `edit`: a
    CORRECT of the fact citing the unit's own line, which a person edited (`nodes.edited_fact`):
    the edit is its evidence."""
    context_of = context_of or context_reader(lay)
    links, day = unit_links(unit), unit_date(unit)
    match decision:
        case Create(path=path, name=name, claims=claims, related=related, continues=continues):
            facts = [(day, digest.plain(c), links) for c in claims]
            extra = {"continues": continues} if continues else None
            return path, digest.render_node(name, unit.subject or f"name:{slugify(name)}", facts,
                                            related, extra), True
    path = decision.path
    before = read_text(lay.root / path)
    if set(links) <= digest.cited(before) and not unit.split and not edit:
        return path, None, False  # every source is there already: an idempotent re-run
    touched = None
    match decision:
        case Corroborate(fact=fact):
            touched = find_fact(before, fact) if fact else None
            after = digest.add_links(before, touched, links) if touched else \
                digest.add_fact(before, day, unit.summary, links)
        case Refine(additions=additions, before=above):
            anchor = find_fact(before, above) if above else None
            after = before
            for addition in additions:
                after = digest.add_fact(after, day, digest.plain(addition), links, before=anchor)
                anchor = find_fact(after, above) if above else None
        case Correct(old=old, new=new):
            touched = find_fact(before, old)
            if not edit:  # (an edited line is its own evidence: the fact cites it)
                check_grounded(new, context_of(links)[0])
            after = digest.supersede(before, touched, day, digest.plain(new), links)
            after = digest.set_meta(after, description=digest.described(digest.facts_of(after)[0].text))
    digest.check_only_changed(before, after, touched)
    return path, (None if after == before else after), False


def check_grounded(new: str, cited: str) -> None:
    """A CORRECT's new text must come from the lines its unit cites: every value it holds (a
    number, a name, an identifier) is in them, and most of its other words. This is the check
    of a model's decision: by structure, not by whether an offline rule sees the change."""
    missing = ungrounded(speaker(new)[1], cited)
    if missing:
        raise digest.NodeEditError(f"CORRECT refused: {new[:60]!r} is not in the lines its unit cites "
                                   f"({', '.join(missing[:5])} not there); the node is left as it was")


def split_if_full(lay: Layout, decision: Decision, unit: Unit, new_path: str, limit: int) -> Decision:
    """A node past `limit` bytes is not grown: the fact starts a continuation part of the same
    subject (CORRECT and CORROBORATE still edit the line where it stands)."""
    match decision:
        case Refine(path=path, before="") if (lay.root / path).stat().st_size > limit:
            name = parse_note(path, read_text(lay.root / path)).metadata.get("name", unit.name)
            return Create(path=new_path, name=str(name), description=digest.described(unit.summary),
                          claims=decision.additions, continues=path)
    return decision


def rebuild_catalog(lay: Layout, until: date, run: RunRecord | None = None) -> dict[str, str]:
    """The dream catalog derived from the digest (when `metadata/state/` was lost): a daily note
    every fact of which a digest node cites is consolidated as it is now; any other note stays
    pending (and a re-run is idempotent by source anyway). Journaled in `run` when a dream
    run rebuilds it (its rollback then removes the rebuilt catalog)."""
    cited = digest_citations(lay)
    catalog = {}
    for rel in daily_notes(lay, until):
        try:
            data = read_regular(lay.root / rel)
            facts = guarded(rel, lambda: note_facts(parse_note(rel, decode(data))))
        except (FileRefused, OSError, ValueError) as exc:  # stays pending: extract names it
            log.warning("dream catalog: %s left pending (%s)", rel, exc)
            continue
        if facts and all(f"{f.path}#L{f.lines[0]}" in cited for f in facts):
            catalog[rel] = hashlib.sha256(data).hexdigest()
    if run is not None:
        run.write_catalog(catalog_path(lay), catalog)
    else:
        atomic_write_json(catalog_path(lay), catalog)
    if catalog:
        log.warning("dream catalog rebuilt from the digest's sources: %d note(s) consolidated", len(catalog))
    return catalog


def integrate(settings: Settings, run: RunRecord, unit: Unit, decide: Decide | None,
              with_search: bool = False) -> ActionRecord:
    """One unit into one node: `decide` (a model) or the offline consolidator when None."""
    lay = layout(settings)
    links = unit_links(unit)
    if consolidated_before(lay, unit, links):
        edited = edited_fact(lay, unit, links)  # (only a cited line can have been edited since)
        if edited is not None:  # the line a fact cites says otherwise now: the fact follows it
            path, fact = edited
            return apply_and_write(lay, run, unit, Correct(path=path, old=fact.text, new=unit.summary,
                                                           reason="the line it cites was edited"), edit=True)
        # consolidated before (a re-run after a lost catalog or a recovered kill): never twice
        return ActionRecord(unit=unit.name, action="none", path="", created=False)
    if not worth_a_node(unit):  # a masked secret, a fragment: the daily note holds it
        return ActionRecord(unit=unit.name, action="none", path="", created=False)
    folder = f"{lay.digest}/{unit.bucket}"
    new_path = unique_path(lay, folder, slugify(unit.name))
    context_of = context_reader(lay)
    subjects = subject_nodes(lay)  # one walk of the digest's frontmatter for the unit
    nodes = candidates(settings, unit, with_search, subjects)
    decision = decide(unit, nodes, new_path) if decide else \
        decide_offline(unit, nodes, new_path, context_of,
                       {**naming_nodes(lay, unit, nodes, subjects), **modified_nodes(lay, unit, nodes, subjects),
                        **facet_nodes(lay, unit, nodes, subjects), **value_nodes(lay, unit, nodes, subjects)})
    if isinstance(decision, Create) and not decision.related:
        decision = decision.model_copy(update={"related": sibling_nodes(lay, unit.subject, subjects)})
    validate(lay, decision, unit)
    decision = split_if_full(lay, decision, unit, new_path, settings.digest_node_bytes)
    return apply_and_write(lay, run, unit, decision, context_of)


def apply_and_write(lay: Layout, run: RunRecord, unit: Unit, decision: Decision,
                    context_of: Callable[[list[str]], tuple[str, str]] | None = None,
                    edit: bool = False) -> ActionRecord:
    """Apply a validated decision and write its node, journaled in `run`."""
    path, text, created = apply_decision(lay, decision, unit, context_of, edit)
    record = ActionRecord(unit=unit.name, action=decision.action if text else "none", path=path,
                          created=created)
    if text is None:
        return record
    run.before_write(path, text)
    record.pre_sha256 = None if created else hashlib.sha256((lay.root / path).read_bytes()).hexdigest()
    atomic_write_text(lay.root / path, text)
    run.after_write(path, record)
    return record


def write_topics(settings: Settings, run: RunRecord, day: date, topics: list[Topic],
                 count: int, diversity_days: int) -> str:
    lay = layout(settings)
    rel = f"{lay.daily}/{day.isoformat()}/interests.yaml"
    data = {"date": day.isoformat(), "topic_count": count, "diversity_days": diversity_days,
            "topics": [t.model_dump() for t in topics]}
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    run.before_write(rel, text)
    atomic_write_text(lay.root / rel, text)
    run.after_write(rel)
    return rel


def recent_topics(lay: Layout, day: date, days: int) -> set[str]:
    titles = set()
    for back in range(1, days + 1):
        path = lay.root / lay.daily / (day - timedelta(days=back)).isoformat() / "interests.yaml"
        if path.exists():
            try:
                titles |= {str(t.get("title", "")).lower() for t in read_topics(path) if isinstance(t, dict)}
            except ValueError as exc:  # an earlier day's broken file only loses its diversity
                log.warning("%s", exc)
    return titles


def read_topics(path: Path) -> list:
    """The topics of an interests.yaml; ValueError naming the file when it is not one."""
    try:
        data = load_yaml(read_text(path, max_bytes=1024 * 1024)) or {}
    except (yaml.YAMLError, OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable interests file "
                         f"({(str(exc).splitlines() or [''])[0][:120]})") from exc
    topics = data.get("topics") if isinstance(data, dict) else None
    return topics if isinstance(topics, list) else []


def offline_extract(notes: list) -> list[tuple[Unit, str]]:
    return extract_units(notes)


class DreamStalled(RuntimeError):
    """A run consumed no note while notes were pending: every unit failed or the budget was
    too small for one note. Raised after the run is recorded, so nothing is lost."""


def extract_stage(settings: Settings, day: date, max_notes: int, max_units: int,
                  extract: Extract | None = None) -> DreamPlan | None:
    """Select pending daily notes (oldest first) within the run's budget (`max_notes` notes,
    `max_units` units, whole notes only) and extract their units; None when nothing is pending.
    What does not fit is the backlog (`notes_left`), worked off by the next runs."""
    lay = layout(settings)
    if recover_interrupted(lay, catalog_path(lay)):
        run_index(settings)  # the digest is back as it was before the killed run
    run = RunRecord(lay)  # every catalog change below is journaled in it: a rollback undoes it
    if not catalog_path(lay).exists():
        rebuild_catalog(lay, day, run)
    pending, gone = pending_notes(lay, day)
    if gone:
        run.write_catalog(catalog_path(lay), dict.fromkeys(gone))
    if not pending:
        if (run.dir / "manifest.json").exists():  # the catalog changed: a finished run, not a killed one
            run.finish("no change", {}, DreamSummary(run_id=run.run_id, date=day.isoformat(),
                                                     status="no change").model_dump())
        return None
    if extract is not None and not (lay.index_dir / "watermark.json").exists():
        run_index(settings)  # a model's candidates come from search
    batch, notes, skipped = [], [], skipped_files(lay)
    for rel, sha in pending[:max(1, max_notes)]:
        try:
            notes.append(guarded(rel, lambda: parse_markdown(rel, read_regular(lay.root / rel), settings)))
            batch.append((rel, sha))
        except FileRefused as exc:  # consumed as it is (no units), said in the inbox; retried when it changes
            log.warning("dream skips %s: %s", rel, exc)
            refuse_note(lay, rel, sha, str(exc), run)
            skipped[rel] = str(exc)
    pairs = (extract or offline_extract)(notes)
    taken = set(within_budget(pairs, [rel for rel, _ in batch], max_units))
    pairs = [(u, o) for u, o in pairs if o in taken]
    selected = [(rel, sha) for rel, sha in batch if rel in taken]
    return DreamPlan(date=day.isoformat(), run_id=run.run_id, selected=selected,
                     notes_left=len(pending) - len(selected), units=[u for u, _ in pairs],
                     origins=[o for _, o in pairs], max_units=max_units, skipped=skipped)


def nothing_to_do(settings: Settings, day: date, plan: DreamPlan | None) -> DreamSummary | None:
    """The run's summary when there is nothing to consolidate (no pending note, or every pending
    note refused), naming the files left out; None when the run has work."""
    if plan is not None and plan.selected:
        return None
    skipped = plan.skipped if plan is not None else skipped_files(layout(settings))
    if skipped:
        for rel, why in sorted(skipped.items()):
            log.warning("dream skips %s: %s", rel, why)
    return DreamSummary(date=day.isoformat(), status="no change", skipped=skipped)


def integrate_stage(settings: Settings, run_id: str, unit: Unit, decide: Decide | None = None) -> ActionRecord:
    """Integrate one unit into exactly one digest node (raises when the decision is invalid).
    A model decides among the subject's nodes and the digest nodes search recalls."""
    return integrate(settings, RunRecord(layout(settings), run_id), unit, decide,
                     with_search=decide is not None)


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
    """Consume every note whose units were all integrated, index what changed, log the event,
    summarise. `records[i]` is the action of unit i, or the error text when it failed; units past
    the end of `records` were not reached (a time budget) and keep their notes pending.
    Raises DreamStalled when notes were pending and none was consumed."""
    lay = layout(settings)
    summary = DreamSummary(run_id=plan.run_id, date=plan.date, notes_read=len(plan.selected),
                           units=len(records), skipped=plan.skipped)
    blocked = set(plan.origins[len(records):])
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
        summary.topics = [t["title"] for t in read_topics(lay.root / interests)]
    consumed = {rel: sha for rel, sha in plan.selected if rel not in blocked}
    RunRecord(lay, plan.run_id).write_catalog(catalog_path(lay), consumed)  # journaled first
    summary.notes_consumed = len(consumed)
    summary.notes_left = plan.notes_left + len(plan.selected) - len(consumed)
    summary.status = "partial" if summary.failed_units or summary.notes_left else "ok"
    if not consumed:
        summary.status = "stalled"
    if summary.files_written:
        run_index(settings)
    RunRecord(lay, plan.run_id).finish(summary.status, consumed, summary.model_dump())
    actions = ", ".join(f"{k}={v}" for k, v in sorted(summary.actions.items())) or "no action"
    left_out = "".join(f"; skipped {rel}: {why}" for rel, why in sorted(summary.skipped.items())[:20])
    append_event(lay, "auto_dream", summary.files_written,
                 f"{actions}; backlog: {summary.notes_left} notes{left_out}")
    if not consumed:
        failures = "; ".join(f"{k}: {v}" for k, v in list(summary.failed_units.items())[:3])
        raise DreamStalled(f"dream run {plan.run_id} consumed none of {len(plan.selected)} note(s); "
                           f"backlog: {summary.notes_left} notes" + (f" ({failures})" if failures else ""))
    return summary


def integrate_within(units: list[Unit], one: Callable[[Unit], ActionRecord | str], started: float,
                     max_seconds: float) -> list[ActionRecord | str]:
    """`one(unit)` for each unit in order, until `max_seconds` (> 0) have passed since
    `started`; the units not reached keep their notes in the backlog (finish_stage)."""
    records: list[ActionRecord | str] = []
    for unit in units:
        if max_seconds > 0 and records and time.monotonic() - started > max_seconds:
            break
        records.append(one(unit))
    return records


def run_dream(settings: Settings, day: date, hint: str = "", max_units: int = 500,
              max_notes: int = 200, topic_count: int = 3, topic_diversity_days: int = 7,
              extract: Extract | None = None, decide: Decide | None = None,
              max_seconds: float = 0.0) -> DreamSummary:
    """The whole run, stage after stage (the dream flow runs the same stages as tasks).
    `max_seconds` > 0 stops taking units after that long; their notes stay in the backlog."""
    started = time.monotonic()
    plan = extract_stage(settings, day, max_notes, max_units, extract)
    if (quiet := nothing_to_do(settings, day, plan)) is not None:
        return quiet

    def one(unit: Unit) -> ActionRecord | str:
        try:
            return integrate_stage(settings, plan.run_id, unit, decide)
        except Exception as exc:  # noqa: BLE001 - recorded in the summary; its notes stay unconsumed
            log.error("dream unit %r failed: %s", unit.name, exc)
            return f"{type(exc).__name__}: {exc}"

    records = integrate_within(plan.units, one, started, max_seconds)
    interests = topics_stage(settings, plan, topic_count, topic_diversity_days)
    return finish_stage(settings, plan, records, interests)


def proactive(settings: Settings, day: date) -> dict:
    """The topics of `day`'s interests.yaml, or a clean skipped result."""
    lay = layout(settings)
    path = lay.root / lay.daily / day.isoformat() / "interests.yaml"
    if not path.exists():
        return {"status": "skipped", "date": day.isoformat(), "reason": f"no {path.relative_to(lay.root)}"}
    return {"status": "ok", "date": day.isoformat(), "topics": read_topics(path)}


def summary_markdown(summary: DreamSummary) -> str:
    """A dream run as Markdown: status, counts, actions, files written, failures, backlog."""
    actions = ", ".join(f"{k} {v}" for k, v in sorted(summary.actions.items())) or "none"
    lines = [f"# Dream {summary.date}: {summary.status}", "",
             f"run `{summary.run_id or '-'}`: {summary.notes_read} notes read, {summary.units} units, "
             f"{summary.notes_consumed} notes consumed; backlog: {summary.notes_left} notes",
             "", f"**actions**: {actions}", ""]
    if summary.files_written:
        lines += ["## Files written", "", *[f"- `{path}`" for path in summary.files_written], ""]
    if summary.skipped:
        lines += ["## Files left out", "",
                  *[f"- `{rel}`: {why}" for rel, why in sorted(summary.skipped.items())], ""]
    if summary.failed_units:
        lines += ["## Failed units (their notes stay for the next run)", "",
                  *[f"- {name}: {why}" for name, why in summary.failed_units.items()], ""]
    if summary.topics:
        lines += ["## Interest topics", "", *[f"- {topic}" for topic in summary.topics], ""]
    return "\n".join(lines)


__all__ = ["run_dream", "nothing_to_do", "proactive", "pending_notes", "BUCKETS", "summary_markdown",
           "DreamStalled"]
