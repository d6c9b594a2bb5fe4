"""Top-level Markdown blocks without building a syntax tree: what `markdown.blocks` needs (each
block's kind, first line, heading level and list item lines), read line by line.

The rules are those of mistletoe's default block tokens (the parser `markdown.blocks` falls back
to), applied at the top level only: a list item, a table or a fenced block is followed to its
last line without parsing what is inside it. Block quotes and link reference definitions (which
mistletoe reads into nested or document-wide state) are left to mistletoe: `scan` returns None
for a text that has one where a block may start. tests/test_blockscan.py holds the two equal on
generated Markdown of every construct. Pure; about 20x faster than building mistletoe's tree.
"""

from __future__ import annotations

import re

# `lines` carry their "\n" (as mistletoe reads them), so `$` and `\s` see the line end.
_HEADING_RE = re.compile(r" {0,3}(#{1,6})(?:\n|\s+?(.*?)(?:\n|\s+?#+\s*?$))")
_FENCE_RE = re.compile(r"( {0,3})(`{3,}|~{3,})( *(\S*)[^\n]*)")
_BREAK_RE = re.compile(r" {0,3}(?:([-_*])\s*?)(?:\1\s*?){2,}$")
_LIST_RE = re.compile(r" {0,3}(?:\d{0,9}[.)]|[+\-*])(?:[ \t]*$|[ \t]+)")
_MARKER_RE = re.compile(r"( {0,3})(\d{0,9}[.)]|[+\-*])($|\s+)")
_CONTINUATION_RE = re.compile(r"([ \t]*)(\S.*\n|\n)")
_DELIMITER_RE = re.compile(r"\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*")
_SETEXT_RE = re.compile(r" {0,3}(=|-)+ *$")

Found = tuple[str, int, int, tuple[int, ...]]  # kind, first line (1-based), level, item lines


class _Unsupported(Exception):
    """A construct left to mistletoe."""


def _indented_code(line: str) -> bool:
    return line.replace("\t", "    ", 1).startswith("    ")


def _quote(line: str) -> bool:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) <= 3 and stripped.startswith(">"):
        raise _Unsupported
    return False


def _interrupts(line: str, breaks: bool = True) -> bool:
    """A heading, a block quote (raises `_Unsupported`), a fence or (with `breaks`) a thematic
    break starts on `line`: each tried only on the character it can start with (after at most
    three spaces, all four patterns allow no more), not as four patterns on every line."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return False
    first = stripped[:1]
    if first == "#":
        return bool(_HEADING_RE.match(line))
    if first == ">":
        return _quote(line)
    if first == "`" or first == "~":
        return bool(_fence(line))
    if breaks and (first == "-" or first == "_" or first == "*"):
        return bool(_BREAK_RE.match(line))
    return False


def _fence(line: str) -> tuple[int, str] | None:
    match = _FENCE_RE.match(line)
    if not match or (match.group(2)[0] == "`" and "`" in match.group(3)):
        return None
    return len(match.group(1)), match.group(2)


def _marker(line: str) -> tuple[int, int, str, str] | None:
    """(indentation, content column, leader, content) of a list item's first line."""
    match = _MARKER_RE.match(line)
    if match is None:
        return None
    column = len(match.group(0).expandtabs(4))
    content = line[match.end(0):]
    spaces = column - match.end(2)
    if spaces > 4:  # past four spaces, all but the separator belong to the content
        column -= spaces - 1
        content = " " * (spaces - 1) + content
    return len(match.group(1)), column, match.group(2), content


class _Scan:
    def __init__(self, lines: list[str]):
        self.lines, self.n = lines, len(lines)

    def table_at(self, i: int) -> bool:
        return "|" in self.lines[i] and i + 1 < self.n and bool(_DELIMITER_RE.fullmatch(self.lines[i + 1]))

    def list_interrupts(self, line: str) -> bool:
        found = _marker(line)
        if found is None or not found[3].strip():
            return False
        return not found[2][0].isdigit() or found[2] in ("1.", "1)")

    def paragraph(self, i: int) -> tuple[int, str, int]:
        """(next line, kind, level) of a paragraph starting at line i (or a setext heading)."""
        j = i + 1
        while j < self.n and self.lines[j].strip():
            line = self.lines[j]
            if _interrupts(line, breaks=False) or self.list_interrupts(line) or self.table_at(j):
                break
            if _SETEXT_RE.match(line):
                return j + 1, "heading", 1 if line.rstrip().endswith("=") else 2
            if _BREAK_RE.match(line):  # after the setext underline it may also be
                break
            j += 1
        return j, "paragraph", 0

    def item(self, i: int, known) -> tuple[int, object, str]:
        """(next line, the next item's marker or None, leader) of the list item at line i."""
        indentation, column, leader, content = known or _marker(self.lines[i])
        j, blanks = i + 1, 0
        if not content.strip():
            column = indentation + len(leader) + 1
            start = j
            while j < self.n and not self.lines[j].strip():
                j += 1
            if j > start:  # an empty item
                return j, (_marker(self.lines[j]) if j < self.n else None), leader
        while True:
            if j >= self.n:
                return (j - 1 if blanks else j), None, leader
            line = self.lines[j]
            more = None
            # only a blank or indented line continues the item (`column` is at least 2)
            match = _CONTINUATION_RE.match(line) if line[:1] in (" ", "\t", "\n") else None
            if match is not None:
                if match.group(2) == "\n":
                    more = "\n"
                elif len(match.group(1).expandtabs(4)) >= column:
                    more = "text"
            if not more:
                if _interrupts(line) or self.table_at(j):
                    return (j - 1 if blanks else j), None, leader
                following = _marker(line)
                if following is not None:
                    return j, following, leader
                if blanks:
                    return j - 1, None, leader
                more = "text"
            blanks = blanks + 1 if more == "\n" else 0
            j += 1

    def list(self, i: int) -> tuple[int, tuple[int, ...]]:
        first_leader, known, items = None, None, []
        while True:
            anchor = i
            i, following, leader = self.item(i, known)
            if first_leader is None:
                first_leader = leader
            elif not _same_type(first_leader, leader):
                return anchor, tuple(items)
            items.append(anchor + 1)
            known = following
            if following is None:
                return i, tuple(items)

    def code(self, i: int) -> int:
        trailing = 0
        while i < self.n:
            line = self.lines[i]
            if not line.strip():
                trailing = trailing + 1 if line == "\n" else 0
            elif not _indented_code(line):
                break
            else:
                trailing = 0
            i += 1
        return i - trailing

    def fence(self, i: int, opened: tuple[int, str]) -> int:
        while i < self.n:
            line = self.lines[i]
            stripped = line.lstrip(" ")
            i += 1
            if stripped.startswith(opened[1]) and len(stripped.split(maxsplit=1)) == 1 and len(line) - len(stripped) < 4:
                break
        return i

    def blocks(self) -> list[Found]:
        out: list[Found] = []
        i = 0
        while i < self.n:
            line, start = self.lines[i], i + 1
            first = line.lstrip(" ")[:1]  # what each pattern below can start with, after its spaces
            if (line[:1] == " " or line[:1] == "\t") and _indented_code(line):
                i = self.code(i)
                out.append(("code", start, 0, ()))
            elif first == "#" and (heading := _HEADING_RE.match(line)):
                i += 1
                out.append(("heading", start, len(heading.group(1)), ()))
            elif first == ">" and _quote(line):
                pass
            elif (first == "`" or first == "~") and (opened := _fence(line)):
                i = self.fence(i + 1, opened)
                out.append(("fence", start, 0, ()))
            elif (first == "-" or first == "_" or first == "*") and _BREAK_RE.match(line):
                i += 1
                out.append(("other", start, 0, ()))
            elif _LIST_RE.match(line):
                i, items = self.list(i)
                out.append(("list", start, 0, items))
            elif self.table_at(i):
                i += 2
                while i < self.n and "|" in self.lines[i]:
                    i += 1
                out.append(("table", start, 0, ()))
            elif line.strip():
                if line.lstrip().startswith("[") and self.reference(i):
                    raise _Unsupported
                i, kind, level = self.paragraph(i)
                out.append((kind, start, level, ()))
            else:
                i += 1
        return out

    def reference(self, i: int) -> bool:
        """A link reference definition may start here (`[label]:` up to the next blank line)."""
        end = i
        while end < self.n and self.lines[end].strip():
            end += 1
        return "]:" in "".join(self.lines[i:end])


def _same_type(leader: str, other: str) -> bool:
    if len(leader) == 1:
        return leader == other
    return leader[:-1].isdigit() and other[:-1].isdigit() and leader[-1] == other[-1]


def scan(lines: list[str]) -> list[Found] | None:
    """Top-level blocks of `lines` (each ending in "\\n"): (kind, first line, heading level,
    list item first lines), or None when a block quote or a link reference definition may be
    among them (mistletoe reads those)."""
    try:
        return _Scan(lines).blocks()
    except _Unsupported:
        return None
