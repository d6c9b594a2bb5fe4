"""`memflow dream migrate`: digest nodes of the earlier format -> fact lines, as one reversible
dream run (`memflow dream rollback RUN_ID` restores them).

The earlier consolidator wrote claim bullets, `> note: contradicted by [[L]] - was: OLD` lines
under corrected claims, and a `## Sources` section repeating each fact in full
(`- Derived from [[L]]: text`). Each claim becomes a dated fact line carrying the links of the
sources that state it; a contradicted value becomes its history line; a source whose text is no
claim (a corroboration in other words) gives its link to the claim it is closest to. Nothing is
dropped: a claim with no source keeps its text with the node's own date.
"""

from __future__ import annotations

import re
from datetime import date

from memflow.schemas.dream import ActionRecord, DreamSummary
from memflow.schemas.settings import Settings
from memflow.tasks.dream import digest
from memflow.tasks.dream.dream_runs import RunRecord
from memflow.tasks.dream.facts import similarity, subject_of
from memflow.tasks.dream.nodes import digest_files
from memflow.tasks.ground.events import append_event
from memflow.tasks.ground.guard import FileRefused, guarded
from memflow.tasks.ground.markdown import parse_links
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.workspace import date_of, layout
from memflow.tasks.index import run_index
from memflow.tasks.stores.files import atomic_write_text, read_text

_SOURCE_RE = re.compile(r"^- (?:Derived from|Corroborated by|Refined by|Corrected by) (\[\[[^\]]+\]\]): (.*)$")
_CONTRADICTED_RE = re.compile(r"^> note: contradicted by (\[\[[^\]]+\]\]) - was: (.*?)(?: \([^()]*\))?$")
_BULLET_RE = re.compile(r"^- (.+)$")


def _link(wiki: str) -> str:
    found = parse_links(wiki)
    if not found:
        raise ValueError(f"{wiki[:80]!r} is not a link the migration can read")
    link = found[0]
    return f"{link.target}#{link.anchor}" if link.anchor else link.target


def _day(links: list[str], fallback: str) -> str:
    days = [d for d in (date_of(link.split("#")[0]) for link in links) if d]
    return min(days).isoformat() if days else fallback


def convert(text: str, fallback_day: str) -> str:
    """One node of the earlier format -> the fact-line format (pure)."""
    note = parse_note("node", text)
    head, _, tail = note.body.partition("\n## Sources")
    sources = [(_link(m.group(1)), m.group(2).strip()) for line in tail.split("\n")
               if (m := _SOURCE_RE.match(line.strip()))]
    claims: list[dict] = []
    related: list[str] = []
    for line in head.split("\n"):
        if (m := _CONTRADICTED_RE.match(line.strip())) and claims:
            claims[-1]["was"].append((_link(m.group(1)), digest.plain(m.group(2))))
        elif m := _BULLET_RE.match(line):
            claims.append({"text": digest.plain(m.group(1)), "links": [], "was": []})
        elif line.startswith("Related:"):
            related += [l.target for l in parse_links(line)]
    texts = {c["text"]: c for c in claims}
    for link, said in sources:
        owner = texts.get(said)
        old = next(((c, w) for c in claims for w in c["was"] if w[1] == said), None)
        if owner is None and old is None and claims:
            owner = max(claims, key=lambda c: similarity(c["text"], said))
        if owner is not None and link not in owner["links"]:
            owner["links"].append(link)
        elif old is not None:
            old[0].setdefault("was_links", {}).setdefault(said, []).append(link)
    name = str(note.metadata.get("name") or "Untitled")
    facts, history = [], {}
    for claim in claims:
        day = _day(claim["links"], fallback_day)
        facts.append((day, claim["text"], claim["links"]))
        history[claim["text"]] = [(until_link, was, claim.get("was_links", {}).get(was, []))
                                  for until_link, was in claim["was"]]
    subject = subject_of(claims[0]["text"]).key if claims else f"name:{name.lower()}"
    extra = {k: v for k, v in note.metadata.items() if k not in ("name", "description")}
    out = digest.render_node(name, subject, facts, related, extra)
    for fact_text, entries in history.items():
        for until_link, was, was_links in reversed(entries):
            current = next(f for f in digest.facts_of(out) if f.text == fact_text)
            lines = out.split("\n")
            lines.insert(current.line + 1, digest.history_line(_day([until_link], fallback_day), was,
                                                               was_links))
            out = "\n".join(lines)
    return out


def _mtime_day(path) -> str:
    return date.fromtimestamp(path.stat().st_mtime).isoformat()


def migrate_nodes(settings: Settings) -> DreamSummary:
    """Every node of the earlier format under digest/, converted in one reversible run."""
    lay = layout(settings)
    skipped: dict[str, str] = {}
    legacy = []
    for rel in digest_files(lay, skipped):  # regular files only: no FIFO, folder or broken link
        try:
            text = guarded(rel, lambda: read_text(lay.root / rel, max_bytes=settings.note_max_bytes))
            if not digest.is_fact_node(text):
                legacy.append((rel, guarded(rel, lambda: convert(text, _mtime_day(lay.root / rel)))))
        except FileRefused as exc:
            skipped[rel] = str(exc)
    today = date.today().isoformat()
    if not legacy:
        return DreamSummary(date=today, status="no change", skipped=skipped)
    run = RunRecord(lay)
    summary = DreamSummary(run_id=run.run_id, date=today, units=len(legacy), skipped=skipped)
    for rel, new in legacy:
        path = lay.root / rel
        run.before_write(rel, new)
        atomic_write_text(path, new)
        record = ActionRecord(unit=rel, action="migrate", path=rel, created=False)
        run.after_write(rel, record)
        summary.files_written.append(rel)
    summary.actions = {"migrate": len(legacy)}
    run.finish("ok", {}, summary.model_dump())
    run_index(settings)
    append_event(lay, "dream_migrate", summary.files_written, f"migrate={len(legacy)}")
    return summary
