"""Stage 2, index: one file's bytes -> its files row, chunk rows and link rows (pure Python).

What a file-parsing worker runs (`parallel`): it imports this module and what the rows are made
with (notes, chunking, terms), not numpy, Arrow or LanceDB, so that each worker holds about half
the memory; the calling process makes the Arrow batches (`indexing.ChunkBatches`).
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass, replace

from memflow.schemas.settings import Settings
from memflow.tasks.ground.convert import NotText, read_resource
from memflow.tasks.ground.guard import FileRefused, guarded, parse_markdown
from memflow.tasks.ground.markdown import latest_date, link_fields, searchable_text
from memflow.tasks.ground.secrets import mask_lines
from memflow.tasks.ground.speakers import (MARK, joined_words, line_terms, line_words, text_line_terms,
                                           text_line_words)
from memflow.tasks.ground.tokenize import tokenize
from memflow.tasks.ground.transcript import transcript_units
from memflow.tasks.ground.workspace import Layout, date_of, kind_of, layer_of
from memflow.tasks.index import chunking
from memflow.tasks.index.bounds import bound_rows, cut_warning
from memflow.tasks.stores.files import NotRegular, decode, read_regular

log = logging.getLogger("memflow.index")


def converted_source(data: bytes, converted) -> str:
    """The file's own text (what its line numbers count): the decoded bytes, frontmatter kept."""
    return data.decode(converted.encoding or "utf-8", errors="replace").removeprefix("\ufeff")



def chunk_id(path: str, start: int, end: int, text: str) -> str:
    return hashlib.sha256(f"{path}\0{start}\0{end}\0{text}".encode()).hexdigest()


def build_rows(lay: Layout, settings: Settings, rel: str, data: bytes, pipeline: str,
               warnings: dict[str, str] | None = None) -> tuple[dict, list[dict], list[dict]]:
    """One file's bytes -> (files row, chunk rows, link rows). Raises FileRefused when a
    Markdown file is past a limit; a caveat (frontmatter read as text) goes to `warnings`."""
    layer, kind, day = layer_of(lay, rel), kind_of(lay, rel), date_of(rel)
    if layer == "resource" and not rel.lower().endswith(".md"):
        return resource_rows(settings, rel, data, pipeline, kind, day)
    if layer == "session":
        return session_rows(settings, rel, data, pipeline)
    note = parse_markdown(rel, data, settings, settings.decode_errors)
    if note.warning and warnings is not None:
        warnings[rel] = f"{note.warning}; indexed as plain Markdown"
    chunks, tags = [], note.tags
    for n, piece in enumerate(chunking.chunk_markdown(note, settings.chunk_bytes)):
        name, desc = (note.name, note.description) if n == 0 else ("", "")
        if layer == "resource":  # the user's file stays as it is; what is indexed of it is masked
            piece = replace(piece, text=_masked(settings, piece.text), heading_path=_masked(settings, piece.heading_path))
            name, desc = _masked(settings, name), _masked(settings, desc)
        if layer == "digest":  # a digest chunk is as new as its newest fact line
            day = latest_date(piece.text) or date_of(rel)
        fields = [name, desc, " ".join(tags) if n == 0 else ""]
        joined = text_line_terms(piece.text, settings.keyword_tokenizer)
        # the fields' lines `field_weight` times over: their terms, tokenized once (no link spans lines)
        terms = line_terms(searchable_text("\n".join(fields)), settings.keyword_tokenizer) * settings.field_weight \
            if any(fields) else []
        terms.extend(joined.split())  # no term holds a space or a newline
        chunks.append({
            "id": chunk_id(rel, piece.start, piece.end, piece.text), "path": rel, "layer": layer,
            "kind": kind, "date": day, "start_line": piece.start, "end_line": piece.end,
            "heading_path": piece.heading_path, "text": piece.text, "name": name,
            "description": desc, "tags": tags, "terms": terms, "line_terms": joined,
        })
    links = [{"source": rel, "line": line, "target": target, "anchor": anchor, "label": label, "kind": kind}
             for line, target, anchor, label, kind in link_fields(note.text)]
    row = {"path": rel, "layer": layer, "kind": kind, "size": len(data), "mtime_ns": 0,
           "sha256": hashlib.sha256(data).hexdigest(), "pipeline": pipeline,
           "name": note.name, "description": note.description}
    return row, chunks, links


def resource_rows(settings: Settings, rel: str, data: bytes, pipeline: str, kind: str,
                  day) -> tuple[dict, list[dict], list[dict]]:
    """A text resource, whole: CSV by rows under their header, JSON/YAML/HTML by their converted
    text (results span the file), other text by byte windows with their line range, in whatever
    encoding it was saved; a PDF by pages (start/end line: page numbers, heading "page N"), a Word
    file by headings (start/end line: paragraph numbers). Content with no text gives no chunks."""
    name = rel.rsplit("/", 1)[-1]
    row = {"path": rel, "layer": "resource", "kind": kind, "size": len(data), "mtime_ns": 0,
           "sha256": hashlib.sha256(data).hexdigest(), "pipeline": pipeline, "name": name,
           "description": ""}
    try:
        converted = read_resource(rel, data, settings.decode_errors)
    except NotText as exc:  # binary, or a PDF with no text (encrypted, scanned): named, no chunks
        log.warning("%s is not indexed: %s", rel, str(exc).removeprefix(f"{rel}: "))
        return row, [], []
    if converted.document is not None:
        pieces = chunking.chunk_sections(converted.document.sections, settings.chunk_bytes)
    else:
        pieces = [(start, end, "", body) for start, end, body in
                  chunking.chunk_resource(rel, converted_source(data, converted), converted, settings.chunk_bytes)]
    chunks = []
    for n, (start, end, heading, body) in enumerate(pieces):
        # the user's file stays as it is; what is indexed of it is masked
        body, heading = _masked(settings, body), _masked(settings, heading)
        joined = text_line_terms(body, settings.keyword_tokenizer)
        terms = _resource_terms(name if n == 0 else "", body, joined, settings.keyword_tokenizer)
        chunks.append({
            "id": chunk_id(rel, start, end, body), "path": rel, "layer": "resource", "kind": kind,
            "date": day, "start_line": start, "end_line": end, "heading_path": heading, "text": body,
            "name": name if n == 0 else "", "description": "", "tags": [], "terms": terms,
            "line_terms": joined,
        })
    return row, chunks, []


def _masked(settings: Settings, text: str) -> str:
    return mask_lines(text, settings.mask_secrets, settings.secret_patterns)[0] if text else text


def _resource_terms(name: str, body: str, joined: str, kind: str) -> list[str]:
    """A resource chunk's keyword terms: its words (and the file's name in its first chunk),
    a speaker's name as a word. Its lines' terms (`joined`) are those words when they mark no
    speaker, and reading them off costs one split, not a second pass over millions of lines."""
    if MARK not in joined:
        return (tokenize(name, kind) if name else []) + joined.split()
    return tokenize(searchable_text(f"{name}\n{body}" if name else body), kind)


def session_rows(settings: Settings, rel: str, data: bytes, pipeline: str) -> tuple[dict, list[dict], list[dict]]:
    """A session log as its transcript: windows of whole turns, `Speaker: text` per log line (a
    message longer than `piece_bytes` in pieces), under `# Session <id>`; each window dated by
    its first message (workspace timezone)."""
    name = rel.rsplit("/", 1)[-1].removesuffix(".jsonl")
    row = {"path": rel, "layer": "session", "kind": "session", "size": len(data), "mtime_ns": 0,
           "sha256": hashlib.sha256(data).hexdigest(), "pipeline": pipeline, "name": name,
           "description": ""}
    units = transcript_units(decode(data, settings.decode_errors, rel), settings.timezone, settings.piece_bytes)
    days = {number: day for number, _, day in units}
    chunks = []
    for piece in chunking.chunk_transcript([(n, text[:settings.line_max_bytes]) for n, text, _ in units],
                                           f"# Session {name}", settings.chunk_bytes):
        day = next((days[n] for n in range(piece.start, piece.end + 1) if days.get(n)), None)
        heading = f"{piece.heading_path}, {day.isoformat()}" if day else piece.heading_path
        body = piece.text[len(piece.heading_path):]
        text = heading + body
        # found by what was said, not by the session's name; speakers marked
        words = text_line_words(body, settings.keyword_tokenizer, transcript=True)
        terms = [term for line in words for term in line]
        # stored per line of `text`: its first line is the heading with the body's first line
        words[0] = line_words(text.split("\n", 1)[0], settings.keyword_tokenizer, transcript=True)
        chunks.append({
            "id": chunk_id(rel, piece.start, piece.end, text), "path": rel, "layer": "session",
            "kind": "session", "date": day, "start_line": piece.start, "end_line": piece.end,
            "heading_path": heading, "text": text, "name": "", "description": "", "tags": [],
            "terms": terms, "line_terms": joined_words(words),
        })
    return row, chunks, []



def refused_row(lay: Layout, rel: str, data: bytes, pipeline: str) -> dict:
    """The files row of a file left out: no chunks, so it is tried again only when it changes."""
    return {"path": rel, "layer": layer_of(lay, rel), "kind": kind_of(lay, rel), "size": len(data),
            "mtime_ns": 0, "sha256": hashlib.sha256(data).hexdigest(), "pipeline": pipeline,
            "name": "", "description": ""}



def file_rows_of(lay: Layout, settings: Settings, rel: str, pipeline: str, skipped: dict[str, str],
                 warnings: dict[str, str]) -> tuple[dict, list[dict], list[dict]] | None:
    """One file inside a guard: its rows, or a refused row with the reason in `skipped`
    (None when the file is gone or unreadable: it is not recorded, so the next run looks again)."""
    path = os.path.join(lay.root, rel)  # a string: a Path made per file cost a cold index ~0.2 CPU s
    try:
        stat = os.stat(path)
        data = read_regular(path)  # never blocks: a FIFO put there since the scan is refused
    except NotRegular as exc:
        skipped[rel] = exc.reason
        return None
    except OSError as exc:
        skipped[rel] = f"cannot be read: {exc.strerror or exc}"
        return None
    try:
        row, chunks, links = guarded(rel, lambda: build_rows(lay, settings, rel, data, pipeline, warnings))
        cut = bound_rows([row]) | bound_rows(chunks) | bound_rows(links)
        if cut:  # LanceDB aborts the process on gigabyte columns: values are cut, not written
            warnings[rel] = "; ".join(w for w in (warnings.get(rel), cut_warning(cut)) if w)
            log.warning("%s: %s", rel, warnings[rel])
    except FileRefused as exc:
        skipped[rel] = str(exc)
        log.debug("%s is not indexed: %s", rel, exc)
        row, chunks, links = refused_row(lay, rel, data, pipeline), [], []
    row["mtime_ns"] = stat.st_mtime_ns
    return row, chunks, links


def joined_terms(terms: list[str]) -> str:
    """A chunk's terms as one string, split again in Arrow (`stores.lance.split_terms`): a cold
    index's millions of terms cross from a parsing worker as one string per chunk, not as one
    object each (pickling and unpickling them, then converting each to Arrow, cost a
    24,000-file index ~2 CPU seconds). Terms are tokenizer words: never empty, no spaces."""
    return " ".join(terms)


@dataclass
class ParsedPart:
    """Part of a run's files, parsed (`parse_part`): their chunk rows (terms `joined_terms`),
    files rows and link rows, the files left out or read with a caveat, and how many files the
    part named."""
    chunks: list[dict] | dict[str, list]  # rows, or columns once sent from a worker
    files: list[dict]
    links: list[dict] | dict[str, list]
    skipped: dict[str, str]
    warnings: dict[str, str]
    count: int

    def __getstate__(self) -> dict:
        """What a worker sends: chunk and link rows as columns (a list per field, not a dict
        per row: about half the time to pickle and a third to unpickle)."""
        return {**self.__dict__, "chunks": columns_of(self.chunks), "links": columns_of(self.links)}


def columns_of(rows: list[dict] | dict[str, list]) -> dict[str, list]:
    """Rows as columns: field -> values in row order (a field a row lacks: None); {} for none."""
    if isinstance(rows, dict):
        return rows
    fields: dict[str, None] = {}
    for row in rows:
        fields.update(dict.fromkeys(row))
    return {field: [row.get(field) for row in rows] for field in fields}


def parse_part(lay: Layout, settings: Settings, pipeline: str, part: list[str]) -> ParsedPart:
    """The rows of `part`'s files, each inside a guard (`file_rows_of`); runs in this process
    or in a worker (`parallel.Workers.map`)."""
    skipped: dict[str, str] = {}
    warnings: dict[str, str] = {}
    files, chunk_rows, links = [], [], []
    for rel in part:
        rows = file_rows_of(lay, settings, rel, pipeline, skipped, warnings)
        if rows is not None:
            files.append(rows[0])
            for chunk in rows[1]:
                chunk["terms"] = joined_terms(chunk["terms"])
            chunk_rows.extend(rows[1])
            links.extend(rows[2])
    return ParsedPart(chunk_rows, files, links, skipped, warnings, len(part))
