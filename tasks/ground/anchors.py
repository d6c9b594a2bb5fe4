"""Line anchors that keep pointing at their text (`[[daily/2026-03-09/move.md#L12]]`).

A provenance link keeps its `#L` line anchor (every reader, Obsidian included, sees a plain
link), and its text is what resolves it: a digest fact or history line quotes the line it cites
(`line_text` of both is the same, or one holds the other), so the anchored line either still
says it or the line that does now is found again. Two uses:

- a writer that shifts the lines of a file (capture update, a person's edit or `fm set`,
  `forget`) knows the old and new text: `repoint_inbound` maps each cited old line to where its
  text is now (a line diff, then the same text elsewhere) and rewrites the links to it;
- `memflow check` knows only the files as they are: `stale_anchors` reports every anchor that
  no longer points at its text (a quote that is not on the anchored lines; a blank line, a
  heading the citing line does not name, the frontmatter or past the end for any anchor), and
  `repair_anchors` re-points a quote to the line that now holds it, or removes the link when the
  text is gone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher

from memflow.tasks.ground.markdown import (
    FACT_DATE_RE,
    HISTORY_DATE_RE,
    RELATED,
    iter_link_spans,
    line_text,
    parse_anchor,
    split_frontmatter,
)
from memflow.tasks.ground.tokenize import STOPWORDS
from memflow.tasks.ground.workspace import Layout, iter_files, markdown_files
from memflow.tasks.stores.files import atomic_write_bytes

_WORD_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]|[^\W_]+")
_FRAME_RE = re.compile(rf"^\s*(#|---\s*$|<!--|{re.escape(RELATED)})")
CHECKED_SUFFIXES = (".md", ".jsonl")  # text targets whose lines an anchor can name


def read_raw(path) -> str:
    """A file's text with undecodable bytes kept (surrogateescape), so a relink changes no
    byte but the link."""
    return path.read_bytes().decode("utf-8", errors="surrogateescape")


def quote_of(line: str) -> str | None:
    """What a citing line quotes: the text of a digest fact or history line; None for any other
    line (a person's `see [[note#L3]]` names a place, not a text)."""
    if FACT_DATE_RE.match(line) or HISTORY_DATE_RE.match(line):
        return line_text(line) or None
    return None


def holds_text(line: str) -> bool:
    """A line that can be cited: not blank, not a heading, `---`, comment or `Related:` line."""
    return bool(line.strip()) and not _FRAME_RE.match(line) and bool(line_text(line))


_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")


def citable(line: str) -> bool:
    """A line a resource card may cite: one that holds text, or a heading (cited by its title)."""
    return holds_text(line) or bool(_HEADING_RE.match(line))


def names_heading(citing: str, line: str) -> bool:
    """Whether `line` is a heading whose title the citing line says (a resource card lists a
    file's headings, each anchored to its line): a heading cited by name, not an anchor that
    drifted onto one."""
    heading = _HEADING_RE.match(line)
    title = " ".join(heading.group(1).split()).casefold() if heading else ""
    said = line_text(citing).casefold()
    return bool(title) and len(said) >= 3 and (title in said or said in title)


def support(quote: str, line: str) -> float:
    """How well `line` holds `quote`: 3 the same text, 2 one holds the other, else the share of
    the shorter one's content words the other has (0 for a line that holds no text)."""
    if not holds_text(line):
        return 0.0
    q, t = quote.casefold(), line_text(line).casefold()
    if q == t:
        return 3.0
    if q in t or t in q:
        return 2.0
    qw, tw = set(_WORD_RE.findall(q)) - STOPWORDS, set(_WORD_RE.findall(t)) - STOPWORDS
    if not qw or not tw:
        return 0.0
    return len(qw & tw) / min(len(qw), len(tw))


SUPPORTED = 0.6  # a corroborating line says the same fact in partly other words
HOLDS = 2.0  # `support` of a line that says the quote itself (the same text, or one holds the other)


def find_quote(quote: str, lines: list[str], first: int, near: int) -> int | None:
    """The 1-based line (at or after `first`, the body's first line) that best holds `quote`,
    the one nearest `near` on a tie; None when no line holds it."""
    best: tuple[float, int] | None = None
    for number in range(first, len(lines) + 1):
        score = support(quote, lines[number - 1])
        if score >= SUPPORTED and (best is None or (score, -abs(number - near)) > (best[0], -abs(best[1] - near))):
            best = (score, number)
    return best[1] if best else None


def format_anchor(numbers: list[int]) -> str:
    """[3, 4, 5, 9] -> `L3-L5,L9`."""
    ranges: list[list[int]] = []
    for n in sorted(set(numbers)):
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    return ",".join(f"L{a}" if a == b else f"L{a}-L{b}" for a, b in ranges)


# Given (the citing line's quote or None, the anchor's line numbers), the new line numbers: the
# same list for "keep", [] for "the text is gone".
Resolve = Callable[[str | None, list[int]], list[int]]


def relink(text: str, target: str, resolve: Resolve) -> tuple[str, int]:
    """`text` with every line-anchored `[[target#L..]]` outside code re-pointed by `resolve`.
    A link whose text is gone is removed from a quoting line (a fact keeps only sources that
    say it) and loses its anchor elsewhere (it still names the note). Returns (text, links
    changed)."""
    lines = text.split("\n")
    spans: dict[int, list[tuple[int, int, re.Match]]] = {}
    for line_no, start, end, match in iter_link_spans(text, 0):
        if match.group(1).strip() == target and parse_anchor(match.group(2) or ""):
            spans.setdefault(line_no, []).append((start, end, match))
    changed = 0
    for line_no, found in spans.items():
        line = lines[line_no]
        quote = quote_of(line)
        for start, end, match in reversed(found):
            old = [n for a, b in parse_anchor(match.group(2)) for n in range(a, b + 1)]
            new = resolve(quote, old)
            if new == old:
                continue
            label = f"|{match.group(3)}" if match.group(3) is not None else ""
            if new:
                link = f"[[{match.group(1)}#{format_anchor(new)}{label}]]"
            else:
                link = "" if quote is not None else f"[[{match.group(1)}{label}]]"
            cut = start - 1 if not link and start > 0 and line[start - 1] == " " else start
            line = line[:cut] + link + line[end:]
            changed += 1
        lines[line_no] = line
    return "\n".join(lines), changed


def line_moves(old: str, new: str) -> tuple[dict[int, int], dict[int, int]]:
    """(moves, rewrites) from old 1-based lines to new ones. `moves`: the lines of `old` whose
    text is still in `new`, by a line diff first (a line rewritten in place with the same text,
    its links changed, counts as kept), then the same text anywhere else (a line moved),
    nearest first. `rewrites`: a line replaced in place by other text -> the line that took its
    place (where a link that quotes nothing still points)."""
    a, b = old.split("\n"), new.split("\n")
    moves: dict[int, int] = {}
    rewrites: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            moves.update({i1 + k + 1: j1 + k + 1 for k in range(i2 - i1)})
        elif tag == "replace":
            texts: dict[str, int] = {}
            for j in range(j1, j2):
                texts.setdefault(line_text(b[j]), j + 1)
            for i in range(i1, i2):
                rewrites[i + 1] = j1 + min(i - i1, j2 - j1 - 1) + 1
                if line_text(a[i]) and line_text(a[i]) in texts:
                    moves[i + 1] = texts[line_text(a[i])]
    taken = set(moves.values())
    by_text: dict[str, list[int]] = {}
    for j, line in enumerate(b, 1):
        if j not in taken and holds_text(line):
            by_text.setdefault(line_text(line), []).append(j)
    for i, line in enumerate(a, 1):
        if i not in moves and holds_text(line) and by_text.get(line_text(line)):
            moves[i] = min(by_text[line_text(line)], key=lambda j: abs(j - i))
    return moves, rewrites


def edit_resolver(old: str, new: str) -> Resolve:
    """Where the lines an anchor cited in `old` are in `new`: moved lines follow their text; a
    quote whose lines are gone is looked for in `new` by its text; a link that quotes nothing
    stays on a line rewritten in place."""
    moves, rewrites = line_moves(old, new)
    new_lines = new.split("\n")
    first = split_frontmatter(new)[2]

    def resolve(quote: str | None, numbers: list[int]) -> list[int]:
        kept = [moves[n] for n in numbers if n in moves and holds_text(new_lines[moves[n] - 1])]
        if kept:  # the cited lines themselves, wherever they went (a model's paraphrase too)
            return sorted(set(kept))
        if quote is not None:
            found = find_quote(quote, new_lines, first, numbers[0])
            return [found] if found else []
        return sorted({rewrites[n] for n in numbers if n in rewrites})

    return resolve


def repoint_inbound(lay: Layout, rel: str, old: str, new: str, folders: list[str] | None = None) -> list[str]:
    """After `rel` changed from `old` to `new`: rewrite every line anchor into it (in Markdown
    files under `folders`, default every layer) to where its text is now. Returns the files
    rewritten (each atomically). Nothing is read when no line moved or went: the same text, or
    text added after it (an append, the common write of an agent)."""
    if new.startswith(old) and (old.endswith("\n") or old == new):
        return []
    resolve = edit_resolver(old, new)
    files = iter_files(lay, folders) if folders is not None else markdown_files(lay)
    return _relink_all(lay, rel, files, resolve)


def _relink_all(lay: Layout, rel: str, files: list[str], resolve: Resolve) -> list[str]:
    rewritten = []
    needle = f"[[{rel}#"
    for other in files:
        if other == rel:
            continue
        path = lay.root / other
        text = read_raw(path)
        if needle not in text:
            continue
        new_text, count = relink(text, rel, resolve)
        if count:
            atomic_write_bytes(path, new_text.encode("utf-8", errors="surrogateescape"))
            rewritten.append(other)
    return rewritten


@dataclass
class StaleAnchor:
    path: str          # the citing file
    line: int          # its 1-based line
    link: str          # `target#anchor`
    now: str           # what the anchor points at now
    fix: list[int]     # the lines to point at instead ([]: the text is gone)
    quoted: bool       # the citing line quotes its text (else only its place is known)


def _points_at(lines: list[str], first: int, numbers: list[int]) -> str:
    number = numbers[0]
    if number > len(lines) or (number == len(lines) and not lines[-1]):
        return f"past the end ({len(lines) - (not lines[-1])} lines)"
    if number < first:
        return "the frontmatter"
    line = lines[number - 1]
    if not line.strip():
        return "a blank line"
    if line.lstrip().startswith("#"):
        return f"a heading ({line.strip()[:60]!r})"
    return f"{line.strip()[:80]!r}" if holds_text(line) else f"{line.strip()[:40]!r} (no text)"


def _verdict(lines: list[str], first: int, quote: str | None, numbers: list[int],
             jsonl: bool, citing: str = "") -> tuple[bool, list[int]]:
    """(stale?, the lines to point at instead). A quote is stale when its lines hold no text,
    or do not hold the quote while another line does (it moved), or share no word with it (it
    is gone); lines that share some words and no line says it better are a paraphrase (a
    model's dream writes its own words), left as they are."""
    inside = [lines[n - 1] for n in numbers if first <= n <= len(lines)]
    if jsonl:
        return not any(line.strip() for line in inside), []
    if quote is None:
        return not any(holds_text(line) or names_heading(citing, line) for line in inside), []
    best = max((support(quote, line) for line in inside), default=0.0)
    if best >= HOLDS:  # the anchored lines say it
        return False, []
    fix = find_quote(quote, lines, first, numbers[0])
    if best >= SUPPORTED and (fix is None or support(quote, lines[fix - 1]) <= best):
        return False, []  # a paraphrase, and no other line says it better
    return bool(fix) or best == 0.0, [fix] if fix else []


def stale_anchors(lay: Layout, rel: str, text: str, cache: dict[str, list[str] | None]) -> list[StaleAnchor]:
    """Every line anchor of `rel` (its text `text`) into a text file of the workspace that no
    longer points at its text, each with the lines that hold that text now."""
    found = []
    lines_of = text.split("\n")
    for line_no, _start, _end, match in iter_link_spans(text):
        target, anchor = match.group(1).strip(), (match.group(2) or "").strip()
        numbers = [n for a, b in parse_anchor(anchor) for n in range(a, b + 1)]
        if not numbers or not target.endswith(CHECKED_SUFFIXES):
            continue
        lines = _target_lines(lay, target, cache)
        if lines is None:
            continue  # a missing target is reported as a link that does not resolve
        jsonl = target.endswith(".jsonl")
        first = 1 if jsonl else split_frontmatter("\n".join(lines))[2]
        quote = None if jsonl else quote_of(lines_of[line_no - 1])
        stale, fix = _verdict(lines, first, quote, numbers, jsonl, lines_of[line_no - 1])
        if stale:
            found.append(StaleAnchor(rel, line_no, f"{target}#{anchor}", _points_at(lines, first, numbers),
                                     fix, quote is not None))
    return found


def _target_lines(lay: Layout, target: str, cache: dict[str, list[str] | None]) -> list[str] | None:
    if target not in cache:
        path = lay.root / target
        cache[target] = read_raw(path).split("\n") if path.is_file() else None
    return cache[target]


def repair_anchors(lay: Layout, stale: list[StaleAnchor]) -> list[str]:
    """Re-point each stale anchor to the lines that hold its text now, or remove the link when
    its text is gone (a link that quotes nothing keeps naming its note, without the anchor).
    Returns the files rewritten (each atomically; the caller holds the workspace lock)."""
    by_file: dict[str, dict[tuple[int, str], list[int]]] = {}
    for item in stale:
        by_file.setdefault(item.path, {})[(item.line, item.link)] = item.fix
    rewritten = []
    for rel, fixes in sorted(by_file.items()):
        path = lay.root / rel
        text = read_raw(path)
        out = _apply_fixes(text, fixes)
        if out != text:
            atomic_write_bytes(path, out.encode("utf-8", errors="surrogateescape"))
            rewritten.append(rel)
    return rewritten


def _apply_fixes(text: str, fixes: dict[tuple[int, str], list[int]]) -> str:
    lines = text.split("\n")
    for (line_no, link), fix in sorted(fixes.items(), reverse=True):
        target, _, anchor = link.partition("#")
        old = [n for a, b in parse_anchor(anchor) for n in range(a, b + 1)]
        one, _count = relink(lines[line_no - 1], target,
                             lambda _q, numbers, old=old, fix=fix: fix if numbers == old else numbers)
        lines[line_no - 1] = one
    return "\n".join(lines)

