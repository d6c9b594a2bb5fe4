"""Notes: frontmatter parse and render (python-frontmatter's YAML handler with the C loader).

Every frontmatter key is preserved in order and type; YAML dates stay `datetime.date`. A note
whose frontmatter does not parse is still readable: its whole text is the body and `warning`
says why. The loader builds plain types only (null, bool, int, float, str, lists, mappings,
dates): any other tag (`!!binary`, `!!set`, `!!python/...`) or a timestamp that is no date
makes the frontmatter invalid, never an exception out of a job.
"""

from __future__ import annotations

import logging

import yaml
from frontmatter.default_handlers import YAMLHandler

from memflow.schemas.notes import Note
from memflow.tasks.ground.markdown import normalise_newlines, split_frontmatter

log = logging.getLogger("memflow.notes")
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class PlainLoader(_BASE_LOADER):  # type: ignore[misc,valid-type]
    """The safe loader restricted to the types a note needs."""


def _refuse_tag(loader, node):
    raise yaml.constructor.ConstructorError(None, None, f"tag {node.tag} is not allowed here "
                                            "(plain values, lists, mappings and dates only)",
                                            node.start_mark)


def _timestamp(loader, node):
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except (AttributeError, ValueError, TypeError, OverflowError) as exc:  # PyYAML: None.groupdict()
        raise yaml.constructor.ConstructorError(None, None, f"{node.value!r} is not a date or time",
                                                node.start_mark) from exc


for _tag in ("binary", "set", "omap", "pairs"):
    PlainLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse_tag)
PlainLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
PlainLoader.add_constructor(None, _refuse_tag)  # unknown tags
_LOADER = PlainLoader
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_HANDLER = YAMLHandler()


FRONTMATTER_MAX_BYTES = 64 * 1024
_WARNED: set[tuple[str, str]] = set()
_MAX_VALUES = 10_000  # scalars a frontmatter may hold once its aliases are expanded


def expanded_size(value, budget: int = _MAX_VALUES, max_chars: int | None = None) -> int:
    """Scalars in a loaded YAML value counting every alias again, stopping past `budget` (an
    alias bomb is small text that expands exponentially; walking it whole would never end).
    With `max_chars`, the walk also stops once the strings it met total more than that (a long
    string repeated through aliases) and returns `budget + 1`."""
    count, chars, stack = 0, 0, [value]
    while stack and count <= budget:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set)):
            stack.extend(item)
        else:
            count += 1
            chars += len(item) if isinstance(item, (str, bytes)) else 0
            if max_chars is not None and chars > max_chars:
                return budget + 1
    return count


def load_yaml(text: str):
    """A YAML document with the plain loader (yaml.YAMLError on a tag it does not build)."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - PlainLoader is a restricted SafeLoader


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
        if expanded_size(metadata, max_chars=max_frontmatter_bytes) > _MAX_VALUES:
            raise ValueError(f"expands past {_MAX_VALUES:,} values or {max_frontmatter_bytes:,} "
                             "characters (YAML aliases)")
    except (yaml.YAMLError, ValueError, TypeError, RecursionError, AttributeError) as exc:
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        said = (path, reason) in _WARNED  # a job reads a note several times: one warning each
        _WARNED.add((path, reason))
        (log.debug if said else log.warning)("%s: malformed frontmatter, read as plain Markdown (%s)",
                                             path, reason)
        return Note(path=path, body=text, text=text, warning=f"malformed frontmatter: {reason}")
    return Note(path=path, metadata=metadata, body=body, body_start=body_start, text=text)


def render_note(metadata: dict, body: str) -> str:
    """Frontmatter + body; keys keep their order. No frontmatter block when metadata is empty."""
    if not metadata:
        return body
    dumped = _HANDLER.export(metadata, Dumper=_DUMPER, sort_keys=False, width=10_000)
    return f"---\n{dumped}\n---\n{body}"
