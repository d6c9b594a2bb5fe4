"""Shapes of search: filters, results with their links, the response."""

from __future__ import annotations

import datetime as dt
from datetime import date

from pydantic import BaseModel, Field, PrivateAttr


class Filters(BaseModel):
    """Applied inside each branch before its top-k."""

    layer: str | None = None  # "daily", "digest", "session" (transcripts) or "resource"
    prefix: str | None = None  # workspace path prefix
    # inclusive; a chunk's date is its note's (the path's), a transcript's first message's, or a
    # digest chunk's newest fact line's; digest chunks keep only the fact lines dated inside
    since: date | None = None
    until: date | None = None
    as_of: date | None = None  # memory as it stood that day: later facts hidden, replaced ones current
    kinds: tuple[str, ...] = ("note", "session")  # day-index pages are left out unless asked for
    # Lines the digest marks as replaced are labelled `(replaced DATE)` and a hit matching only
    # on them ranks below hits with current matches; True ranks them as if current
    superseded: bool = False
    tags: tuple[str, ...] = ()  # frontmatter tags a note must all carry (schemas.notes.tag_list)
    # chunks with a line said by this speaker (a transcript's `Name:`, a note's `- Name:` line or
    # `Said by Name` section); a speaker is metadata of a line, not a search word (ground.speakers)
    speaker: str | None = None


class LinkInfo(BaseModel):
    direction: str  # "out" or "in"
    path: str  # the neighbour
    line: int  # line of the link in its source file
    anchor: str = ""
    label: str = ""
    kind: str = "link"
    name: str = ""
    description: str = ""
    lines: str = ""  # out-link with a line anchor: the anchored lines; in-link: the citing line


class SearchResult(BaseModel):
    id: str
    path: str
    start_line: int
    end_line: int
    text: str
    score: float
    vector: float | None = None
    keyword: float | None = None
    heading_path: str = ""
    name: str = ""
    description: str = ""
    tags: list[str] = Field(default_factory=list)  # the note's frontmatter tags (schemas.notes.tag_list)
    date: dt.date | None = None  # the chunk's (recall.packing shows it when its lines do not)
    links: list[LinkInfo] = Field(default_factory=list)
    explain: dict | None = None
    # (the chunk's text as indexed, its per-line search terms): set by search, read by packing
    # (`recall.packing`) so a hit's lines are not tokenized again; never serialized
    _indexed: tuple[str, str] | None = PrivateAttr(default=None)


class SearchResponse(BaseModel):
    query: str
    results: list[SearchResult]
    watermark: dict
    vector_hits: int
    keyword_hits: int
    # what degraded the answer, one line each (e.g. the embedding endpoint failed: BM25 only)
    warnings: list[str] = []
    # with a token budget: the hits packed line by line into it (recall.packing), rank order
    packed: list[str] | None = None
    packed_tokens: int = 0
