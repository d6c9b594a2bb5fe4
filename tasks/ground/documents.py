"""PDF and Word files -> text by page or heading (pure; stages: resources, index). The one module
that imports pypdf and python-docx.

A PDF is read page by page (`Section` per page, numbered from 1); a Word file as Markdown,
paragraph by paragraph (headings as `#` lines, tables as `|` rows), one `Section` per heading.
Guards, so a hostile file costs a refusal and never a job: at most MAX_PAGES pages and
MAX_CHARS characters are read (the rest is named in `partial`); a .docx whose parts unpack to
more than MAX_UNPACKED bytes, or with more than MAX_PARTS parts, is refused before any XML is
parsed (zip bombs: Python's zipfile stops a part at its declared size, measured, so the
directory cannot lie); pypdf's own limits cap each decompressed stream (75 MB). Encrypted PDFs
that need a password and PDFs with no text layer (scans) are refused with that reason.
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from dataclasses import dataclass

from memflow.tasks.ground.encoding import NotText

logging.getLogger("pypdf").setLevel(logging.ERROR)  # a broken PDF is refused with a reason, not logged per object

DOCUMENT_SUFFIXES = (".pdf", ".docx")
MAX_PAGES = 2000
MAX_CHARS = 8_000_000
MAX_UNPACKED = 200 * 1024 * 1024
MAX_PARTS = 10_000
_HEADING_RE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)  # a style without an outline level


@dataclass
class Section:
    label: str  # "page 3", or the heading path of a Word section ("Setup > Install")
    first: int  # first page (PDF) or paragraph (Word) number
    last: int
    text: str


@dataclass
class Document:
    sections: list[Section]
    partial: str = ""  # what was not read (past a limit), "" when all of it was

    @property
    def text(self) -> str:
        return "\n\n".join(s.text for s in self.sections)


def read_document(rel: str, data: bytes) -> Document:
    """A PDF or .docx file's text; raises NotText when it has none to read (encrypted, scanned,
    not the format its suffix says)."""
    if rel.lower().endswith(".pdf"):
        return read_pdf(rel, data)
    return read_docx(rel, data)


def _pdf_reader(rel: str, data: bytes):
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, PdfReadError

    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise NotText("not a PDF (no %PDF header)")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise NotText(f"encrypted PDF that needs a password; not read (save a copy "
                          "without a password)")
    except DependencyError as exc:
        raise NotText(f"encrypted PDF; not read ({exc})") from exc
    except PdfReadError as exc:
        raise NotText(f"PDF not read ({(str(exc).splitlines() or [''])[0][:160]})") from exc
    return reader


def read_pdf(rel: str, data: bytes) -> Document:
    from pypdf.errors import PyPdfError

    reader = _pdf_reader(rel, data)
    total = len(reader.pages)
    sections, chars, partial, failed = [], 0, "", []
    for number in range(1, min(total, MAX_PAGES) + 1):
        try:
            raw = reader.pages[number - 1].extract_text() or ""
        except PyPdfError as exc:  # one broken page (a stream past pypdf's limits...) is left out
            failed.append(f"page {number} ({type(exc).__name__})")
            continue
        text = "\n".join(line.rstrip() for line in raw.split("\n"))
        text = re.sub(r"\n{3,}", "\n\n", text).strip()
        if chars + len(text) > MAX_CHARS:
            partial = f"pages {number}-{total} not read (over {MAX_CHARS:,} characters)"
            break
        chars += len(text)
        if text:
            sections.append(Section(f"page {number}", number, number, text))
    if total > MAX_PAGES and not partial:
        partial = f"pages {MAX_PAGES + 1}-{total} not read (over {MAX_PAGES:,} pages)"
    if failed:
        partial = "; ".join(filter(None, [partial, "not read: " + ", ".join(failed[:10])]))
    if not sections and failed:
        raise NotText(f"no page read ({', '.join(failed[:5])})")
    if not sections:
        raise NotText(f"no text layer in its {total} page(s) (a scanned or image-only PDF?); "
                      "not read (give it a PDF with text, e.g. after OCR)")
    return Document(sections, partial)


def check_zip(rel: str, data: bytes) -> None:
    """Refuse a .docx whose parts would unpack past MAX_UNPACKED bytes or number past MAX_PARTS,
    from the zip's directory alone (nothing is inflated)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            parts = archive.infolist()
    except zipfile.BadZipFile as exc:
        raise NotText(f"not a Word .docx file (not a zip archive: {exc})") from exc
    unpacked = sum(part.file_size for part in parts)
    if len(parts) > MAX_PARTS or unpacked > MAX_UNPACKED:
        raise NotText(f"{len(parts):,} parts unpacking to {unpacked:,} bytes, over the limit of "
                      f"{MAX_PARTS:,} parts / {MAX_UNPACKED:,} bytes (a zip bomb?); not read")


def heading_level(paragraph) -> int:
    """1-9 for a heading (Title is 1), 0 for body text: by the style's outline level, else its name."""
    style = paragraph.style
    if style is None:
        return 0
    level = style.element.xpath("./w:pPr/w:outlineLvl/@w:val")
    if level and str(level[0]).isdigit() and int(level[0]) < 9:
        return int(level[0]) + 1
    name = (style.name or "").strip()
    if name.lower() == "title":
        return 1
    match = _HEADING_RE.match(name)
    return int(match.group(1)) if match else 0


def _docx_lines(doc) -> list[tuple[int, str]]:
    """(heading level, Markdown line) per paragraph or table row, in document order."""
    from docx.table import Table

    lines = []
    for block in doc.iter_inner_content():
        if isinstance(block, Table):
            for row in block.rows:
                cells = [" ".join(cell.text.split()) for cell in row.cells]
                lines.append((0, "| " + " | ".join(cells) + " |"))
            continue
        text = " ".join(block.text.split())
        level = heading_level(block) if text else 0
        lines.append((level, f"{'#' * level} {text}" if level else text))
    return lines


def read_docx(rel: str, data: bytes) -> Document:
    import docx

    check_zip(rel, data)
    try:
        doc = docx.Document(io.BytesIO(data))
    except (KeyError, ValueError, zipfile.BadZipFile) as exc:  # BadZipFile: a part past its size
        raise NotText(f"not a Word .docx file ({type(exc).__name__}: {str(exc)[:160]})") from exc
    sections, path, current, first, chars, partial = [], [], [], 1, 0, ""
    lines = _docx_lines(doc)

    def close(last: int) -> None:
        body = "\n".join(current).strip()
        if body:
            sections.append(Section(" > ".join(path) or "start", first, last, body))

    for number, (level, line) in enumerate(lines, 1):
        chars += len(line) + 1
        if chars > MAX_CHARS:
            partial = f"paragraphs {number}-{len(lines)} not read (over {MAX_CHARS:,} characters)"
            break
        if level:
            close(number - 1)
            path[:] = path[:level - 1] + [line.lstrip("#").strip()]
            current, first = [], number
        current.append(line)
    else:
        number = len(lines) + 1
    close(number - 1)
    if not sections:
        raise NotText("no text in this Word file; not read")
    return Document(sections, partial)
