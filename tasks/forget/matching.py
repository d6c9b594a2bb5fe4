"""`forget --match X`: where X is stated, and the file names that carry it.

A text carries X when `normalise(X)` occurs in its normalised form (`ground.tombstones.normalise`:
case, width and punctuation do not matter, so `Quokka Marmalade`, `quokka-marmalade.md` and
`QUOKKA_MARMALADE` all carry `quokka marmalade`; a part of a word matches too). Planned here
(pure over the files): the session-log messages and the lines of daily notes, digest nodes (the
ones a person wrote included) and text resources that carry X; then the renames (a file or folder
name that carries X loses it, and a captured daily note that lost lines is named again from what
is left, its file too when its name came from its old title) and the link rewrites they need.
"""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher
from pathlib import Path

from memflow.tasks.capture import message_text, read_log, retitle
from memflow.tasks.capture import anchor as render_anchor
from memflow.tasks.ground.markdown import RELATED, line_text, parse_anchor
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.sentences import cut
from memflow.tasks.ground.sentences import cut_message as cut_sentences_of
from memflow.tasks.ground.tombstones import normalise
from memflow.tasks.ground.workspace import BUCKETS, Layout, slugify
from memflow.tasks.stores.files import read_text

TEXT_SUFFIXES = (".md", ".txt", ".json", ".jsonl", ".csv", ".yaml", ".yml", ".html")
PROSE_SUFFIXES = (".md", ".txt")  # lines cut by sentence; other text files lose the whole line


def files(lay: Layout, folder: str, suffixes: tuple[str, ...] | None = (".md",)) -> list[str]:
    """Regular files under `folder` (workspace-relative), with one of `suffixes` (None: any)."""
    base = lay.root / folder
    if not base.is_dir():
        return []
    return sorted(p.relative_to(lay.root).as_posix() for p in base.rglob("*")
                  if p.is_file() and not p.is_symlink()
                  and (suffixes is None or p.suffix.lower() in suffixes))


def phrase_of(match: str) -> str:
    phrase = normalise(match)
    if not phrase:
        raise ValueError(f"forget --match {match!r}: the text has no letter or digit to match; "
                         "give the words to forget")
    return phrase


def carries(text: str, phrase: str) -> bool:
    return bool(phrase) and phrase in normalise(text)


_LINK = re.compile(r"\[\[([^\]|#]+)(#[^\]|]*)?(?:\|([^\]]*))?\]\]")


def _unlinked(lay: Layout, line: str) -> str:
    """A line without the targets of its links to existing files (a target that carries the
    phrase is renamed, and the link rewritten: that alone does not make the line go)."""
    return _LINK.sub(lambda m: m.group(3) or "" if (lay.root / m.group(1)).is_file() else m.group(0), line)


def plan_lines(lay: Layout, phrase: str) -> tuple[dict[str, set[int]], dict[str, dict[int, str]],
                                                  dict[str, dict[int, str | None]], dict[str, dict[int, list[str]]]]:
    """Where the phrase is stated: (session log -> messages to forget whole, session log ->
    line -> the message without the sentences that state it (JSON), file -> line -> the line
    without those sentences or None, file -> line -> the sentences cut from it). A sentence goes, not its
    neighbours: a message or line goes whole only when nothing else is left of it."""
    logs: dict[str, set[int]] = {}
    cuts: dict[str, dict[int, str]] = {}
    gone: dict[str, dict[int, list[str]]] = {}
    for rel in files(lay, f"{lay.session}/dialog", (".jsonl",)):
        log = read_log(lay, rel.rsplit("/", 1)[-1].removesuffix(".jsonl"))
        for n, message in enumerate(log, 1):
            if not carries(message_text(message), phrase):
                continue
            kept, said = cut_message(message, phrase)
            if kept is None:
                logs.setdefault(rel, set()).add(n)
            else:
                cuts.setdefault(rel, {})[n] = json.dumps(kept, ensure_ascii=False, default=str)
                gone.setdefault(rel, {})[n] = said
    edits: dict[str, dict[int, str | None]] = {}
    for rel in files(lay, lay.daily) + files(lay, lay.digest) + files(lay, lay.resource, TEXT_SUFFIXES):
        prose = rel.endswith(PROSE_SUFFIXES)
        for number, line in enumerate(read_text(lay.root / rel).split("\n"), 1):
            if carries(line, phrase) and carries(_unlinked(lay, line), phrase):
                new, said = cut_line(lay, line, phrase) if prose else (None, [])
                edits.setdefault(rel, {})[number] = new
                if new is not None:
                    gone.setdefault(rel, {})[number] = said
    return logs, cuts, edits, gone


def cut_message(message: dict, phrase: str) -> tuple[dict | None, list[str]]:
    """(A logged message without the sentences that state the phrase, or None when nothing
    else is left; the sentences removed)."""
    out, said = cut_sentences_of(message, lambda text: cut(text, lambda s: carries(s, phrase)))
    if out is None or carries(message_text(out), phrase):
        return None, [message_text(message)]
    return out, said


# what a line opens with and ends with that is no sentence: a bullet, a heading's #, a fact's
# `DATE: `, a `key: ` (frontmatter, `Related: `); its trailing links
_HEAD_RE = re.compile(r"\s*(?:[-*+>]\s+|\d+[.)]\s+|#{1,6}\s+)?(?:(?:until )?\d{4}-\d{2}-\d{2}: )?"
                      r"(?:[A-Za-z_][\w-]*: )?")
_TAIL_RE = re.compile(r"(\s*\[\[[^\]]+\]\])+\s*$")


def cut_line(lay: Layout, line: str, phrase: str) -> tuple[str | None, list[str]]:
    """(A line without the sentences that state the phrase, or None when nothing is left of
    it; what goes)."""
    head = _HEAD_RE.match(line).group(0)
    tail_match = _TAIL_RE.search(line, len(head)) if line.rstrip().endswith("]]") else None
    tail = tail_match.group(0) if tail_match else ""
    body = line[len(head):len(line) - len(tail)]
    kept, said = cut(body, lambda text: carries(_unlinked(lay, text), phrase))
    new = f"{head}{kept}{tail}"
    if not normalise(kept) or not said or carries(_unlinked(lay, new), phrase):
        return None, [line.strip()]
    return new, said


def edited_text(text: str, edit: dict[int, str | None]) -> str:
    """`text` with its 1-based lines replaced (a str) or removed (None)."""
    lines = text.split("\n")
    return "\n".join(line for line in (edit.get(n, line) for n, line in enumerate(lines, 1))
                     if line is not None)


def is_captured(lay: Layout, rel: str, text: str) -> bool:
    """A daily note capture wrote (it names its session): capture may rename and retitle it."""
    return rel.startswith(f"{lay.daily}/") and bool(parse_note(rel, text).metadata.get("session_id"))


def _cut(name: str, phrase: str) -> str:
    """A file or folder name without the phrase: `my-quokka-marmalade-jar.md` -> `my-jar.md`.
    Dates and digest buckets keep their names (the layout depends on them)."""
    stem, dot, suffix = name.rpartition(".") if name.rfind(".") > 0 else (name, "", "")
    if stem in BUCKETS or re.fullmatch(r"\d{4}-\d{2}-\d{2}", stem) or phrase not in normalise(stem):
        return name
    rest = normalise(stem).replace(phrase, " ").strip()
    return f"{slugify(rest) if rest else 'forgotten'}{dot}{suffix}"


def _retitled_name(lay: Layout, rel: str, text: str, phrase: str) -> str | None:
    """The new file name of a captured note that lost lines: when its name was its old title
    (`slugify(title)`, maybe with `-N`) or carries the phrase."""
    old_name, new_text = retitle(text)
    stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
    own = re.sub(r"-\d+$", "", stem) == slugify(old_name) or (phrase and phrase in normalise(stem))
    new_name = parse_note(rel, new_text).name
    return f"{slugify(new_name)}.md" if own and slugify(new_name) != stem else None


def plan_renames(lay: Layout, phrase: str, edits: dict[str, dict[int, str | None]],
                 delete: set[str], lost: set[str]) -> dict[str, str]:
    """Old path -> new path of every file whose path (below its layer folder) carries the
    phrase, and of every captured daily note that lost text (`lost`) and was named by its old
    title."""
    renames: dict[str, str] = {}
    for layer in (lay.daily, lay.digest, lay.resource):
        for rel in files(lay, layer, None):
            if rel in delete:
                continue
            top, *parts = rel.split("/")
            new_parts = [_cut(part, phrase) if phrase else part for part in parts]
            edit = edits.get(rel)
            if rel.endswith(".md") and edit and rel in lost:
                text = read_text(lay.root / rel)
                if is_captured(lay, rel, text):
                    new_parts[-1] = _retitled_name(lay, rel, edited_text(text, edit), phrase) or new_parts[-1]
            if new_parts != parts:
                renames[rel] = "/".join([top, *new_parts])
    return _unique(lay, renames)


def _unique(lay: Layout, renames: dict[str, str]) -> dict[str, str]:
    """Targets that collide with a file that stays, or with each other, get `-2`, `-3`..."""
    # every existing name is taken, a renamed file's old name too: a plan carried out again
    # after a kill must never write a new file where an old one still is
    taken = {rel for layer in (lay.daily, lay.digest, lay.resource) for rel in files(lay, layer, None)}
    out = {}
    for old, new in sorted(renames.items()):
        stem, dot, suffix = new.rpartition(".") if "." in new.rsplit("/", 1)[-1] else (new, "", "")
        candidate, n = new, 1
        while candidate in taken:
            n += 1
            candidate = f"{stem}-{n}{dot}{suffix}"
        taken.add(candidate)
        out[old] = candidate
    return out


def line_map(before: str, after: str) -> dict[int, int]:
    """1-based line of `before` -> its line in `after` (kept or rewritten in place), for the
    anchors of links into a file whose lines a forget removed."""
    old, new = before.split("\n"), after.split("\n")
    mapping: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            mapping.update({i + 1: j1 + (i - i1) + 1 for i in range(i1, i2)})
    return mapping


def _relinked(line: str, renames: dict[str, str], maps: dict[str, dict[int, int]]) -> str:
    def fix(m: re.Match) -> str:
        target, anchor, label = m.group(1).strip(), m.group(2) or "", m.group(3)
        if target not in renames and target not in maps:
            return m.group(0)
        cited = [n for a, b in parse_anchor(anchor[1:]) for n in range(a, b + 1)] if anchor else []
        moved = [maps[target][n] for n in cited if n in maps.get(target, {})]
        if moved:
            anchor = f"#{render_anchor(moved)}"
        return f"[[{renames.get(target, target)}{anchor}{'|' + label if label is not None else ''}]]"

    return _LINK.sub(fix, line)


def plan_links(lay: Layout, renames: dict[str, str], maps: dict[str, dict[int, int]],
               edits: dict[str, dict[int, str | None]], delete: set[str]) -> None:
    """Every link to a renamed file points at its new path, and every `#L..` anchor into a file
    that lost lines at the lines' new numbers (added to `edits`)."""
    moved = {**renames, **{rel: rel for rel in maps}}

    def relink(current: str, line: str) -> object:
        new = _relinked(current, renames, maps)
        return new if new != line else _KEEP

    _edit_linking_lines(lay, (lay.daily, lay.digest, lay.resource), set(moved), delete, edits, relink)


_KEEP = object()  # `_edit_linking_lines`: the line stays as it is


def _edit_linking_lines(lay: Layout, folders: tuple[str, ...], targets: set[str], delete: set[str],
                        edits: dict[str, dict[int, str | None]], rewrite) -> None:
    """Each line (as `edits` already has it) of the notes under `folders` that links one of
    `targets`, not in a file to delete, rewritten by `rewrite(current, original)`: the new line,
    None to drop it, or `_KEEP` (added to `edits`)."""
    if not targets:
        return
    for rel in [rel for folder in folders for rel in files(lay, folder)]:
        if rel in delete:
            continue
        text = read_text(lay.root / rel)
        if not any(f"[[{target}" in text for target in targets):
            continue
        edit = edits.get(rel, {})
        for number, line in enumerate(text.split("\n"), 1):
            current = edit.get(number, line)
            if current is not None and "[[" in current:
                new = rewrite(current, line)
                if new is not _KEEP:
                    edit[number] = new
        if edit:
            edits[rel] = edit


def without_links(line: str, gone: set[str]) -> str:
    """A line without its links to removed files: a `Related:` line loses the link and its
    comma, another line keeps a link's label (or loses the link)."""
    def drop(m: re.Match) -> str:
        if m.group(1).strip() not in gone:
            return m.group(0)
        return "" if line.startswith(RELATED) else (m.group(3) or "")

    out = _LINK.sub(drop, line)
    if line.startswith(RELATED):
        rest = [x.strip() for x in out[len(RELATED):].split(",") if x.strip()]
        return RELATED + ", ".join(rest) if rest else ""
    return re.sub(r" {2,}", " ", out).rstrip()


def plan_unlinks(lay: Layout, delete: set[str], edits: dict[str, dict[int, str | None]]) -> None:
    """No link is left pointing at a removed file: every note's line that links one (a digest
    node's `Related:` line included) loses that link (added to `edits`); a line with nothing
    left goes."""
    def unlink(current: str, _line: str) -> object:
        new = without_links(current, delete)
        if new == current:
            return _KEEP
        return new if line_text(new) or new.startswith(RELATED) and new != RELATED else None

    _edit_linking_lines(lay, (lay.daily, lay.digest), delete, delete, edits, unlink)


def remove_empty_dirs(root: Path, rels: list[str]) -> None:
    """Folders a rename left empty go (a folder's name may carry the forgotten text)."""
    for rel in sorted(rels, key=lambda r: -r.count("/")):
        folder = (root / rel).parent
        while folder != root and folder.parent != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
