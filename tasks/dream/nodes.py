"""Stage 3, dream: the digest nodes on disk, read under the same per-file guard as the index.

The digest folder is the truth the dream consolidates into, and anyone may put a file there: a
FIFO, a folder named `x.md`, a broken link or a link loop, a node whose frontmatter does not
parse. Only regular files are read (`file_stats`, `read_text`: non-blocking, fstat first); a
node that cannot be read is left out of every lookup and reported once per run by
`skipped_files`, with its reason, in the run summary and the inbox.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

from memflow.schemas.dream import Unit
from memflow.tasks.dream import digest
from memflow.tasks.dream.consolidation import speaker
from memflow.tasks.ground.guard import FileRefused, guarded
from memflow.tasks.ground.markdown import line_text
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.workspace import Layout, file_stats
from memflow.tasks.stores.files import read_text

log = logging.getLogger("memflow.dream")
NodeInfo = tuple[str | None, frozenset[str]]
# node -> (stat, subject, cites, quotes: (cited note, the cited text as a fact line quotes it))
_NODES: dict[Path, tuple[tuple[int, int], str | None, frozenset[str], frozenset[tuple[str, str]]]] = {}


def digest_files(lay: Layout, problems: dict[str, str] | None = None) -> list[str]:
    """Regular `.md` files under digest/ (workspace-relative, sorted); what is no regular file
    goes to `problems` with its reason."""
    return sorted(file_stats(lay, [lay.digest], problems=problems))


def node_info(path: Path) -> NodeInfo:
    """A node's subject key (None for another format) and the `target#anchor` links its fact
    lines cite, read again only when the file changed: every unit of a run looks both up."""
    return _node_entry(path)[1:3]


def _node_entry(path: Path):
    stat = path.stat()
    mark = (stat.st_mtime_ns, stat.st_size)
    cached = _NODES.get(path)
    if cached is None or cached[0] != mark:
        text = read_text(path)
        meta = parse_note(path.name, text).metadata
        subject = meta.get("subject") if meta.get("format") == digest.FORMAT else None
        quotes = frozenset((link.split("#")[0], _quote(line.text)) for fact in digest.facts_of(text)
                           for line in [fact, *fact.history] for link in line.links)
        cached = _NODES[path] = (mark, subject if isinstance(subject, str) else None,
                                 frozenset(digest.cited(text)), quotes)
    return cached


def _quote(text: str) -> str:
    return line_text(f"- {text}").casefold()


def consolidated_before(lay: Layout, unit: Unit, links: list[str]) -> bool:
    """Was the unit consolidated before (a re-run after a lost catalog or a recovered kill)?
    Its links are all cited already (not for a split line: its statements share one link), or
    every fact of it is a digest line's text already, citing the same note, even when a person's
    edit moved the line and no `check --repair` re-pointed its link yet (a re-run would put an
    old value above a newer one). One walk of the digest for both."""
    if not links:
        return False
    cites: set[str] = set()
    quotes: set[tuple[str, str]] = set()
    for rel in digest_files(lay):
        try:
            _, _, node_cites, node_quotes = guarded(rel, lambda: _node_entry(lay.root / rel))
        except FileRefused:
            continue  # named by `skipped_files`
        cites |= node_cites
        quotes |= node_quotes
    if not unit.split and set(links) <= cites:
        return True
    return bool(unit.evidence) and all(
        (f.path, _quote(f.text)) in quotes or (f.path, _quote(speaker(f.text)[1])) in quotes
        for f in unit.evidence)


def edited_fact(lay: Layout, unit: Unit, links: list[str]) -> tuple[str, digest.FactLine] | None:
    """The current digest fact citing the unit's line when a person edited that line since
    (path, fact), else None: one fact cites exactly the unit's links, no fact quotes the line's
    words as they are now, and the fact is about the same thing said otherwise (most of its
    words are the line's: "in the red folder" for "in the blue folder"). A line rewritten into
    something else is not followed here (`check` reports its anchor), nor a line holding several
    statements."""
    if unit.split or not links or not unit.evidence:
        return None
    now = _quote(speaker(unit.evidence[0].text)[1])
    citing = []
    for rel in digest_files(lay):
        try:
            _, _, node_cites, _ = guarded(rel, lambda: _node_entry(lay.root / rel))  # read when it changed
            text = read_text(lay.root / rel) if set(links) & node_cites else ""
        except (FileRefused, OSError):
            continue  # named by `skipped_files`
        for fact in digest.facts_of(text) if text else ():
            if set(links) & set(fact.links):
                if _quote(fact.text) == now or any(_quote(h.text) == now for h in fact.history):
                    return None  # said as it is now: consolidated
                citing.append((rel, fact))
    if len(citing) != 1 or set(citing[0][1].links) != set(links):
        return None
    rel, fact = citing[0]
    old, new = set(_quote(fact.text).split()), set(now.split())
    return (rel, fact) if len(old & new) >= max(2, 0.6 * max(len(old), len(new))) else None


SIBLINGS = 8  # at most this many related nodes of a thing's new node


def sibling_nodes(lay: Layout, subject: str, subjects: dict[str, list[str]] | None = None) -> list[str]:
    """Nodes about the same person as `subject` (`person:<who>`), or about the same thing
    (`topic:`/`group:`: one node's name is the other's with words around it, "snabror" and
    "snabror container", "beshios" and "memory of beshios"; the nearest `SIBLINGS`): a new
    node links to them, so following links from one finds the others. `subjects`:
    `subject_nodes`, when the caller has it."""
    subjects = subject_nodes(lay) if subjects is None else subjects
    parts = subject.split(":")
    if len(parts) >= 2 and parts[0] == "person":  # `person:<who>`, or a facet node of earlier versions
        return sorted(p for key, paths in subjects.items() if key.split(":")[:2] == parts[:2] and key != subject
                      for p in paths[:1])
    if len(parts) != 2 or parts[0] not in ("topic", "group") or not parts[1]:
        return []
    words = parts[1].split("-")
    found = []
    for key, paths in subjects.items():
        kind, _, name = key.partition(":")
        if kind in ("topic", "group") and name and key != subject and paths:
            other = name.split("-")
            if _within(words, other) or _within(other, words):
                found.append((abs(len(other) - len(words)), paths[0]))
    return sorted(path for _gap, path in sorted(found)[:SIBLINGS])


def _within(longer: list[str], shorter: list[str]) -> bool:
    """Is `shorter` a run of words of `longer` (and shorter than it)?"""
    n = len(shorter)
    return 0 < n < len(longer) and any(longer[i:i + n] == shorter for i in range(len(longer) - n + 1))


def readable_nodes(lay: Layout) -> Iterator[tuple[str, NodeInfo]]:
    """(path, info) of every digest node that can be read; the others are left out here and
    named by `skipped_files`."""
    for rel in digest_files(lay):
        try:
            yield rel, guarded(rel, lambda: node_info(lay.root / rel))
        except FileRefused as exc:
            log.debug("digest node %s left out: %s", rel, exc)


def subject_nodes(lay: Layout) -> dict[str, list[str]]:
    """Subject key -> its node and continuation parts (digest files are the truth: no index)."""
    found: dict[str, list[str]] = {}
    for rel, (subject, _cites) in readable_nodes(lay):
        if subject:  # a name found outside the subject was keyed `thing:` before: the same name
            key = f"topic:{subject[6:]}" if subject.startswith("thing:") else subject
            found.setdefault(key, []).append(rel)
    for paths in found.values():
        paths.sort(key=lambda rel: (len(rel), rel))  # the first part, then `-2`, `-3` ...
    return found


def digest_citations(lay: Layout) -> set[str]:
    """Every `daily/...#Lnn` link a digest fact line cites: what has been consolidated, by
    source, whatever the catalog says."""
    return set().union(*(cites for _rel, (_subject, cites) in readable_nodes(lay)))


def skipped_files(lay: Layout) -> dict[str, str]:
    """Files under daily/ and digest/ the dream leaves out, each with its one-line reason."""
    problems: dict[str, str] = {}
    file_stats(lay, [lay.daily], problems=problems)
    for rel in digest_files(lay, problems):
        try:
            guarded(rel, lambda: node_info(lay.root / rel))
        except FileRefused as exc:
            problems[rel] = str(exc)
    return problems
