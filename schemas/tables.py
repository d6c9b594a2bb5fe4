"""Arrow schemas of the derived index tables under `metadata/index/` and the index summary."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from pydantic import BaseModel, Field

SCHEMA_VERSION = "5"  # 2: session transcripts, digest chunks dated by their fact lines; 3: tags;
# 4: no cl100k count per chunk (nothing searched or packed read it; analytics counts its own)
# 5: each line's search terms (`line_terms`), so packing does not tokenize a hit's lines again


@dataclass(frozen=True)
class CatalogFile:
    """A row of the `files` table: what the index knows of one file."""

    path: str
    size: int
    mtime_ns: int
    sha256: str
    pipeline: str

FILES = pa.schema([
    pa.field("path", pa.string(), nullable=False),
    pa.field("layer", pa.string()),
    pa.field("kind", pa.string()),
    pa.field("size", pa.int64()),
    pa.field("mtime_ns", pa.int64()),
    pa.field("sha256", pa.string()),
    pa.field("pipeline", pa.string()),
    pa.field("name", pa.string()),
    pa.field("description", pa.string()),
])

CHUNKS = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("path", pa.string()),
    pa.field("layer", pa.string()),
    pa.field("kind", pa.string()),
    pa.field("date", pa.date32()),
    pa.field("start_line", pa.int32()),
    pa.field("end_line", pa.int32()),
    pa.field("heading_path", pa.string()),
    pa.field("text", pa.string()),
    pa.field("name", pa.string()),  # frontmatter name/description: on the note's first chunk only
    pa.field("description", pa.string()),
    pa.field("tags", pa.list_(pa.string())),  # frontmatter tags (schemas.notes.tag_list), every chunk
    # per line of `text`, its search terms (`speakers.joined_words`: lines by newlines, terms by
    # spaces): what packing scores a line by, made once here rather than at every search
    pa.field("line_terms", pa.string()),
    pa.field("terms", pa.list_(pa.string())),  # keyword tokens, cached so BM25 rebuilds skip them
])

LINKS = pa.schema([
    pa.field("source", pa.string()),
    pa.field("line", pa.int32()),
    pa.field("target", pa.string()),
    pa.field("anchor", pa.string()),
    pa.field("label", pa.string()),
    pa.field("kind", pa.string()),
])


def vectors_schema(dims: int) -> pa.Schema:
    return pa.schema([
        pa.field("id", pa.string(), nullable=False),
        pa.field("text_sha", pa.string()),
        pa.field("model", pa.string()),
        pa.field("dims", pa.int32()),
        # copies of the chunk's filter columns, for reading the table on its own (search
        # filters use the snapshot's rows, see tasks/stores/keyword.py)
        pa.field("path", pa.string()),
        pa.field("layer", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("date", pa.date32()),
        pa.field("vector", pa.list_(pa.float32(), dims)),
    ])


class IndexSummary(BaseModel):
    added: int = 0
    modified: int = 0
    deleted: int = 0
    unchanged: int = 0
    chunks: int = 0  # chunks written by this run
    total_chunks: int = 0
    vectors: int = 0  # vectors embedded by this run
    keyword_rebuilt: bool = False
    seconds: float = 0.0
    # files left out (path -> one-line reason): this run's and earlier ones not changed since
    skipped: dict[str, str] = Field(default_factory=dict)
    warnings: dict[str, str] = Field(default_factory=dict)  # indexed, with a caveat (path -> why)

    def line(self) -> str:
        return (f"indexed: added={self.added} modified={self.modified} deleted={self.deleted} "
                f"unchanged={self.unchanged} chunks={self.chunks} seconds={self.seconds:.2f}"
                + (f" skipped={len(self.skipped)}" if self.skipped else ""))

    def problems(self) -> list[str]:
        """One line per file left out or read with a caveat, for the CLI and the inbox."""
        return ([f"skipped {path}: {why}" for path, why in sorted(self.skipped.items())]
                + [f"warning {path}: {why}" for path, why in sorted(self.warnings.items())])
