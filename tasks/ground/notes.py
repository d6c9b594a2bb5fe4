"""Notes: frontmatter parse and render (python-frontmatter's YAML handler with the C loader).

Every frontmatter key is preserved in order and type; YAML dates stay `datetime.date`. A note
whose frontmatter does not parse is still readable: its whole text is the body and `warning`
says why.
"""

from __future__ import annotations

import logging

import yaml
from frontmatter.default_handlers import YAMLHandler

from memflow.schemas.notes import Note
from memflow.tasks.ground.markdown import normalise_newlines, split_frontmatter

log = logging.getLogger("memflow.notes")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_HANDLER = YAMLHandler()


def parse_note(path: str, text: str) -> Note:
    """Text of a Markdown file -> Note (never raises on bad frontmatter)."""
    text = normalise_newlines(text)
    fm_text, body, body_start = split_frontmatter(text)
    if fm_text is None:
        return Note(path=path, body=text, text=text)
    try:
        metadata = _HANDLER.load(fm_text, Loader=_LOADER) or {}
        if not isinstance(metadata, dict):
            raise ValueError(f"frontmatter is a {type(metadata).__name__}, not a mapping")
    except (yaml.YAMLError, ValueError) as exc:
        reason = str(exc).splitlines()[0]
        log.warning("%s: malformed frontmatter, read as plain Markdown (%s)", path, reason)
        return Note(path=path, body=text, text=text, warning=f"malformed frontmatter: {reason}")
    return Note(path=path, metadata=metadata, body=body, body_start=body_start, text=text)


def render_note(metadata: dict, body: str) -> str:
    """Frontmatter + body; keys keep their order. No frontmatter block when metadata is empty."""
    if not metadata:
        return body
    dumped = _HANDLER.export(metadata, Dumper=_DUMPER, sort_keys=False, width=10_000)
    return f"---\n{dumped}\n---\n{body}"
