"""`memflow forget`: plan what goes, then do it.

A forgotten session-log message is replaced in place by `{"forgotten": true}` (line numbers, and
so every provenance link to other lines, stay valid); a forgotten daily note is deleted; a line
of a daily note, digest node (one a person wrote included) or text resource that states
forgotten material is removed; a digest fact whose every source is forgotten goes, and when it
was the current value of a fact with history, the newest history line becomes current again; a
digest node left without facts, or a captured daily note without items, goes. A captured daily
note that lost lines is named again from what is left (`capture.retitle`); files whose names
carry a `--match` text, or were named by such a title, are renamed and links to them rewritten
(`matching`). State files lose what quotes it (`scrub`); the index is rebuilt for the changed
files, LanceDB keeps no old version, the keyword snapshot no old generation, the embedding cache
no vector of a text that is gone. Tombstones (salted hashes, `ground.tombstones`) keep later
captures from bringing any of it back.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from memflow.schemas.settings import Settings
from memflow.tasks.capture import (
    log_path,
    message_key,
    message_text,
    read_log,
    refresh_day_index,
    retitle,
)
from memflow.tasks.dream import fact_line, facts_of, set_meta
from memflow.tasks.forget.matching import (
    edited_text,
    files,
    is_captured,
    line_map,
    phrase_of,
    plan_lines,
    plan_links,
    plan_renames,
    remove_empty_dirs,
)
from memflow.tasks.forget.scrub import Forgotten, scrub_state, scrub_topics
from memflow.tasks.ground import tombstones
from memflow.tasks.ground.events import append_event
from memflow.tasks.ground.markdown import parse_anchor, parse_links
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.workspace import Layout, date_of, layout, safe_path
from memflow.tasks.index import embedding_cache_dir, open_store, run_index
from memflow.tasks.stores import keyword
from memflow.tasks.stores.files import atomic_write_text, read_text
from memflow.tasks.stores.lance import EmbeddingCache, IndexStore

FORGOTTEN = json.dumps({"forgotten": True})


@dataclass
class ForgetPlan:
    log_lines: dict[str, set[int]] = field(default_factory=dict)   # session log -> lines
    message_keys: set[str] = field(default_factory=set)
    delete: set[str] = field(default_factory=set)                  # files removed whole
    edits: dict[str, dict[int, str | None]] = field(default_factory=dict)  # file -> line -> new or None
    renames: dict[str, str] = field(default_factory=dict)          # old path -> new path
    phrase: str = ""                                               # `--match`, normalised
    notes: set[tuple[str, str]] = field(default_factory=set)       # (session, date) tombstones
    said: list[str] = field(default_factory=list)                  # texts of forgotten messages
    state: list[str] = field(default_factory=list)                 # state files rewritten
    days: list[str] = field(default_factory=list)                  # day indexes refreshed

    def empty(self) -> bool:
        return not (self.log_lines or self.delete or self.edits or self.renames)

    def forgotten(self) -> Forgotten:
        return Forgotten(self.phrase, self.said, set(self.delete), dict(self.renames))

    def lines(self) -> list[str]:
        """What would change, one line each."""
        out = [f"forget {len(n)} message(s) in {p}" for p, n in sorted(self.log_lines.items())]
        out += [f"delete {p}" for p in sorted(self.delete)]
        for path, edit in sorted(self.edits.items()):
            if path in self.delete:
                continue
            dropped = sum(1 for v in edit.values() if v is None)
            changed = len(edit) - dropped
            out.append(f"edit {path}: remove {dropped} line(s)" + (f", rewrite {changed}" if changed else ""))
        out += [f"rename {old} -> {new}" for old, new in sorted(self.renames.items())]
        out += [f"rewrite {p}" for p in self.state]
        out += [f"refresh the day index of {day}" for day in self.days]
        out.append("rebuild the index of the changed files (no old LanceDB version or keyword "
                   "generation kept; their vectors leave the embedding cache)")
        return out


def _cites(link_target: str, anchor: str, gone_notes: set[str], gone_lines: dict[str, set[int]]) -> bool:
    """A link points at forgotten material: a deleted note, or forgotten lines of a file."""
    if link_target in gone_notes:
        return True
    lines = gone_lines.get(link_target)
    if not lines or not anchor:
        return False
    cited = {n for a, b in parse_anchor(anchor) for n in range(a, b + 1)}
    return bool(cited) and cited <= lines


def plan_forget(settings: Settings, session: str | None = None, note: str | None = None,
                match: str | None = None) -> ForgetPlan:
    """What forgetting a session, a daily note or every mention of a text would change."""
    lay = layout(settings)
    plan = ForgetPlan()
    if session:
        _plan_session(lay, plan, session)
    if note:
        _plan_note(lay, plan, note)
    if match:
        plan.phrase = phrase_of(match)
        logs, edits = plan_lines(lay, plan.phrase)
        for rel, lines in logs.items():
            plan.log_lines.setdefault(rel, set()).update(lines)
        plan.edits.update(edits)
    for rel, lines in plan.log_lines.items():
        session_id = rel.rsplit("/", 1)[-1].removesuffix(".jsonl")
        log = read_log(lay, session_id)
        live = [n for n in sorted(lines) if 0 < n <= len(log) and not log[n - 1].get("forgotten")]
        plan.message_keys |= {message_key(log[n - 1]) for n in live}
        plan.said += [message_text(log[n - 1]) for n in live]
    for rel in plan.delete:
        meta = parse_note(rel, read_text(lay.root / rel)).metadata
        day = date_of(rel)
        if meta.get("session_id") and day:
            plan.notes.add((str(meta["session_id"]), day.isoformat()))
    _plan_daily_lines(lay, plan)
    _plan_emptied(lay, plan)
    _plan_digest(lay, plan)
    _plan_emptied(lay, plan)
    plan.renames = plan_renames(lay, plan.phrase, plan.edits, plan.delete)
    maps = {rel: line_map(read_text(lay.root / rel), _final_text(lay, rel, edit))
            for rel, edit in plan.edits.items() if rel not in plan.delete and None in edit.values()}
    plan_links(lay, plan.renames, maps, plan.edits, plan.delete)
    plan.state = scrub_state(lay, plan.forgotten(), write=False)
    plan.days = sorted({d.isoformat() for rel in [*plan.edits, *plan.delete, *plan.renames]
                        if rel.startswith(f"{lay.daily}/") and (d := date_of(rel))})
    return plan


def _plan_session(lay: Layout, plan: ForgetPlan, session: str) -> None:
    rel = log_path(lay, session)
    log = read_log(lay, session)
    if not log:
        raise LookupError(f"forget --session {session}: no session log {rel} "
                          f"(a session id is a file name under {lay.session}/dialog/, without .jsonl)")
    plan.log_lines[rel] = set(range(1, len(log) + 1))
    for daily in files(lay, lay.daily):
        meta = parse_note(daily, read_text(lay.root / daily)).metadata
        if meta.get("session_id") == session or meta.get("source_conversation") == f"[[{rel}]]":
            plan.delete.add(daily)


def _plan_note(lay: Layout, plan: ForgetPlan, note: str) -> None:
    path = safe_path(lay.root, note)
    rel = path.relative_to(lay.root).as_posix()
    if not path.is_file() or not rel.startswith(f"{lay.daily}/"):
        raise LookupError(f"forget --note {note}: no such daily note (give a path under "
                          f"{lay.daily}/, as search or the day index shows it)")
    plan.delete.add(rel)
    for link in parse_links(read_text(path)):
        if link.target.startswith(f"{lay.session}/") and link.anchor:
            lines = {n for a, b in parse_anchor(link.anchor) for n in range(a, b + 1)}
            plan.log_lines.setdefault(link.target, set()).update(lines)


def _plan_emptied(lay: Layout, plan: ForgetPlan) -> None:
    """A digest node that had facts and has none left, and a captured daily note with no item
    left, are removed whole (their title and description summarised what is gone)."""
    for rel, edit in list(plan.edits.items()):
        if rel in plan.delete:
            continue
        before = read_text(lay.root / rel)
        after = edited_text(before, edit)
        node = rel.startswith(f"{lay.digest}/") and facts_of(before) and not facts_of(after)
        note = is_captured(lay, rel, before) and not any(
            line.startswith("- ") for line in parse_note(rel, after).body.split("\n"))
        if node or note:
            plan.delete.add(rel)
            del plan.edits[rel]


def _plan_daily_lines(lay: Layout, plan: ForgetPlan) -> None:
    """Daily-note lines that cite only forgotten log lines go too."""
    for rel in files(lay, lay.daily):
        if rel in plan.delete:
            continue
        for link in parse_links(read_text(lay.root / rel)):
            if _cites(link.target, link.anchor, set(), plan.log_lines):
                plan.edits.setdefault(rel, {})[link.line] = None


def _gone(link: str, plan: ForgetPlan, gone_lines: dict[str, set[int]]) -> bool:
    target, _, anchor = link.partition("#")
    return _cites(target, anchor, plan.delete, gone_lines)


def _plan_digest(lay: Layout, plan: ForgetPlan) -> None:
    """Digest lines whose every source is forgotten go; others lose the forgotten links. Keys
    of `plan.edits` are 1-based line numbers."""
    gone_lines = {rel: {n for n, v in edit.items() if v is None} for rel, edit in plan.edits.items()}
    for rel in files(lay, lay.digest):
        text = read_text(lay.root / rel)
        lines = text.split("\n")
        edit = plan.edits.get(rel, {})
        for fact in facts_of(text):
            for line in [fact, *fact.history]:
                kept = [link for link in line.links if not _gone(link, plan, gone_lines)]
                if len(kept) < len(line.links):
                    edit[line.line + 1] = _relink(lines[line.line], line.links, kept) if kept else None
            if fact.line + 1 in edit and edit[fact.line + 1] is None:
                survivor = next((h for h in fact.history if edit.get(h.line + 1, "") is not None), None)
                if survivor is not None:  # the newest older value is current again
                    day = date_of(survivor.links[0].split("#")[0]) if survivor.links else None
                    edit[survivor.line + 1] = fact_line(day.isoformat() if day else survivor.date,
                                                               survivor.text, survivor.links)
        if edit:
            plan.edits[rel] = edit


def _relink(line: str, links: list[str], kept: list[str]) -> str:
    for link in links:
        if link not in kept:
            line = line.replace(f" [[{link}]]", "")
    return line


def _forget_messages(lay: Layout, plan: ForgetPlan) -> list[str]:
    for rel, numbers in sorted(plan.log_lines.items()):
        path = lay.root / rel
        lines = read_text(path).split("\n")
        for n in numbers:
            if 0 < n <= len(lines) and lines[n - 1].strip():
                lines[n - 1] = FORGOTTEN
        atomic_write_text(path, "\n".join(lines))
        session_id = rel.rsplit("/", 1)[-1].removesuffix(".jsonl")
        if all(m.get("forgotten") for m in read_log(lay, session_id)):
            (lay.state_dir / "capture" / f"{session_id}.json").unlink(missing_ok=True)
    return sorted(plan.log_lines)


def _final_text(lay: Layout, rel: str, edit: dict[int, str | None]) -> str:
    """A file as a plan leaves it: lines removed or rewritten, a digest node described by its
    first fact, a captured daily note that lost lines named again."""
    before = read_text(lay.root / rel)
    out = edited_text(before, edit)
    if rel.startswith(f"{lay.digest}/") and facts_of(out) and facts_of(before):
        out = set_meta(out, description=facts_of(out)[0].text[:200])
    if None in edit.values() and is_captured(lay, rel, before):
        out = retitle(out)[1]
    return out


def _write_edits(lay: Layout, plan: ForgetPlan) -> list[str]:
    changed = []
    for rel, edit in sorted(plan.edits.items()):
        if rel not in plan.delete:
            atomic_write_text(lay.root / rel, _final_text(lay, rel, edit))
            changed.append(rel)
    return changed


def _move(lay: Layout, plan: ForgetPlan) -> list[str]:
    for old, new in sorted(plan.renames.items()):
        target = lay.root / new
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(lay.root / old, target)
    remove_empty_dirs(lay.root, list(plan.renames))
    return sorted(plan.renames.values())


def _refresh_days(lay: Layout, rels: list[str] | None) -> None:
    """The day indexes of the dates of `rels` (None: of every date, after a killed forget that
    may have deleted a note before refreshing its day) list their notes as they are now."""
    if rels is None:
        rels = [p.relative_to(lay.root).as_posix() for p in (lay.root / lay.daily).glob("*")]
    for day in sorted({date_of(rel) for rel in rels if rel.startswith(f"{lay.daily}/")} - {None}):
        refresh_day_index(lay, day)


def _rebuild_index(settings: Settings, lay: Layout, store: IndexStore, embedded_before: set[str]) -> None:
    """The changed files' index rows are replaced; no old LanceDB version, keyword generation or
    cached vector of a forgotten text is kept."""
    run_index(settings, delta=False)  # a delta would keep its main segment, which holds the text
    store.compact(keep_seconds=0)  # deleted rows leave the fragments (an index built now lacks them)
    store.rebuild_key_indexes()
    store.compact(keep_seconds=0)  # and the old key index files go
    for folder in sorted((lay.index_dir / "keyword").glob("*/")):
        keyword.drop_old_generations(folder)
    EmbeddingCache(embedding_cache_dir(settings)).forget(embedded_before - store.text_shas())


PENDING = "forget_pending"  # a forget was killed before its index rebuild: the next forget does it


def finish_pending(settings: Settings) -> bool:
    """Rebuild the index as a killed forget would have (its files are done, so a rerun plans
    nothing, but old index versions may still hold the text); True if there was one."""
    lay = layout(settings)
    marker = lay.state_dir / PENDING
    if not marker.exists():
        return False
    store = open_store(lay, settings)
    _refresh_days(lay, None)
    _rebuild_index(settings, lay, store, store.text_shas())
    marker.unlink()
    return True


def apply_forget(settings: Settings, plan: ForgetPlan) -> list[str]:
    """Carry out a plan; returns the files changed. The caller holds the workspace lock."""
    lay = layout(settings)
    store = open_store(lay, settings)  # level with the snapshot: a write's rows may be in its delta only
    # Every indexed text before (not only the plan's files: a killed forget's edits are not
    # reindexed yet): what has left the index afterwards leaves the embedding cache.
    embedded_before = store.text_shas()
    killed_before = (lay.state_dir / PENDING).exists()
    atomic_write_text(lay.state_dir / PENDING, "forget runs; if no forget runs now, run forget again\n")
    # Tombstones first: a forget killed after this is finished by running it again, and the
    # messages it already blanked are still known (a rerun plans only what is left).
    tombstones.add(lay, sorted(plan.message_keys), plan.said, [plan.phrase] if plan.phrase else [],
                   sorted(plan.notes))
    # State before sources: a forget killed after blanking the log is run again from a plan
    # that no longer knows the texts, so what quotes them must be gone by then.
    forgotten = plan.forgotten()
    changed = scrub_topics(lay, forgotten) + scrub_state(lay, forgotten)
    changed += _forget_messages(lay, plan) + _write_edits(lay, plan)
    for rel in sorted(plan.delete):
        (lay.root / rel).unlink(missing_ok=True)
    changed += sorted(plan.delete) + _move(lay, plan)
    _refresh_days(lay, None if killed_before else [*changed, *plan.renames])
    _rebuild_index(settings, lay, store, embedded_before)
    (lay.state_dir / PENDING).unlink()
    kept = sorted({rel for rel in changed if (lay.root / rel).exists()})
    removed = len(plan.delete)  # the event names no removed file: that is the point
    append_event(lay, "forget", kept or ["(forgotten)"],
                 f"forgot {sum(len(v) for v in plan.log_lines.values())} message(s); removed "
                 f"{removed} file(s), renamed {len(plan.renames)}, edited {len(kept)}")
    return changed
