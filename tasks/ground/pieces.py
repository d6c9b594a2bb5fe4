"""Long text in pieces (pure): a message or line longer than a budget -> pieces of at most that
many bytes, cut where the text is cut already: between paragraphs, list items and code blocks,
then at line ends, then after sentences, then between words, and only then between characters.

`message_pieces` is for a chat message (Markdown: prose, lists, fenced code and pasted logs);
`line_pieces` for one line of a note or a resource. Prose pieces have their whitespace
collapsed (a transcript line is one line); a code piece keeps its lines and their indentation
verbatim, each line end shown as ` ⏎ `, and is never merged with prose, so packing can keep the
words of a message while leaving out a long listing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINE_END = " ⏎ "  # a code line's end inside a one-line piece
_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ITEM_RE = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?;:。！？；])\s+|(?<=[。！？；])")


@dataclass(frozen=True)
class TextPiece:
    text: str
    code: bool = False


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def message_blocks(text: str) -> list[TextPiece]:
    """A message's blocks in order: fenced code blocks whole (an unclosed fence runs to the
    end), and between them paragraphs (split at blank lines) and list items."""
    out: list[TextPiece] = []
    prose: list[str] = []
    lines = text.split("\n")

    def flush() -> None:
        if prose:
            out.append(TextPiece(" ".join(" ".join(prose).split())))
            prose.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE_RE.match(line)
        if fence:
            flush()
            mark, j = fence.group(1), i + 1
            while j < len(lines) and not lines[j].strip().startswith(mark):
                j += 1
            out.append(TextPiece("\n".join(lines[i:j + 1]).rstrip(), code=True))
            i = j + 1
            continue
        if not line.strip() or _ITEM_RE.match(line):
            flush()
        if line.strip():
            prose.append(line.strip())
        i += 1
    flush()
    return [p for p in out if p.text.strip()]


def split_prose(text: str, budget: int) -> list[str]:
    """Prose -> parts of at most `budget` bytes: whole sentences while they fit, a longer
    sentence between words, a longer word between characters."""
    if _nbytes(text) <= budget:
        return [text]
    units = [s for s in _SENTENCE_END_RE.split(text) if s]
    if len(units) == 1:
        units = text.split(" ")
        if len(units) == 1:
            return _split_chars(text, budget)
    return _group(units, budget, " ", lambda unit: split_prose(unit, budget))


def split_code(text: str, budget: int) -> list[str]:
    """Code or a log -> parts of whole lines (joined by ` ⏎ `) of at most `budget` bytes; a line
    longer than that is cut between characters (its whitespace kept)."""
    return _group(text.split("\n"), budget, LINE_END, lambda line: _split_chars(line, budget))


def _group(units: list[str], budget: int, sep: str, split) -> list[str]:
    out: list[str] = []
    for unit in units:
        if _nbytes(unit) > budget:
            out.extend(split(unit))
        elif out and _nbytes(out[-1]) + _nbytes(sep) + _nbytes(unit) <= budget:
            out[-1] = f"{out[-1]}{sep}{unit}"
        else:
            out.append(unit)
    return out


def _split_chars(text: str, budget: int) -> list[str]:
    out, current = [], ""
    for char in text:
        if current and _nbytes(current) + _nbytes(char) > budget:
            out.append(current)
            current = ""
        current += char
    return [*out, current] if current else out


def message_pieces(text: str, budget: int) -> list[TextPiece]:
    """A message -> pieces of at most `budget` bytes: its blocks (`message_blocks`), neighbouring
    prose blocks joined while they fit, a longer block cut (`split_prose`, `split_code`)."""
    out: list[TextPiece] = []
    for blk in message_blocks(text):
        if blk.code:
            out.extend(TextPiece(part, code=True) for part in split_code(blk.text, budget))
            continue
        for part in split_prose(blk.text, budget):
            last = out[-1] if out else None
            if last and not last.code and _nbytes(last.text) + 1 + _nbytes(part) <= budget:
                out[-1] = TextPiece(f"{last.text} {part}")
            else:
                out.append(TextPiece(part))
    return out


def line_pieces(line: str, budget: int) -> list[str]:
    """One line of a note or resource -> parts of at most `budget` bytes, cut after sentences,
    then between words, then between characters; the parts joined give the line back."""
    if _nbytes(line) <= budget:
        return [line]
    sentences = [s for s in re.split(r"(?<=[.!?;:。！？；]\s)|(?<=[。！？；])", line) if s]
    return _group(sentences, budget, "", lambda unit: _cut_words(unit, budget))


def _cut_words(text: str, budget: int) -> list[str]:
    words = re.split(r"(?<=\s)(?=\S)", text)
    return _group(words, budget, "", lambda word: _split_chars(word, budget))
