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


FRONTMATTER_MAX_BYTES = 64 * 1024
_MAX_VALUES = 10_000  # scalars a frontmatter may hold once its aliases are expanded


def expanded_size(value, budget: int = _MAX_VALUES) -> int:
    """Scalars in a loaded YAML value counting every alias again, stopping past `budget` (an
    alias bomb is small text that expands exponentially; walking it whole would never end)."""
    count, stack = 0, [value]
    while stack and count <= budget:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set)):
            stack.extend(item)
        else:
            count += 1
    return count


def parse_note(path: str, text: str, max_frontmatter_bytes: int = FRONTMATTER_MAX_BYTES) -> Note:
    """Text of a Markdown file -> Note (never raises on bad frontmatter: a frontmatter that does
    not parse, is not a mapping, is over `max_frontmatter_bytes` or expands past 10,000 values
    leaves the whole text as the body, with `warning` saying why)."""
    text = normalise_newlines(text)
    fm_text, body, body_start = split_frontmatter(text)
    if fm_text is None:
        return Note(path=path, body=text, text=text)
    try:
        if len(fm_text.encode("utf-8")) > max_frontmatter_bytes:
            raise ValueError(f"over {max_frontmatter_bytes:,} bytes (frontmatter_max_bytes)")
        metadata = _HANDLER.load(fm_text, Loader=_LOADER) or {}
        if not isinstance(metadata, dict):
            raise ValueError(f"frontmatter is a {type(metadata).__name__}, not a mapping")
        if expanded_size(metadata) > _MAX_VALUES:
            raise ValueError(f"expands past {_MAX_VALUES:,} values (YAML aliases)")
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
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
