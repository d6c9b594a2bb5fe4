"""Markdown structure: frontmatter split, code masking, wikilinks, top-level blocks.

The one module that imports mistletoe. mistletoe keeps parser state in module globals, so
`blocks()` must be called serially, never from several threads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

from memflow.schemas.notes import Block, Link

FRONTMATTER_RE = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*(?:\n|\Z)", re.DOTALL)
FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})")
INLINE_CODE_RE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# The target is taken greedily: it cannot hold the `#`, `|` or `]` that may follow it, so a lazy
# `+?` matched the same links but tried the rest of the pattern after every character (2.7x slower).
WIKILINK_RE = re.compile(r"\[\[([^\[\]\n|#]+)(?:#([^\[\]\n|]*))?(?:\|([^\[\]\n]*))?\]\]")
TYPED_LINE_RE = re.compile(r"^\s*(?:[-*+]\s+)?([A-Za-z_][\w-]*)::\s")
# A digest history line (`  - until 2026-03-09: ...`): its links cite a replaced fact.
HISTORY_LINE_RE = re.compile(r"^\s+[-*+]\s+until \d{4}-\d{2}-\d{2}: ")
ANCHOR_RE = re.compile(r"^L(\d+)(?:-L?(\d+))?$")


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """(frontmatter text or None, body, real-file line number of the body's first line)."""
    match = FRONTMATTER_RE.match(text)
    if not match:
        return None, text, 1
    return match.group(1) or "", text[match.end():], match.group(0).count("\n") + 1


def mask_code(lines: list[str]) -> list[str]:
    """Lines with fenced code and inline code spans blanked out (same lengths)."""
    out, fence = [], None
    for line in lines:
        opener = FENCE_RE.match(line) if ("```" in line or "~~~" in line) else None
        if fence is not None:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = None
            out.append(" " * len(line))
            continue
        if opener:
            fence = opener.group(1)
            out.append(" " * len(line))
            continue
        out.append(INLINE_CODE_RE.sub(_blank, line) if "`" in line else line)
    return out


def _blank(match: re.Match) -> str:
    return " " * len(match.group(0))


def iter_link_spans(text: str, first_line: int = 1) -> Iterator[tuple[int, int, int, re.Match]]:
    """(line number, start col, end col, match) of each wikilink outside code."""
    if "[[" not in text:
        return
    lines = text.split("\n")
    for offset, masked in enumerate(mask_code(lines)):
        if "[[" not in masked:
            continue
        for match in WIKILINK_RE.finditer(masked):
            yield first_line + offset, match.start(), match.end(), match


def parse_links(text: str, first_line: int = 1) -> list[Link]:
    """Wikilinks of a text; literal targets (no `.md` added, no basename lookup). A link's kind
    is `rel` on a `rel:: [[x]]` line, `superseded` on a digest history line, else `link`."""
    return [Link(target, anchor, label, line, kind) for line, target, anchor, label, kind in link_fields(text, first_line)]


def link_fields(text: str, first_line: int = 1) -> list[tuple[int, str, str, str, str]]:
    """(line, target, anchor, label, kind) of each wikilink of `text`, as `parse_links` reads
    them (the index's link rows are made of these, without a `Link` per link)."""
    if "[[" not in text:
        return []
    if "`" in text or "~~~" in text:  # code may hide links: line by line, code masked
        lines = text.split("\n")
        found: Iterator[tuple[int, str, re.Match]] = (
            (line_no, lines[line_no - first_line], match) for line_no, _s, _e, match in iter_link_spans(text, first_line))
    else:
        found = _links_without_code(text, first_line)
    out = []
    kinds: dict[int, str] = {}
    for line_no, line, match in found:
        kind = kinds.get(line_no)
        if kind is None:
            typed = TYPED_LINE_RE.match(line)
            kind = kinds[line_no] = typed.group(1) if typed else "superseded" if HISTORY_LINE_RE.match(line) else "link"
        out.append((line_no, match.group(1).strip(), (match.group(2) or "").strip(), (match.group(3) or "").strip(), kind))
    return out


def _links_without_code(text: str, first_line: int) -> Iterator[tuple[int, str, re.Match]]:
    """(line number, line, match) of each wikilink of a text with no code span or fence (no
    backtick, no `~~~`: `mask_code` would change nothing), in one scan of the whole text (a
    link never spans lines) instead of one per line."""
    line_no, at, line_start, line_end = first_line, 0, 0, -1
    for match in WIKILINK_RE.finditer(text):
        start = match.start()
        if start > line_end:  # the first link of another line
            line_no += text.count("\n", at, start)
            at = start
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", start)
            line_end = len(text) if line_end < 0 else line_end
        yield line_no, text[line_start:line_end], match


# the line a digest node ends with (`dream.digest`): links to related nodes, no statement
RELATED = "Related: "


# Not the end of a sentence: a period after an initial ("J. R. Tolkien") or a capitalised
# abbreviation without a vowel ("Dr. Lee", "Mrs. Hale", "St. Ives", "Ltd. Co"), by shape, not by a
# list of abbreviations. Fixed-width lookbehinds, to put before a sentence split's `\s+`.
NOT_AN_ABBREVIATION = (r"(?<!\b[A-Z]\.)(?<!\b[A-Z][b-df-hj-np-tv-xz]\.)"
                       r"(?<!\b[A-Z][b-df-hj-np-tv-xz]{2}\.)(?<!\b[A-Z][b-df-hj-np-tv-xz]{3}\.)")


_LINE_LEAD_RE = re.compile(r"\s*(?:[-*+]\s+)?(?:(?:until )?\d{4}-\d{2}-\d{2}: )?")
_LINE_LINKS_RE = re.compile(r"(\s*\[\[[^\]]+\]\])+\s*$")
_SPEAKER_RE = re.compile(r"^[A-Z][a-z]+(?: [A-Z][a-z]+)?: ")


def line_text(line: str) -> str:
    """What a note or digest line says: without its bullet, its `DATE: ` or `until DATE: `, a
    leading `Name: ` speaker and its trailing links, whitespace collapsed. A daily line and the
    digest line made from it give the same text. (The trailing links are looked for only where
    a `[[` starts, in a line that ends with `]]`: a pattern search tried every position.)"""
    text = line[_LINE_LEAD_RE.match(line).end():]
    if text.rstrip().endswith("]]"):
        text = text[:_links_start(text)]
    text = _SPEAKER_RE.sub("", text.strip())
    return " ".join(text.split())


def _links_start(text: str) -> int:
    """Where the run of links that ends `text` starts (with the spaces before it), else its
    length: the first `[[` (from the left) whose run reaches the end, tried only there."""
    at = text.find("[[")
    while at >= 0:
        start = at
        while start > 0 and text[start - 1].isspace():
            start -= 1
        if _LINE_LINKS_RE.match(text, start):
            return start
        at = text.find("[[", at + 1)
    return len(text)


def searchable_text(text: str) -> str:
    """Text as keyword search should see it: a provenance link (one with an anchor, `[[log#L3]]`)
    says nothing about the content and is dropped; another link counts as its label, or its
    file's name without folders, date or extension (`[[digest/wiki/billing-db.md]]` -> billing
    db)."""
    def words(match: re.Match) -> str:
        if match.group(2) is not None:
            return match.group(3) or ""
        if match.group(3):
            return match.group(3)
        stem = match.group(1).rsplit("/", 1)[-1].rsplit(".", 1)[0]
        return " " + re.sub(r"[-_]+", " ", stem) + " "

    return WIKILINK_RE.sub(words, text) if "[[" in text else text


def rewrite_links(text: str, old: str, new: str) -> tuple[str, int]:
    """Point every `[[old...]]` outside code at `new`, keeping anchors and labels."""
    lines = text.split("\n")
    count = 0
    by_line: dict[int, list[tuple[int, int, re.Match]]] = {}
    for line_no, start, end, match in iter_link_spans(text, 0):
        if match.group(1).strip() == old:
            by_line.setdefault(line_no, []).append((start, end, match))
    for line_no, spans in by_line.items():
        line = lines[line_no]
        for start, end, match in reversed(spans):
            anchor = f"#{match.group(2)}" if match.group(2) is not None else ""
            label = f"|{match.group(3)}" if match.group(3) is not None else ""
            line = line[:start] + f"[[{new}{anchor}{label}]]" + line[end:]
            count += 1
        lines[line_no] = line
    return "\n".join(lines), count


def parse_anchor(anchor: str) -> list[tuple[int, int]]:
    """`L9`, `L9-L10,L15-L20` -> [(9, 9)], [(9, 10), (15, 20)]; other anchors -> []."""
    ranges = []
    for part in anchor.split(","):
        match = ANCHOR_RE.match(part.strip())
        if not match:
            return []
        start = int(match.group(1))
        end = int(match.group(2) or start)
        ranges.append((min(start, end), max(start, end)))
    return ranges


_KINDS = {
    "Heading": "heading", "SetextHeading": "heading", "Paragraph": "paragraph", "List": "list",
    "Table": "table", "CodeFence": "fence", "BlockCode": "code", "Quote": "quote",
    "HtmlBlock": "html", "ThematicBreak": "other",
}


def blocks(body: str, first_line: int = 1) -> list[Block]:
    """Top-level blocks of a Markdown body with real-file line ranges (blank lines trimmed):
    read line by line (`blockscan`), or by mistletoe when the body has a construct the scanner
    leaves to it (block quotes, link reference definitions)."""
    from memflow.tasks.ground.blockscan import scan

    lines = body.split("\n")
    src = lines_with_ends(lines)
    found = scan(src)
    if found is None:
        found = _parsed(src)
    out = []
    shift = first_line - 1
    for index, (kind, start, level, items) in enumerate(found):
        end = found[index + 1][1] - 1 if index + 1 < len(found) else len(lines)
        while end > start and not lines[end - 1].strip():
            end -= 1
        out.append(Block(kind, start + shift, end + shift, level,
                         tuple(i + shift for i in items) if items else ()))
    return out


def _parsed(src: list[str]) -> list[tuple[str, int, int, tuple[int, ...]]]:
    """(kind, first line, heading level, list item lines) of each top-level block, by mistletoe."""
    from mistletoe import Document, span_token

    # Only block structure is used: switch inline parsing off while parsing (mistletoe keeps its
    # token types in module globals, which is also why this must run serially).
    saved = list(span_token._token_types)
    span_token._token_types[:] = [span_token.RawText]  # the fallback: text stays one raw span
    try:
        doc = Document(src)
    finally:
        span_token._token_types[:] = saved
    out = []
    for child in doc.children:
        if not getattr(child, "line_number", None):
            continue
        kind = _KINDS.get(type(child).__name__, "other")
        items = tuple(i.line_number for i in child.children
                      if getattr(i, "line_number", None)) if kind == "list" else ()
        out.append((kind, child.line_number, getattr(child, "level", 0) if kind == "heading" else 0, items))
    return out


def lines_with_ends(lines: list[str]) -> list[str]:
    return [line + "\n" for line in lines]


FACT_DATE_RE = re.compile(r"^- (\d{4}-\d{2}-\d{2}): ")
HISTORY_DATE_RE = re.compile(r"^\s+- until (\d{4}-\d{2}-\d{2}): ")


def line_date(line: str) -> date | None:
    """The date a fact line was stated, or until when a history line held; None otherwise."""
    match = FACT_DATE_RE.match(line) or HISTORY_DATE_RE.match(line)
    return iso_date(match.group(1)) if match else None


def iso_date(text: str) -> date | None:
    """A YYYY-MM-DD string as a date, or None when it names no real day (2026-02-30)."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def latest_date(text: str) -> date | None:
    """The newest date stated on a line of `text` (a digest chunk's date)."""
    return max(filter(None, (line_date(line) for line in text.split("\n"))), default=None)
