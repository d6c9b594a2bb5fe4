"""Notes: frontmatter parse and render (python-frontmatter's YAML handler with the C loader).

Every frontmatter key is preserved in order and type; YAML dates stay `datetime.date`. A note
whose frontmatter does not parse is still readable: its whole text is the body and `warning`
says why. The loader builds plain types only (null, bool, int, float, str, lists, mappings,
dates): any other tag (`!!binary`, `!!set`, `!!python/...`) or a timestamp that is no date
makes the frontmatter invalid, never an exception out of a job.
"""

from __future__ import annotations

import logging
import re

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
    if type(value) is dict and all(type(item) is str for item in (*value, *value.values())):
        # a mapping of strings (a note's usual frontmatter): what the walk below counts, at once
        count = 2 * len(value)
        if count > budget or (max_chars is not None and sum(map(len, value)) + sum(map(len, value.values())) > max_chars):
            return budget + 1
        return count
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


# A frontmatter line `key: value` whose value YAML reads as a string for certain: a key of word
# characters; a value double-quoted without escapes, single-quoted without quotes inside, or a
# plain scalar that starts with no indicator, holds no ": " or " #" and does not end in ":".
_SIMPLE_LINE_RE = re.compile(
    r'([A-Za-z_][A-Za-z0-9_-]{0,127}): +(?:"([^"\\]*)"|\'([^\']*)\'|'
    r'([^\s\-?:,\[\]{}#&*!|>\'"%@`](?:[^:#]|:(?=[^\s])|(?<=[^\s])#)*?)) *')
# what YAML reads otherwise, or refuses: control and non-printable characters, tabs, YAML's
# other line breaks (NEL, U+2028/9), a byte order mark, surrogates
_NOT_SIMPLE_RE = re.compile(r"[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def _simple_frontmatter(text: str) -> dict | None:
    """What the YAML loader gives for a frontmatter of `key: value` lines whose keys and values
    are strings (what notes written here hold), read without the loader (it cost ~8% of parsing
    a note); None for any other frontmatter, which the loader reads. A plain scalar is a string
    when none of the loader's implicit resolvers (null, bool, int, float, date...) matches it."""
    if not text or _NOT_SIMPLE_RE.search(text) or _LOADER.yaml_path_resolvers:
        return None
    resolvers = _LOADER.yaml_implicit_resolvers
    anywhere = resolvers.get(None, [])  # resolvers tried whatever a scalar starts with
    out: dict = {}
    for line in text.removesuffix("\n").split("\n"):
        match = _SIMPLE_LINE_RE.fullmatch(line)
        if match is None:
            return None
        key, double, single, plain = match.groups()
        for scalar in (key, plain) if plain is not None else (key,):
            first = resolvers.get(scalar[0])
            if (first or anywhere) and any(regexp.match(scalar) for _tag, regexp in (first or []) + anywhere):
                return None  # not a string: the loader builds it
        out[key] = plain if plain is not None else double if double is not None else single
    return out


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
        metadata = _simple_frontmatter(fm_text)
        if metadata is None:
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
