"""Chunkers (pure): a Markdown note -> chunks on its structure; other text -> byte windows.

Markdown: sections by heading; a section that fits the byte budget is one chunk; otherwise its
children are packed greedily and only oversized blocks are split (tables repeat header and
separator rows, fences repeat the opening fence and close it, lists split between items, then
lines; a line longer than the budget after sentences, then words). Pieces of a split block
start with `[Part X/N]`, pieces of a line with `[Part X/N of Ln]`. Every chunk starts with the
breadcrumb of its ancestor headings, counted in the budget. Chunk text is original source lines;
`start`/`end` are 1-based inclusive lines of the real file, frontmatter included.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from itertools import accumulate
from operator import add

from memflow.schemas.notes import Block, Note
from memflow.tasks.ground.markdown import blocks
from memflow.tasks.ground.pieces import line_pieces

_COMMENT_RE = re.compile(r"^\s*(<!--.*?-->\s*)+$", re.DOTALL)
_HEADING_TEXT_RE = re.compile(r"^\s{0,3}#{1,6}\s+|\s+#+\s*$")


@dataclass(frozen=True)
class Piece:
    start: int
    end: int
    heading_path: str
    text: str


@dataclass
class _Section:
    heading: Block | None
    title: str
    children: list = field(default_factory=list)  # Block | _Section
    end: int = 0


CRUMB_MAX_CHARS = 256  # a heading's share of every breadcrumb under it


def _nbytes(lines: list[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def _build_tree(blks: list[Block], lines: list[str]) -> _Section:
    root = _Section(None, "")
    stack: list[tuple[int, _Section]] = [(0, root)]
    for blk in blks:
        if blk.kind == "heading":
            while stack[-1][0] >= blk.level:
                stack.pop()
            title = _HEADING_TEXT_RE.sub("", lines[blk.start - 1]).strip() or lines[blk.start - 1].strip()
            section = _Section(blk, lines[blk.start - 1].strip() if title else "")
            section.title = lines[blk.start - 1].strip()[:CRUMB_MAX_CHARS]  # it repeats per chunk
            stack[-1][1].children.append(section)
            stack.append((blk.level, section))
        else:
            stack[-1][1].children.append(blk)
    _close(root)
    return root


def _close(section: _Section) -> int:
    ends = [section.heading.end] if section.heading else []
    for child in section.children:
        ends.append(_close(child) if isinstance(child, _Section) else child.end)
    section.end = max(ends) if ends else 0
    return section.end


def _first_line(node) -> int:
    if isinstance(node, _Section):
        return node.heading.start if node.heading else _first_line(node.children[0])
    return node.start


class _Chunker:
    def __init__(self, lines: list[str], budget: int):
        self.lines, self.budget, self.out = lines, budget, []
        self.carry: int | None = None  # a heading line folded into the next piece's range
        # bytes before each line: a range's size is one subtraction, not a walk over its lines
        # (a growing chunk measured again per line it takes was quadratic in lines per chunk)
        ends = accumulate(map(len, lines)) if all(map(str.isascii, lines)) else \
            accumulate(len(line.encode("utf-8")) for line in lines)  # an ASCII line's bytes: its length
        self.before = [0, *map(add, ends, range(1, len(lines) + 1))]  # + one newline per line

    def src(self, start: int, end: int) -> list[str]:
        return self.lines[start - 1:end]

    def size(self, start: int, end: int) -> int:
        """`_nbytes(self.src(start, end))`."""
        last = len(self.lines)
        return max(self.before[min(end, last)] - self.before[min(max(start - 1, 0), last)], 0)

    def emit(self, crumbs: list[str], start: int, end: int, body: list[str], part: str = "") -> None:
        head = [" > ".join(crumbs)] if crumbs else []
        marker = [part] if part else []
        if self.carry is not None:
            start, self.carry = min(start, self.carry), None
        self.out.append(Piece(start, end, " > ".join(crumbs), "\n".join(head + marker + body)))

    def room(self, crumbs: list[str]) -> int:
        return self.budget - (len(" > ".join(crumbs).encode()) + 1 if crumbs else 0)

    def section(self, sec: _Section, crumbs: list[str]) -> None:
        if not sec.children and sec.heading is None:
            return
        start = sec.heading.start if sec.heading else _first_line(sec)
        if self.size(start, sec.end) <= self.room(crumbs):
            self.emit(crumbs, start, sec.end, self.src(start, sec.end))
            return
        inner = crumbs + [sec.title] if sec.heading else crumbs
        pending: list[tuple[int, int]] = [(sec.heading.start, sec.heading.end)] if sec.heading else []
        with_heading = bool(sec.heading)

        def flush() -> None:
            nonlocal pending, with_heading
            if pending:
                first, last = pending[0][0], pending[-1][1]
                self.emit(crumbs if with_heading else inner, first, last, self.src(first, last))
            pending, with_heading = [], False

        for child in sec.children:
            first = _first_line(child)
            last = child.end
            size = self.size(pending[0][0] if pending else first, last)
            room = self.room(crumbs if (with_heading and pending) else inner)
            if size <= room:
                pending.append((first, last))
                continue
            if pending and not (with_heading and len(pending) == 1):
                flush()
            elif pending:  # heading alone: its title lives on in the breadcrumb of what follows
                self.carry = pending[0][0]
                pending, with_heading = [], False
            if self.size(first, last) <= self.room(inner):
                pending.append((first, last))
            elif isinstance(child, _Section):
                self.section(child, inner)
            else:
                self.split_block(child, inner)
        flush()

    def split_block(self, blk: Block, crumbs: list[str]) -> None:
        room = self.room(crumbs) - len("[Part 00/00]\n")
        lines = self.src(blk.start, blk.end)
        head: list[str] = []
        tail: list[str] = []
        first_unit, last_unit = blk.start, blk.end
        if blk.kind == "table" and len(lines) > 2:
            head, first_unit = lines[:2], blk.start + 2
        elif blk.kind == "fence" and len(lines) > 1:
            opener = lines[0].strip()
            fence = opener[: len(opener) - len(opener.lstrip(opener[0]))]
            head, tail, first_unit = lines[:1], [fence], blk.start + 1
            if lines[-1].strip().startswith(fence):
                tail, last_unit = lines[-1:], blk.end - 1
        if blk.kind == "list" and len(blk.items) > 1:
            bounds = list(blk.items) + [blk.end + 1]
            units = [(bounds[i], bounds[i + 1] - 1) for i in range(len(blk.items))]
        else:
            units = [(n, n) for n in range(first_unit, last_unit + 1)]
        groups = self.pack(units, room - _nbytes(head) - _nbytes(tail))
        for index, (first, last) in enumerate(groups, 1):
            if first == last and self.size(first, last) > room:
                self.split_line(first, crumbs, room)
                continue
            start = blk.start if index == 1 else first
            end = blk.end if index == len(groups) else last
            self.emit(crumbs, start, end, head + self.src(first, last) + tail,
                      f"[Part {index}/{len(groups)}]")

    def split_line(self, number: int, crumbs: list[str], room: int) -> None:
        """A line longer than the budget -> chunks of it cut after sentences (then between words),
        each `[Part k/N of Ln]`, spanning that line."""
        parts = line_pieces(self.lines[number - 1], room - len(f" of L{number}"))
        for k, part in enumerate(parts, 1):
            self.emit(crumbs, number, number, [part], f"[Part {k}/{len(parts)} of L{number}]")

    def pack(self, units: list[tuple[int, int]], room: int) -> list[tuple[int, int]]:
        groups: list[tuple[int, int]] = []
        for first, last in units:
            if self.size(first, last) > room and last > first:
                groups.extend(self.pack([(n, n) for n in range(first, last + 1)], room))
                continue
            if groups and self.size(groups[-1][0], last) <= room:
                groups[-1] = (groups[-1][0], last)
            else:
                groups.append((first, last))
        return groups


def _comment_only(lines: list[str], blk: Block) -> bool:
    """The block is HTML comments only (`_COMMENT_RE`); a block whose first line has text that
    is not `<!--` is not, found without joining its lines."""
    first = lines[blk.start - 1].lstrip()
    if first and not first.startswith("<!--"):
        return False
    return _COMMENT_RE.match("\n".join(lines[blk.start - 1:blk.end])) is not None


def chunk_markdown(note: Note, budget: int) -> list[Piece]:
    """Note -> chunks. A line longer than the budget is cut after sentences (`split_line`)."""
    lines = note.text.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    if note.body_start > len(lines):
        return []
    # Comment-only HTML blocks (`<!-- memory:auto -->` markers) are not content: never a chunk.
    blks = [b for b in blocks(note.body, note.body_start) if not _comment_only(lines, b)]
    if not blks:
        return []
    chunker = _Chunker(lines, budget)
    start, end = blks[0].start, max(b.end for b in blks)  # the root section's range
    if chunker.size(start, end) <= chunker.room([]):  # all of it fits: one chunk, as `section` emits it
        chunker.emit([], start, end, chunker.src(start, end))
        return chunker.out
    chunker.section(_build_tree(blks, lines), [])
    return chunker.out


def chunk_bytes(text: str, budget: int, overlap: int = 200) -> list[tuple[int, int, str]]:
    """Plain text -> (start byte, end byte, text) windows with `overlap` bytes shared between
    neighbours, each ending after a line, else a sentence, else a word where it can; never
    splits a UTF-8 character or a `[[link]]`."""
    data = text.encode("utf-8")
    links = [(m.start(), m.end()) for m in re.finditer(rb"\[\[[^\[\]\n]*\]\]", data)]
    windows, start = [], 0
    while start < len(data):
        end = min(start + budget, len(data))
        end = _safe_cut(data, links, _text_end(data, start, end), start)
        windows.append((start, end, data[start:end].decode("utf-8")))
        if end >= len(data):
            break
        start = max(_safe_cut(data, links, end - overlap, start + 1), start + 1)
        start = _char_start(data, start)
    return windows


def _text_end(data: bytes, start: int, end: int) -> int:
    """Where a window of `data[start:end]` ends best: after its last line end, else after its
    last sentence, else after its last word, when that keeps at least half the window."""
    if end >= len(data):
        return end
    floor = start + (end - start) // 2
    newline = data.rfind(b"\n", floor, end)  # one search back, not every line of the window
    if newline >= 0:
        return newline + 1
    for pattern in (rb"[.!?;:]\s", "。|！|？|；".encode(), rb"\s"):
        found = [m.end() for m in re.finditer(pattern, data[floor:end])]
        if found:
            return floor + found[-1]
    return end


def _char_start(data: bytes, pos: int) -> int:
    while 0 < pos < len(data) and (data[pos] & 0xC0) == 0x80:
        pos -= 1
    return pos


def _safe_cut(data: bytes, links: list[tuple[int, int]], pos: int, floor: int) -> int:
    """Move a cut back so it falls between characters and outside links (`links` in order and
    apart: the one around a cut is found by bisection, not by walking them all per window)."""
    if pos >= len(data):
        return len(data)
    pos = _char_start(data, pos)
    around = _link_around(links, pos)
    if around and around[0] > floor:
        pos = around[0]
    if pos <= floor:  # a link or character longer than the window: cut after it instead
        around = _link_around(links, floor + 1)
        pos = around[1] if around else floor + 1
        while pos < len(data) and (data[pos] & 0xC0) == 0x80:
            pos += 1
    return pos


def _link_around(links: list[tuple[int, int]], pos: int) -> tuple[int, int] | None:
    """The link with `pos` strictly inside it, if any."""
    index = bisect.bisect_left(links, (pos, -1)) - 1
    return links[index] if index >= 0 and links[index][0] < pos < links[index][1] else None


def chunk_resource(rel: str, text: str, converted, budget: int) -> list[tuple[int, int, str]]:
    """A text resource -> (start line, end line, text) chunks of the file itself. CSV: rows under
    their header line; text whose lines moved in conversion (HTML, JSON, YAML): byte windows of
    the converted text, each spanning the file; other text: byte windows of the file with the
    lines they cover."""
    if rel.lower().endswith(".csv") and converted.lines_match_file:
        return _csv_chunks(text, budget)
    if not converted.lines_match_file:
        last = text.count("\n") + 1
        return [(1, last, window) for _, _, window in chunk_bytes(converted.text, budget)]
    data = text.encode("utf-8")
    out, counted, lines_before = [], 0, 0  # windows move forward: count each newline once
    for start, end, window in chunk_bytes(text, budget):
        lines_before += data.count(b"\n", counted, start)
        counted = start
        first = lines_before + 1
        out.append((first, first + data.count(b"\n", start, max(end - 1, start)), window))
    return out


def _csv_chunks(text: str, budget: int) -> list[tuple[int, int, str]]:
    lines = text.split("\n")
    header, out, rows, first = lines[0], [], [], 2
    size = len(header.encode()) + 1
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        if rows and size + len(line.encode()) + 1 > budget:
            out.append((first, number - 1, "\n".join([header, *rows])))
            rows, size, first = [], len(header.encode()) + 1, number
        rows.append(line)
        size += len(line.encode()) + 1
    if rows or not out:
        out.append((1 if not out else first, len(lines), "\n".join([header, *rows])))
    return out


def chunk_transcript(units: list[tuple[int, str]], heading: str, budget: int) -> list[Piece]:
    """A session transcript ((log line, text) per message or piece of a long message, text
    blank where the log line is not a message) -> windows of whole lines of at most `budget`
    bytes under `heading`; a longer line is a window of its own. Line numbers are the log's:
    the pieces of one message share its line."""
    room = budget - len(heading.encode()) - 1
    out: list[Piece] = []
    body: list[tuple[int, str]] = []
    size = 0

    def flush() -> None:
        while body and not body[-1][1]:
            body.pop()
        if body:
            out.append(Piece(body[0][0], body[-1][0], heading, "\n".join([heading, *(t for _, t in body)])))

    for number, line in units:
        if not body and not line:
            continue
        if body and size + len(line.encode()) + 1 > room:
            flush()
            body, size = [], 0
            if not line:
                continue
        body.append((number, line))
        size += len(line.encode()) + 1
    flush()
    return out


def chunk_sections(sections: list, budget: int) -> list[tuple[int, int, str, str]]:
    """A PDF's pages or a Word file's sections (`documents.Section`) -> (first, last, heading,
    text) chunks: neighbouring sections packed while they fit the budget, a longer one cut into
    byte windows; `first`/`last` are page (PDF) or paragraph (Word) numbers, the heading says
    which ("page 3", "pages 3-4", "Setup > Install")."""
    out: list[tuple[int, int, str, str]] = []
    group: list = []

    def flush() -> None:
        if not group:
            return
        first, last = group[0].first, group[-1].last
        labels = list(dict.fromkeys(s.label for s in group))
        if all(s.label.startswith("page ") for s in group) and len(group) > 1:
            heading = f"pages {first}-{last}"
        else:
            heading = "; ".join(labels)
        out.append((first, last, heading, "\n\n".join(s.text for s in group)))
        group.clear()

    for section in sections:
        size = len(section.text.encode("utf-8"))
        if size > budget:
            flush()
            out.extend((section.first, section.last, section.label, window)
                       for _, _, window in chunk_bytes(section.text, budget))
            continue
        if group and sum(len(s.text.encode("utf-8")) + 2 for s in group) + size > budget:
            flush()
        group.append(section)
    flush()
    return out
