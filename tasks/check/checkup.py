"""`memflow check [--repair]` (plan, then apply): `find_problems` only reads and returns
findings, each with the repair that is safe for it; `repair` applies those repairs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from memflow.schemas.check import CheckReport, Finding
from memflow.schemas.settings import Settings
from memflow.tasks.backup import stale_staging
from memflow.tasks.dream import NO_MANIFEST, catalog_path, list_runs, rebuild_catalog, recover_interrupted
from memflow.tasks.forget import PLAN_FILE, finish_pending, without_links
from memflow.tasks.ground.anchors import StaleAnchor, read_raw, repair_anchors, stale_anchors
from memflow.tasks.ground.guard import FileRefused, guarded, parse_markdown
from memflow.tasks.ground.markdown import RELATED, parse_links
from memflow.tasks.ground.workspace import Layout, file_stats, layout, today
from memflow.tasks.index import (
    index_problems,
    keyword_dir,
    reindex_pending,
    run_index,
    run_reindex,
    watermark,
)
from memflow.tasks.stores.files import atomic_write_bytes, atomic_write_json, read_json

REPAIR_INDEX, REPAIR_REINDEX = "run index", "finish the interrupted reindex"
REPAIR_RECOVER, REPAIR_CATALOG = "roll the run back to its pre-images", "rebuild it from the digest's sources"
REPAIR_DROP, REPAIR_TEMP = "drop the entry", "remove it"
REPAIR_ANCHOR = "re-point it to the line that holds its text"
REPAIR_UNLINK, REPAIR_UNANCHOR = "remove the link (its text is gone)", "drop the anchor (the link names the note)"
REPAIR_STAGING = "remove the staging folder"
REPAIR_FORGET = "finish the killed forget's saved plan"
REPAIR_RELATED = "remove the link (the node is gone)"
_EXTERNAL = ("http://", "https://", "mailto:", "file:")


def _notes_and_links(lay: Layout, settings: Settings, report: CheckReport) -> None:
    problems: dict[str, str] = {}
    files = file_stats(lay, [lay.daily, lay.digest], problems=problems)
    report.checked["notes"] = len(files)
    for rel, why in sorted(problems.items()):
        report.findings.append(Finding(area="notes", path=rel, detail=why))
    links = 0
    stale, report.checked["anchors"] = all_stale_anchors(lay, sorted(files))
    for item in stale:
        report.findings.append(_anchor_finding(item))
    for rel in sorted(files):
        try:
            note = guarded(rel, lambda: parse_markdown(rel, (lay.root / rel).read_bytes(), settings))
        except FileRefused as exc:
            report.findings.append(Finding(area="notes", path=rel, detail=f"cannot be parsed: {exc}"))
            continue
        if note.warning:
            report.findings.append(Finding(area="notes", path=rel, detail=note.warning))
        lines = note.text.split("\n")
        for link in parse_links(note.text):
            links += 1
            target = link.target.strip()
            if not target or target.startswith(_EXTERNAL) or (lay.root / target).exists():
                continue
            related = 0 < link.line <= len(lines) and lines[link.line - 1].startswith(RELATED)
            report.findings.append(Finding(area="links", path=f"{rel}:{link.line}",
                                           detail=f"[[{target}]] does not resolve",
                                           repair=REPAIR_RELATED if related else ""))
    report.checked["links"] = links


def all_stale_anchors(lay: Layout, files: list[str]) -> tuple[list[StaleAnchor], int]:
    """(every line anchor of these notes that no longer points at its text, anchors looked at)."""
    found: list[StaleAnchor] = []
    checked, cache = 0, {}
    for rel in files:
        text = read_raw(lay.root / rel)
        if "#L" in text:
            checked += text.count("#L")
            found += stale_anchors(lay, rel, text, cache)
    return found, checked


def _anchor_finding(item: StaleAnchor) -> Finding:
    if item.fix:
        where, repair = f"; its text is at L{item.fix[0]} now", REPAIR_ANCHOR
    else:
        where = "; its text is gone" if item.quoted else ""
        repair = REPAIR_UNLINK if item.quoted else REPAIR_UNANCHOR
    return Finding(area="anchors", path=f"{item.path}:{item.line}", repair=repair,
                   detail=f"[[{item.link}]] points at {item.now}, not the text it cites{where}")


def _index(lay: Layout, settings: Settings, report: CheckReport) -> None:
    if reindex_pending(lay):
        report.findings.append(Finding(area="index", detail="a reindex was interrupted (search "
                                       "answers from the previous index)", repair=REPAIR_REINDEX))
    elif not (keyword_dir(lay, settings) / "CURRENT").exists():
        report.findings.append(Finding(area="index", detail="no search index", repair=REPAIR_INDEX))
    else:
        mark = watermark(lay, walk=True)
        if mark.get("stale"):
            report.findings.append(Finding(area="index", detail=f"{mark.get('changed_since')} file(s) "
                                           "changed since the last index run", repair=REPAIR_INDEX))
    found = index_problems(lay)
    report.checked["index"] = len(found["skipped"]) + len(found["warnings"])
    for rel, why in sorted(found["skipped"].items()):
        report.findings.append(Finding(area="index", path=rel, detail=f"not indexed: {why}"))


def _dream_and_state(lay: Layout, report: CheckReport) -> None:
    runs = list_runs(lay)
    report.checked["dream runs"] = len(runs)
    for run in runs:
        if run["status"] == "interrupted":
            report.findings.append(Finding(area="dream", path=run["run_id"], repair=REPAIR_RECOVER,
                                           detail="run was killed before it finished"))
        elif run["status"] == NO_MANIFEST:
            report.findings.append(Finding(
                area="dream", path=run["run_id"], repair=REPAIR_RECOVER,
                detail="run was killed before it wrote its manifest: it changed nothing (it had saved "
                       f"{len(run['files'])} pre-image(s) only); its folder is removed"))
    catalog = read_json(catalog_path(lay), None)
    if catalog is None:
        report.findings.append(Finding(area="state", path=catalog_path(lay).relative_to(lay.root).as_posix(),
                                       detail="the dream catalog is missing", repair=REPAIR_CATALOG))
    else:
        report.checked["catalog"] = len(catalog)
        for rel in sorted(catalog):
            if not (lay.root / rel).exists():
                report.findings.append(Finding(area="state", path=rel, repair=REPAIR_DROP,
                                               detail="dream catalog lists a note that is gone"))


def _forget_pending(lay: Layout, report: CheckReport) -> None:
    """A forget killed after it saved its plan: its files may be half changed until it is
    finished (what any `memflow forget` or this repair does first)."""
    if (lay.state_dir / PLAN_FILE).exists():
        report.findings.append(Finding(area="state", path=(lay.state_dir / PLAN_FILE).relative_to(lay.root).as_posix(),
                                       detail="a forget was killed before it finished its plan",
                                       repair=REPAIR_FORGET))


def _repair_related(lay: Layout, findings: list[Finding]) -> None:
    """`Related:` lines lose their links to nodes that are gone (a line with none left goes)."""
    by_file: dict[str, set[str]] = {}
    for f in findings:
        if f.repair == REPAIR_RELATED and f.path:
            by_file.setdefault(f.path.rsplit(":", 1)[0], set()).add(f.detail.split("]]")[0].removeprefix("[["))
    for rel, gone in sorted(by_file.items()):
        lines = read_raw(lay.root / rel).split("\n")
        new = [without_links(x, gone) if x.startswith(RELATED) else x for x in lines]
        atomic_write_bytes(lay.root / rel, "\n".join(x for x, old in zip(new, lines) if x or not old)
                           .encode("utf-8", errors="surrogateescape"))


def _leftovers(lay: Layout, report: CheckReport) -> None:
    """Temp files of atomic writes a killed process left (`.<name>.<random>.tmp`): no job reads
    them; under the workspace lock none is in use."""
    count = 0
    for folder, _dirs, names in os.walk(lay.root):
        for name in names:
            if name.startswith(".") and name.endswith(".tmp"):
                count += 1
                rel = os.path.relpath(os.path.join(folder, name), lay.root).replace(os.sep, "/")
                report.findings.append(Finding(area="state", path=rel, repair=REPAIR_TEMP,
                                               detail="temp file of an interrupted write"))
    report.checked["temp files"] = count


def _restore_leftovers(lay: Layout, report: CheckReport) -> None:
    """Staging folders beside the workspace of restores on this host that were killed."""
    found = stale_staging(lay.root.parent)
    report.checked["restore staging"] = len(found)
    for folder in found:
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
        report.findings.append(Finding(area="state", path=str(folder), repair=REPAIR_STAGING,
                                       detail=f"staging folder of a killed restore ({size / 1e6:.1f} MB)"))


def find_problems(settings: Settings) -> CheckReport:
    """Read-only: every finding with the repair that is safe for it."""
    lay = layout(settings)
    report = CheckReport()
    _notes_and_links(lay, settings, report)
    _index(lay, settings, report)
    _dream_and_state(lay, report)
    _forget_pending(lay, report)
    _leftovers(lay, report)
    _restore_leftovers(lay, report)
    return report


def repair(settings: Settings, report: CheckReport) -> CheckReport:
    """Apply the safe repairs of `report` (under the workspace lock), dream and state first
    (they change files the index then picks up)."""
    lay = layout(settings)
    todo = {f.repair for f in report.findings if f.repair}
    if REPAIR_FORGET in todo:  # first: it changes notes, links and state as one plan made them
        finish_pending(settings)
    if REPAIR_RELATED in todo:
        _repair_related(lay, report.findings)
        todo.add(REPAIR_INDEX)
    if REPAIR_RECOVER in todo:
        recover_interrupted(lay, catalog_path(lay))
    if REPAIR_CATALOG in todo:
        rebuild_catalog(lay, today(settings))
    if todo & {REPAIR_ANCHOR, REPAIR_UNLINK, REPAIR_UNANCHOR}:
        files = sorted(file_stats(lay, [lay.daily, lay.digest]))
        repair_anchors(lay, all_stale_anchors(lay, files)[0])
        todo.add(REPAIR_INDEX)
    if REPAIR_DROP in todo:
        catalog = read_json(catalog_path(lay), {})
        atomic_write_json(catalog_path(lay), {k: v for k, v in catalog.items() if (lay.root / k).exists()})
    for finding in report.findings:
        if finding.repair == REPAIR_TEMP:
            (lay.root / finding.path).unlink(missing_ok=True)
        if finding.repair == REPAIR_STAGING and Path(finding.path) in stale_staging(lay.root.parent):
            shutil.rmtree(finding.path)
    if REPAIR_REINDEX in todo:
        run_reindex(settings)
    elif todo & {REPAIR_INDEX, REPAIR_RECOVER}:
        run_index(settings)
    for finding in report.findings:
        finding.repaired = bool(finding.repair)
    return report


def check_workspace(settings: Settings, fix: bool = False) -> CheckReport:
    """Check a workspace; with `fix`, apply the safe repairs (the caller holds the lock)."""
    report = find_problems(settings)
    return repair(settings, report) if fix else report


__all__ = ["check_workspace", "find_problems", "repair"]
