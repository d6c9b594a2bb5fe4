"""`memflow forget`: plan what goes, save the plan (`journal`), then carry it out.

With `--match`, the sentences that state the text go, not their message or line: a session-log
message keeps its other sentences at its line, a line of a daily note, digest node (one a person
wrote included) or prose resource keeps its other sentences and links (a structured resource
loses the line). A message or line with nothing else left goes whole: a forgotten message is
replaced in place by `{"forgotten": true}` (line numbers, and so every provenance link to other
lines, stay valid); a forgotten daily note is deleted; a digest fact whose every source is
forgotten goes, and when it was the current value of a fact with history, the newest history
line becomes current again; a digest node left without facts, or a captured daily note without
items, goes. A captured daily note that lost text is named again from what is left (`capture.retitle`); files whose names
carry a `--match` text, or were named by such a title, are renamed and links to them rewritten
(`matching`). State files lose what quotes it (`scrub`); the index is rebuilt for the changed
files, LanceDB keeps no old version, the keyword snapshot no old generation, the embedding cache
no vector of a text that is gone. Tombstones (salted hashes, `ground.tombstones`) keep later
captures from bringing any of it back. Links to a removed file go (`Related:` lines included).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from memflow.schemas.settings import Settings
from memflow.tasks.capture import (
    log_path,
    message_key,
    message_text,
    read_log,
    retitle,
)
from memflow.tasks.dream import fact_line, facts_of, set_meta
from memflow.tasks.forget.journal import Journal, finish, sha
from memflow.tasks.forget.journal import save as save_journal
from memflow.tasks.forget.matching import (
    carries,
    cut_line,
    edited_text,
    files,
    is_captured,
    line_map,
    phrase_of,
    plan_lines,
    plan_links,
    plan_renames,
    plan_unlinks,
)
from memflow.tasks.forget.scrub import Forgotten, scrub_plan
from memflow.tasks.ground import tombstones
from memflow.tasks.ground.markdown import parse_anchor, parse_links
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.workspace import Layout, date_of, layout, safe_path
from memflow.tasks.index import open_store
from memflow.tasks.stores.files import read_text

FORGOTTEN = json.dumps({"forgotten": True})
DAY_INDEX_RE = re.compile(r"\d{4}-\d{2}-\d{2}(?:\.md|/index\.md)")  # capture.day_index_path


@dataclass
class ForgetPlan:
    log_lines: dict[str, set[int]] = field(default_factory=dict)   # session log -> lines
    log_cuts: dict[str, dict[int, str]] = field(default_factory=dict)  # log -> line -> message cut (JSON)
    cut_said: dict[str, dict[int, list[str]]] = field(default_factory=dict)  # file -> line -> sentences cut
    message_keys: set[str] = field(default_factory=set)
    delete: set[str] = field(default_factory=set)                  # files removed whole
    edits: dict[str, dict[int, str | None]] = field(default_factory=dict)  # file -> line -> new or None
    renames: dict[str, str] = field(default_factory=dict)          # old path -> new path
    phrase: str = ""                                               # `--match`, normalised
    notes: set[tuple[str, str]] = field(default_factory=set)       # (session, date) tombstones
    said: list[str] = field(default_factory=list)                  # texts of forgotten messages
    state: list[str] = field(default_factory=list)                 # state files rewritten
    days: list[str] = field(default_factory=list)                  # day indexes refreshed
    state_texts: dict[str, str] = field(default_factory=dict)      # state file -> new text
    state_unlink: list[str] = field(default_factory=list)          # dream pre-images deleted
    texts: dict[str, list[str]] = field(default_factory=dict)      # file -> the texts that go

    def empty(self) -> bool:
        return not (self.log_lines or self.log_cuts or self.delete or self.edits or self.renames)

    def lost(self) -> set[str]:
        """Files that lose text (lines or sentences), not only links."""
        return {rel for rel, edit in self.edits.items() if None in edit.values()} | \
            {rel for rel in self.cut_said if rel in self.edits}

    def forgotten(self) -> Forgotten:
        return Forgotten(self.phrase, self.said, set(self.delete), dict(self.renames))

    def lines(self, texts: bool = False) -> list[str]:
        """What would change, one line each; with `texts`, each file's line is followed by the
        exact sentences and lines that go from it (indented, one per line)."""
        out = []
        for p in sorted(set(self.log_lines) | set(self.log_cuts)):
            whole, cut = len(self.log_lines.get(p, ())), len(self.log_cuts.get(p, {}))
            out.append(f"forget {whole} message(s)" + (f", cut sentences from {cut}" if cut else "")
                       + f" in {p}")
            out += self._texts(p, texts)
        for p in sorted(self.delete):
            out.append(f"delete {p}")
            out += self._texts(p, texts)
        for path, edit in sorted(self.edits.items()):
            if path in self.delete:
                continue
            dropped = sum(1 for v in edit.values() if v is None)
            cut = sum(1 for n in self.cut_said.get(path, {}) if edit.get(n) is not None)
            changed = len(edit) - dropped - cut
            out.append(f"edit {path}: remove {dropped} line(s)" + (f", cut sentences from {cut}" if cut else "")
                       + (f", rewrite {changed}" if changed else ""))
            out += self._texts(path, texts)
        out += [f"rename {old} -> {new}" for old, new in sorted(self.renames.items())]
        out += [f"rewrite {p}" for p in self.state]
        out += [f"refresh the day index of {day}" for day in self.days]
        out.append("rebuild the index of the changed files (no old LanceDB version or keyword "
                   "generation kept; their vectors leave the embedding cache)")
        return out

    def _texts(self, path: str, show: bool) -> list[str]:
        return [f"    - {' / '.join(t.split(chr(10)))}" for t in self.texts.get(path, [])] if show else []


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
        logs, plan.log_cuts, edits, plan.cut_said = plan_lines(lay, plan.phrase)
        for rel, lines in logs.items():
            plan.log_lines.setdefault(rel, set()).update(lines)
        plan.edits.update(edits)
    for rel in sorted(set(plan.log_lines) | set(plan.log_cuts)):
        session_id = rel.rsplit("/", 1)[-1].removesuffix(".jsonl")
        log = read_log(lay, session_id)
        live = [n for n in sorted(plan.log_lines.get(rel, ())) if 0 < n <= len(log) and not log[n - 1].get("forgotten")]
        plan.message_keys |= {message_key(log[n - 1]) for n in [*live, *plan.log_cuts.get(rel, {})]}
        plan.said += [message_text(log[n - 1]) for n in live]
        plan.said += [s for n in sorted(plan.log_cuts.get(rel, {})) for s in plan.cut_said[rel][n]]
        plan.texts[rel] = [message_text(log[n - 1]) if n in live else " ".join(plan.cut_said[rel][n])
                           for n in sorted({*live, *plan.log_cuts.get(rel, {})})]
    for rel in plan.delete:
        meta = parse_note(rel, read_text(lay.root / rel)).metadata
        day = date_of(rel)
        if meta.get("session_id") and day:
            plan.notes.add((str(meta["session_id"]), day.isoformat()))
    _plan_daily_lines(lay, plan)
    _plan_emptied(lay, plan)
    _plan_digest(lay, plan)
    _plan_emptied(lay, plan)
    plan_unlinks(lay, plan.delete, plan.edits)
    plan.said += [s for rel, cuts in plan.cut_said.items() if rel not in plan.log_cuts
                  for said in cuts.values() for s in said]
    _plan_texts(lay, plan)
    plan.renames = plan_renames(lay, plan.phrase, plan.edits, plan.delete, plan.lost())
    maps = {rel: line_map(read_text(lay.root / rel), _final_text(lay, rel, edit, rel in plan.lost()))
            for rel, edit in plan.edits.items() if rel not in plan.delete and rel in plan.lost()}
    plan_links(lay, plan.renames, maps, plan.edits, plan.delete)
    plan.state_texts, plan.state_unlink = scrub_plan(lay, plan.forgotten())
    plan.state = sorted(plan.state_texts)
    plan.days = sorted({d.isoformat() for rel in [*plan.edits, *plan.delete, *plan.renames]
                        if rel.startswith(f"{lay.daily}/") and (d := date_of(rel))})
    return plan


def _plan_texts(lay: Layout, plan: ForgetPlan) -> None:
    """The exact texts that go, per note or resource: lines removed whole, sentences cut from
    lines, and the lines of a file deleted whole (its frontmatter and markers aside). A day
    index shows none: it lists its notes, and is written again from them."""
    for rel in sorted(plan.delete):
        body = parse_note(rel, read_text(lay.root / rel)).body
        plan.texts[rel] = [x.strip() for x in body.split("\n") if x.strip() and not x.lstrip().startswith("<!--")]
    for rel, edit in sorted(plan.edits.items()):
        if rel in plan.delete or DAY_INDEX_RE.fullmatch(rel.removeprefix(f"{lay.daily}/")):
            continue  # a day index lists its notes: it is written again from them
        lines = read_text(lay.root / rel).split("\n")
        cuts = plan.cut_said.get(rel, {})
        plan.texts[rel] = [t for n in sorted(edit) for t in
                           ([lines[n - 1].strip()] if edit[n] is None else cuts.get(n, []))]


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
                current = edit.get(line.line + 1, lines[line.line])  # a sentence may be cut already
                if len(kept) < len(line.links) and current is not None:
                    edit[line.line + 1] = _relink(current, line.links, kept) if kept else None
            if fact.line + 1 in edit and edit[fact.line + 1] is None:
                survivor = next((h for h in fact.history if edit.get(h.line + 1, "") is not None), None)
                if survivor is not None:  # the newest older value is current again
                    day = date_of(survivor.links[0].split("#")[0]) if survivor.links else None
                    current = fact_line(day.isoformat() if day else survivor.date, survivor.text, survivor.links)
                    if plan.phrase and carries(current, plan.phrase):  # what was cut from it stays cut
                        current = cut_line(lay, current, plan.phrase)[0]
                    edit[survivor.line + 1] = current
        if edit:
            plan.edits[rel] = edit


def _relink(line: str, links: list[str], kept: list[str]) -> str:
    for link in links:
        if link not in kept:
            line = line.replace(f" [[{link}]]", "")
    return line


def _log_texts(lay: Layout, plan: ForgetPlan, journal: Journal) -> None:
    """Each session log as the plan leaves it: forgotten messages blanked in place (line
    numbers, and so every link to other lines, stay valid), cut ones rewritten; a session with
    nothing left loses its capture watermark."""
    for rel in sorted(set(plan.log_lines) | set(plan.log_cuts)):
        lines = read_text(lay.root / rel).split("\n")
        for n, message in plan.log_cuts.get(rel, {}).items():
            if 0 < n <= len(lines):
                lines[n - 1] = message
        for n in plan.log_lines.get(rel, ()):
            if 0 < n <= len(lines) and lines[n - 1].strip():
                lines[n - 1] = FORGOTTEN
        _write(lay, journal, rel, "\n".join(lines))
        if all(json.loads(line).get("forgotten") for line in lines if line.strip()):
            session_id = rel.rsplit("/", 1)[-1].removesuffix(".jsonl")
            watermark = f"{lay.state_dir.relative_to(lay.root).as_posix()}/capture/{session_id}.json"
            if (lay.root / watermark).exists():
                _delete(lay, journal, watermark)


def _final_text(lay: Layout, rel: str, edit: dict[int, str | None], lost: bool) -> str:
    """A file as a plan leaves it: lines removed or rewritten, a digest node described by its
    first fact, a captured daily note that lost lines named again."""
    before = read_text(lay.root / rel)
    out = edited_text(before, edit)
    if rel.startswith(f"{lay.digest}/") and facts_of(out) and facts_of(before):
        out = set_meta(out, description=facts_of(out)[0].text[:200])
    if lost and is_captured(lay, rel, before):
        out = retitle(out)[1]
    return out


def _write(lay: Layout, journal: Journal, rel: str, text: str, source: str | None = None) -> None:
    journal.writes[rel] = text
    journal.sources[rel] = source or rel
    journal.before[source or rel] = sha(lay, source or rel)


def _delete(lay: Layout, journal: Journal, rel: str) -> None:
    journal.delete.append(rel)
    journal.before[rel] = sha(lay, rel)


def journal_of(lay: Layout, plan: ForgetPlan, embedded: set[str]) -> Journal:
    """What every file will be once the plan is carried out; holds no forgotten text (only the
    paths it changes, which may carry a `--match` text until they are renamed)."""
    journal = Journal(days=plan.days, embedded=sorted(embedded))
    for rel, text in sorted(plan.state_texts.items()):
        _write(lay, journal, rel, text)
    for rel in plan.state_unlink:
        _delete(lay, journal, rel)
    _log_texts(lay, plan, journal)
    for rel, edit in sorted(plan.edits.items()):
        if rel not in plan.delete:
            _write(lay, journal, plan.renames.get(rel, rel), _final_text(lay, rel, edit, rel in plan.lost()), rel)
            if rel in plan.renames:
                _delete(lay, journal, rel)
    journal.moves = {old: new for old, new in plan.renames.items() if old not in plan.edits}
    for rel in sorted(plan.delete):
        _delete(lay, journal, rel)
    journal.summary = (f"forgot {sum(len(v) for v in plan.log_lines.values())} message(s), cut "
                       f"sentences from {sum(len(v) for v in plan.log_cuts.values())}; removed "
                       f"{len(plan.delete)} file(s), renamed {len(plan.renames)}")
    return journal


def apply_forget(settings: Settings, plan: ForgetPlan) -> list[str]:
    """Carry out a plan; returns the files changed. The caller holds the workspace lock and has
    finished any plan a killed forget left (`finish_pending`)."""
    lay = layout(settings)
    store = open_store(lay, settings)  # level with the snapshot: a write's rows may be in its delta only
    # Every indexed text before: what has left the index afterwards leaves the embedding cache.
    journal = journal_of(lay, plan, store.text_shas())
    # Tombstones first (salted hashes only): a forget killed before its plan is saved is planned
    # again from the files, which still hold the text.
    tombstones.add(lay, sorted(plan.message_keys), plan.said, [plan.phrase] if plan.phrase else [],
                   sorted(plan.notes))
    save_journal(lay, journal)  # the commit point: from here a re-run finishes this plan
    done, changed = finish(settings, lay, journal)
    if changed:  # under the lock nothing else writes: say it rather than hide it
        raise RuntimeError(f"forget: {', '.join(changed)} changed while the forget ran and were "
                           "left as they are; run the forget again")
    return done
