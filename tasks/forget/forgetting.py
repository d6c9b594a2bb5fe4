"""`memflow forget`: plan what goes, then do it.

A forgotten session-log message is replaced in place by `{"forgotten": true}` (line numbers, and
so every provenance link to other lines, stay valid); a forgotten daily note is deleted; a line
of a daily note, digest node or text resource that states forgotten material is removed; a
digest fact whose every source is forgotten goes, and when it was the current value of a fact
with history, the newest history line becomes current again. Tombstones keep later captures from
bringing any of it back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import yaml

from memflow.schemas.settings import Settings
from memflow.tasks.capture import log_path, message_key, message_text, read_log, refresh_day_index
from memflow.tasks.dream import fact_line, facts_of, forget_catalog_entries, set_meta
from memflow.tasks.ground import tombstones
from memflow.tasks.ground.events import append_event
from memflow.tasks.ground.markdown import line_text, parse_anchor, parse_links
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.workspace import Layout, date_of, layout, safe_path
from memflow.tasks.index import drop_old_snapshots, embedding_cache_dir, run_index
from memflow.tasks.stores.files import atomic_write_json, atomic_write_text, read_json, read_text
from memflow.tasks.stores.lance import EmbeddingCache, IndexStore

FORGOTTEN = json.dumps({"forgotten": True})
TEXT_SUFFIXES = (".md", ".txt", ".json", ".jsonl", ".csv", ".yaml", ".yml", ".html")


@dataclass
class ForgetPlan:
    log_lines: dict[str, set[int]] = field(default_factory=dict)   # session log -> lines
    message_keys: set[str] = field(default_factory=set)
    delete: set[str] = field(default_factory=set)                  # daily notes removed whole
    edits: dict[str, dict[int, str | None]] = field(default_factory=dict)  # file -> line -> new or None
    texts: list[str] = field(default_factory=list)
    notes: set[str] = field(default_factory=set)                   # "session|date" tombstones
    said: list[str] = field(default_factory=list)                  # texts of forgotten messages

    def empty(self) -> bool:
        return not (self.log_lines or self.delete or self.edits)

    def lines(self) -> list[str]:
        """What would change, one line each."""
        out = [f"forget {len(n)} message(s) in {p}" for p, n in sorted(self.log_lines.items())]
        out += [f"delete {p}" for p in sorted(self.delete)]
        for path, edit in sorted(self.edits.items()):
            dropped = sum(1 for v in edit.values() if v is None)
            changed = len(edit) - dropped
            out.append(f"edit {path}: remove {dropped} line(s)" + (f", rewrite {changed}" if changed else ""))
        return out


def _files(lay: Layout, folder: str, suffixes=(".md",)) -> list[str]:
    base = lay.root / folder
    return sorted(p.relative_to(lay.root).as_posix() for p in base.rglob("*")
                  if p.is_file() and p.suffix.lower() in suffixes) if base.is_dir() else []


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
        rel = log_path(lay, session)
        log = read_log(lay, session)
        if not log:
            raise LookupError(f"no session log {rel}")
        plan.log_lines[rel] = set(range(1, len(log) + 1))
        plan.message_keys |= {message_key(m) for m in log if not m.get("forgotten")}
        for daily in _files(lay, lay.daily):
            meta = parse_note(daily, read_text(lay.root / daily)).metadata
            if meta.get("session_id") == session or meta.get("source_conversation") == f"[[{rel}]]":
                plan.delete.add(daily)
    if note:
        path = safe_path(lay.root, note)
        rel = path.relative_to(lay.root).as_posix()
        if not path.is_file() or not rel.startswith(f"{lay.daily}/"):
            raise LookupError(f"no daily note {note}")
        plan.delete.add(rel)
        for link in parse_links(read_text(path)):
            if link.target.startswith(f"{lay.session}/") and link.anchor:
                lines = {n for a, b in parse_anchor(link.anchor) for n in range(a, b + 1)}
                plan.log_lines.setdefault(link.target, set()).update(lines)
    if match:
        plan.texts.append(match)
        _plan_match(lay, plan, match)
    for rel, lines in plan.log_lines.items():
        session_id = rel.rsplit("/", 1)[-1].removesuffix(".jsonl")
        log = read_log(lay, session_id)
        plan.message_keys |= {message_key(log[n - 1]) for n in lines if 0 < n <= len(log)
                              and not log[n - 1].get("forgotten")}
        plan.said += [message_text(log[n - 1]) for n in sorted(lines) if 0 < n <= len(log)]
    for rel in plan.delete:
        meta = parse_note(rel, read_text(lay.root / rel)).metadata
        day = date_of(rel)
        if meta.get("session_id") and day:
            plan.notes.add(f"{meta['session_id']}|{day.isoformat()}")
    _plan_daily_lines(lay, plan)
    _plan_digest(lay, plan)
    return plan


def _plan_match(lay: Layout, plan: ForgetPlan, match: str) -> None:
    folded = match.casefold()
    for rel in _files(lay, f"{lay.session}/dialog", (".jsonl",)):
        log = read_log(lay, rel.rsplit("/", 1)[-1].removesuffix(".jsonl"))
        hit = {n for n, m in enumerate(log, 1) if folded in message_text(m).casefold()}
        if hit:
            plan.log_lines.setdefault(rel, set()).update(hit)
    for rel in _files(lay, lay.daily) + _files(lay, lay.resource, TEXT_SUFFIXES):
        for number, line in enumerate(read_text(lay.root / rel).split("\n"), 1):
            if folded in line.casefold():
                plan.edits.setdefault(rel, {})[number] = None


def _plan_daily_lines(lay: Layout, plan: ForgetPlan) -> None:
    """Daily-note lines that cite only forgotten log lines go too."""
    for rel in _files(lay, lay.daily):
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
    for rel in _files(lay, lay.digest):
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


def _scrub_topics(lay: Layout, plan: ForgetPlan) -> list[str]:
    """Interest topics (`daily/<date>/interests.yaml`) lose evidence that quotes forgotten
    material; a topic left without evidence goes."""
    said = [t.casefold() for t in plan.said + plan.texts if len(t) >= 4]
    changed = []
    for path in sorted((lay.root / lay.daily).glob("*/interests.yaml")):
        data = yaml.safe_load(read_text(path)) or {}
        topics = []
        for topic in data.get("topics") or []:
            evidence = [e for e in topic.get("evidence", [])
                        if not any(s in str(e).casefold() or str(e).casefold() in s for s in said)]
            if evidence or not topic.get("evidence"):
                topics.append({**topic, "evidence": evidence,
                               "paths": [p for p in topic.get("paths", []) if p not in plan.delete]})
        if topics != (data.get("topics") or []):
            atomic_write_text(path, yaml.safe_dump({**data, "topics": topics}, allow_unicode=True,
                                                   sort_keys=False))
            changed.append(path.relative_to(lay.root).as_posix())
    return changed


def _mentions(text: str, plan: ForgetPlan, paths: list[str]) -> bool:
    """A piece of state quotes forgotten material: a removed file's path, a forgotten text, or a
    fact line (12+ characters) of a forgotten message."""
    folded = text.casefold()
    if any(p.casefold() in folded for p in paths) or any(t.casefold() in folded for t in plan.texts):
        return True
    said = [s.casefold() for s in plan.said]
    for line in text.split("\n"):
        bare = line_text(line).casefold()
        if len(bare) >= 12 and any(bare in s for s in said):
            return True
    return False


def _scrub_state(lay: Layout, plan: ForgetPlan, removed: list[str]) -> None:
    """State that quotes forgotten material: the dream catalog (entries of removed notes), the
    inbox (their paths and summaries), dream-run pre-images (deleted; such a run can no longer
    be rolled back) and a forgotten session's capture watermark."""
    paths = sorted(set(removed) | plan.delete)
    catalog = lay.state_dir / "dream_catalog.json"
    if catalog.exists():
        atomic_write_json(catalog, {k: v for k, v in read_json(catalog, {}).items() if k not in paths})
    inbox = lay.state_dir / "inbox.jsonl"
    if inbox.exists():
        events = [json.loads(line) for line in read_text(inbox).splitlines() if line.strip()]
        for event in events:
            event["paths"] = ["(forgotten)" if p in paths else p for p in event.get("paths", [])]
            if _mentions(event.get("summary", ""), plan, paths):
                event["summary"] = "(details forgotten)"
        atomic_write_text(inbox, "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events))
    for manifest_path in sorted((lay.state_dir / "dream_runs").glob("*/manifest.json")):
        manifest = read_json(manifest_path, {})
        folder, touched = manifest_path.parent, False
        for rel, info in manifest.get("files", {}).items():
            pre = folder / "pre" / rel
            if pre.exists() and _mentions(read_text(pre), plan, paths):
                pre.unlink()
                info["forgotten"], touched = True, True
        touched = forget_catalog_entries(folder, manifest, set(paths)) or touched
        if touched or _mentions(json.dumps(manifest, ensure_ascii=False), plan, paths):
            manifest["summary"] = {"forgotten": "details removed by memflow forget"}
            manifest["actions"] = [{**a, "unit": "(forgotten)", "path": "(forgotten)"}
                                   if a.get("path") in paths or _mentions(a.get("unit", ""), plan, paths)
                                   else a for a in manifest.get("actions", [])]
            manifest["files"] = {("(forgotten)" if rel in paths else rel): info
                                 for rel, info in manifest.get("files", {}).items()}
            manifest["catalog_added"] = {k: v for k, v in manifest.get("catalog_added", {}).items()
                                         if k not in paths}
            atomic_write_json(manifest_path, manifest)
    for rel in plan.log_lines:
        session_id = rel.rsplit("/", 1)[-1].removesuffix(".jsonl")
        if all(m.get("forgotten") for m in read_log(lay, session_id)):
            (lay.state_dir / "capture" / f"{session_id}.json").unlink(missing_ok=True)


def _empty_nodes(lay: Layout, plan: ForgetPlan) -> list[str]:
    """A digest node with no fact left is removed."""
    gone = []
    for rel in plan.edits:
        path = lay.root / rel
        if rel.startswith(f"{lay.digest}/") and path.exists() and not facts_of(read_text(path)):
            path.unlink()
            gone.append(rel)
    return gone


def _relink(line: str, links: list[str], kept: list[str]) -> str:
    for link in links:
        if link not in kept:
            line = line.replace(f" [[{link}]]", "")
    return line


def apply_forget(settings: Settings, plan: ForgetPlan) -> list[str]:
    """Carry out a plan; returns the files changed. The caller holds the workspace lock."""
    lay = layout(settings)
    store = IndexStore(lay.index_dir / "lance")
    touched = sorted(set(plan.log_lines) | set(plan.edits) | set(plan.delete))
    embedded_before = store.text_shas(touched)
    changed = []
    for rel, numbers in sorted(plan.log_lines.items()):
        path = lay.root / rel
        lines = read_text(path).split("\n")
        for n in numbers:
            if 0 < n <= len(lines) and lines[n - 1].strip():
                lines[n - 1] = FORGOTTEN
        atomic_write_text(path, "\n".join(lines))
        changed.append(rel)
    for rel, edit in sorted(plan.edits.items()):
        if rel in plan.delete:
            continue
        lines = read_text(lay.root / rel).split("\n")
        out = "\n".join(line for line in (edit.get(n, line) for n, line in enumerate(lines, 1))
                        if line is not None)
        if rel.startswith(f"{lay.digest}/") and facts_of(out):  # its description is its first fact
            out = set_meta(out, description=facts_of(out)[0].text[:200])
        atomic_write_text(lay.root / rel, out)
        changed.append(rel)
    for rel in sorted(plan.delete):
        (lay.root / rel).unlink(missing_ok=True)
        changed.append(rel)
        day = date_of(rel)
        if day:
            refresh_day_index(lay, day)
    changed += _scrub_topics(lay, plan)
    changed += _empty_nodes(lay, plan)
    _scrub_state(lay, plan, [rel for rel in changed if not (lay.root / rel).exists()])
    tombstones.add(lay, sorted(plan.message_keys), plan.texts, sorted(plan.notes))
    run_index(settings)
    store.compact(keep_seconds=0)  # no old version keeps it
    drop_old_snapshots(settings)  # nor an earlier search snapshot generation
    EmbeddingCache(embedding_cache_dir(settings)).forget(embedded_before - store.text_shas())
    kept = sorted({rel for rel in changed if (lay.root / rel).exists()})
    removed = len(set(changed)) - len(kept)  # the event names no removed file: that is the point
    append_event(lay, "forget", kept or ["(forgotten)"],
                 f"forgot {sum(len(v) for v in plan.log_lines.values())} message(s); "
                 f"removed {removed} file(s), edited {len(kept)}")
    return changed

