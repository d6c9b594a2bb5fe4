"""Resource files -> clean text for their cards (pure). The one module that imports
beautifulsoup4 and markdownify.

HTML becomes Markdown (scripts, styles, navigation, headers, footers and forms dropped; headings,
lists, links and tables kept); a Markdown file's frontmatter becomes card fields, not text;
JSON/JSONL/YAML become `key.path: value` lines and CSV/TSV `column: value` rows; PDF and Word
files their text by page or heading (`documents`); binary content is refused. `read_resource`
takes a file's bytes in any encoding (`encoding`). `lines_match_file` says whether line N of the text is line N of the file (so a card may
link to `file#LN`).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

import yaml

from memflow.tasks.ground.documents import DOCUMENT_SUFFIXES, Document, read_document
from memflow.tasks.ground.encoding import NotText, decoded
from memflow.tasks.ground.markdown import split_frontmatter
from memflow.tasks.ground.notes import expanded_size, load_yaml, parse_note
from memflow.tasks.stores.files import DecodePolicy

DROPPED_TAGS = ("script", "style", "noscript", "template", "nav", "header", "footer", "aside",
                "form", "iframe", "svg", "canvas", "button")


TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".log", ".json", ".jsonl", ".csv", ".tsv", ".yaml",
                 ".yml", ".html", ".htm")
READABLE_SUFFIXES = TEXT_SUFFIXES + DOCUMENT_SUFFIXES


@dataclass
class Converted:
    text: str
    meta: dict = field(default_factory=dict)
    lines_match_file: bool = True
    first_line: int = 1  # file line of the text's first line (after frontmatter)
    encoding: str = "utf-8"  # what the file's bytes were read as ("" for a PDF or Word file)
    document: Document | None = None  # a PDF or Word file's pages or sections
    line_labels: list[str] = field(default_factory=list)  # per text line: where it is ("page 3")


def binary_reason(data: bytes) -> str:
    """Why the first 8 KiB are not text ("" when they are): NUL bytes, or more than 30% of
    the characters control characters or bytes that are not UTF-8 (random bytes: about 60%;
    a dense Latin-1 text in French or German: under 25%, still read)."""
    head = data[:8192]
    if b"\0" in head:
        return "binary content (NUL bytes)"
    if not head:
        return ""
    text = head.decode("utf-8", errors="replace")
    if len(head) == 8192:  # a character cut at the window's end is not a bad byte
        text = text[:-2]
    bad = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\f\r")
              or 0x7f <= ord(ch) < 0xa0)
    share = bad / max(1, len(text))
    return f"binary content ({share:.0%} control or non-UTF-8 bytes)" if share > 0.3 else ""


def looks_binary(data: bytes) -> bool:
    return bool(binary_reason(data))


def html_to_markdown(html: str) -> str:
    from bs4 import BeautifulSoup
    from markdownify import markdownify

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.find_all(DROPPED_TAGS):
        tag.decompose()
    body = soup.body or soup
    text = markdownify(str(body), heading_style="ATX", bullets="-", strip=["img"],
                       escape_underscores=False, escape_asterisks=False, escape_misc=False)
    lines = [line.rstrip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:  # at most one blank line in a row
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip() + "\n"


def _key_paths(value: object, prefix: str = "") -> list[str]:
    if isinstance(value, dict):
        return [line for k, v in value.items() for line in _key_paths(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list):
        return [line for n, v in enumerate(value) for line in _key_paths(v, f"{prefix}[{n}]")]
    return [f"{prefix}: {value}" if prefix else str(value)]


def convert(rel: str, text: str) -> Converted:
    """Text of a resource as a card should read it."""
    suffix = rel.rsplit(".", 1)[-1].lower()
    if suffix in ("html", "htm"):
        return Converted(html_to_markdown(text), lines_match_file=False)
    if suffix in ("md", "markdown"):
        front, body, first = split_frontmatter(text)
        meta = parse_note(rel, text).metadata if front is not None else {}
        return Converted(body, meta=meta, first_line=first)
    if suffix == "json":
        try:
            return Converted("\n".join(_key_paths(json.loads(text))), lines_match_file=False)
        except json.JSONDecodeError:
            return Converted(text)  # kept as it is: a broken JSON file is still text
    if suffix == "jsonl":
        lines = []
        for line in text.split("\n"):
            try:
                lines.append("; ".join(_key_paths(json.loads(line))) if line.strip() else "")
            except json.JSONDecodeError:
                lines.append(line)
        return Converted("\n".join(lines))  # one record per line: lines still match
    if suffix in ("yaml", "yml"):
        try:
            value = load_yaml(text)
        except (yaml.YAMLError, RecursionError):
            return Converted(text)
        budget = max(100_000, len(text))
        if expanded_size(value, budget) > budget:  # aliases that expand past the text: read as is
            return Converted(text)
        return Converted("\n".join(_key_paths(value)), lines_match_file=False)
    if suffix in ("csv", "tsv"):
        rows = list(csv.reader(io.StringIO(text), delimiter="\t" if suffix == "tsv" else ","))
        if len(rows) < 2:
            return Converted(text)
        header = rows[0]
        lines = [", ".join(header)] + ["; ".join(f"{h}: {v}" for h, v in zip(header, row) if v)
                                      for row in rows[1:]]
        return Converted("\n".join(lines))  # row N is file line N (no quoted newlines assumed)
    return Converted(text)


def read_resource(rel: str, data: bytes, policy: DecodePolicy = "replace", partial: bool = False) -> Converted:
    """A resource file's bytes -> its text as a card and the index read it. Raises NotText for
    content that is not text (binary, encrypted or scanned PDF...). `partial`: the bytes are the
    start of a larger text file."""
    if rel.lower().endswith(DOCUMENT_SUFFIXES):
        document = read_document(rel, data)
        labels = [s.label for s in document.sections for _ in range(s.text.count("\n") + 2)]
        return Converted(document.text, lines_match_file=False, encoding="", document=document,
                         line_labels=labels if rel.lower().endswith(".pdf") else [])
    text, encoding = decoded(data, policy, rel, partial)
    converted = convert(rel, text)
    converted.encoding = encoding
    return converted
