"""Shapes of Markdown notes, wikilinks and structural blocks."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Link:
    """One `[[target#anchor|label]]` occurrence; `line` is 1-based in the real file."""

    target: str
    anchor: str
    label: str
    line: int
    kind: str = "link"  # "link", or the key of a typed line such as `derived_from::`


@dataclass(frozen=True)
class Block:
    """A top-level Markdown block with 1-based inclusive lines of the real file."""

    kind: str  # heading, paragraph, list, table, fence, code, quote, html, other
    start: int
    end: int
    level: int = 0  # heading level
    items: tuple[int, ...] = ()  # first line of each list item


@dataclass
class Note:
    path: str
    metadata: dict = field(default_factory=dict)
    body: str = ""
    body_start: int = 1  # real-file line of the first body line
    text: str = ""  # whole text, CRLF normalised
    warning: str = ""  # set when the frontmatter could not be parsed

    @property
    def name(self) -> str:
        value = self.metadata.get("name")
        return "" if value is None else str(value)

    @property
    def description(self) -> str:
        value = self.metadata.get("description")
        return "" if value is None else str(value)

    @property
    def tags(self) -> list[str]:
        """Frontmatter `tags` as a list: a YAML list or a comma/space separated string."""
        return tag_list(self.metadata.get("tags"))


def tag_list(value: object) -> list[str]:
    """Tags as stored for search: each stripped of a leading `#`, lower case, no duplicates
    (a YAML list, a comma separated string such as `a, b`, or a single value)."""
    if value is None or isinstance(value, bool):
        return []
    items = value if isinstance(value, (list, tuple, set)) else str(value).replace(",", " ").split()
    out: list[str] = []
    for item in items:
        tag = str(item).strip().lstrip("#").strip().lower()
        if tag and tag not in out:
            out.append(tag)
    return out
