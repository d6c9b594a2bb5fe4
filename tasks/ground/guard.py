"""Per-file isolation: one file that cannot be read, parsed or chunked is left out with a
one-line reason; the job goes on with every other file.

`check_markdown` enforces the limits that protect memory and the parser's recursion before
anything parses the file; `guarded` turns whatever a file's processing raises into `FileRefused`
with a reason a person can act on (the traceback goes to the debug log only).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

from memflow.schemas.notes import Note
from memflow.schemas.settings import Settings
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.stores.files import DecodeError, DecodePolicy, NotRegular, decode

log = logging.getLogger("memflow.guard")
T = TypeVar("T")
_LIST_ITEM_RE = re.compile(r"^([ \t]*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_QUOTES_RE = re.compile(r"^[ \t]*((?:>[ \t]*)+)")
_JSON_STRING_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')  # unrolled: linear and fast
_NOT_BRACKET_RE = re.compile(r"[^\[\]{}]+")
JSON_MAX_DEPTH = 100  # a message is 3-6 deep; the json module recurses per level


class FileRefused(Exception):
    """A file a job leaves out; `str()` is the one-line reason."""


def nesting_depth(line: str) -> int:
    """How deep a line nests lists and block quotes (what the Markdown parser recurses on)."""
    quotes = _QUOTES_RE.match(line)
    depth = quotes.group(1).count(">") if quotes else 0
    rest = line[quotes.end():] if quotes else line
    item = _LIST_ITEM_RE.match(rest)
    if item:
        depth += len(item.group(1).expandtabs(4)) // 2 + 1
    return depth


def json_depth(text: str) -> int:
    """How deep a JSON text nests arrays and objects (strings skipped), without parsing it:
    one regex pass removes strings, a second keeps only brackets."""
    depth = deepest = 0
    for char in _NOT_BRACKET_RE.sub("", _JSON_STRING_RE.sub("", text)):
        depth += 1 if char in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def check_json_depth(text: str, name: str, max_depth: int = JSON_MAX_DEPTH) -> None:
    """ValueError naming the input when a JSON text nests deeper than `max_depth` (the json
    module would raise RecursionError)."""
    depth = json_depth(text)
    if depth > max_depth:
        raise ValueError(f"{name}: JSON nested {depth:,} levels deep, over the limit of {max_depth}; "
                         "give a list of message objects")


def check_markdown(data: bytes, settings: Settings) -> None:
    """Raise FileRefused when a Markdown file is past a limit (size, line length, nesting)."""
    if len(data) > settings.note_max_bytes:
        raise FileRefused(f"{len(data):,} bytes is over note_max_bytes ({settings.note_max_bytes:,})")
    longest = max(map(len, data.split(b"\n")), default=0)
    if longest > settings.line_max_bytes:
        raise FileRefused(f"a line of {longest:,} bytes is over line_max_bytes ({settings.line_max_bytes:,})")
    if _may_nest(data, settings.nesting_max_depth):
        for number, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
            if len(line) > settings.nesting_max_depth and nesting_depth(line) > settings.nesting_max_depth:
                raise FileRefused(f"line {number} nests lists/quotes {nesting_depth(line)} deep, over "
                                  f"nesting_max_depth ({settings.nesting_max_depth})")


def _may_nest(data: bytes, max_depth: int) -> bool:
    """Whether a line of `data` may nest deeper than `max_depth` (`nesting_depth`): only one
    with list or quote markers and a run of at least `max_depth // 2` spaces, tabs and `>` at its
    start can (each of those adds at most 2 levels, the item 1), looked for in one scan."""
    if not (b">" in data or b"- " in data or b"* " in data or b"+ " in data or b". " in data or b") " in data):
        return False
    return _deep_start(max_depth).search(data) is not None


@lru_cache(maxsize=8)
def _deep_start(max_depth: int) -> re.Pattern:
    return re.compile(rb"^[ \t>]{%d}" % (max_depth // 2), re.MULTILINE)


def parse_markdown(rel: str, data: bytes, settings: Settings, policy: DecodePolicy = "replace") -> Note:
    """A Markdown file's bytes -> Note, within the limits (raises FileRefused past one)."""
    check_markdown(data, settings)
    return parse_note(rel, decode(data, policy, rel), settings.frontmatter_max_bytes)


def guarded(rel: str, work: Callable[[], T]) -> T:
    """Run one file's work; anything it raises becomes FileRefused with a one-line reason."""
    try:
        return work()
    except FileRefused:
        raise
    except NotRegular as exc:  # FIFO, folder, broken link, link loop, over a size limit
        raise FileRefused(exc.reason) from exc
    except RecursionError as exc:
        raise FileRefused("nested too deep to parse") from exc
    except MemoryError as exc:
        raise FileRefused("too large to process in memory") from exc
    except (DecodeError, ValueError) as exc:  # our own one-line errors say it already
        if isinstance(exc, (DecodeError,)) or type(exc).__module__.startswith("memflow."):
            raise FileRefused(str(exc)) from exc
        raise FileRefused(f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}") from exc
    except OSError as exc:
        raise FileRefused(f"cannot be read: {exc.strerror or exc}") from exc
    except Exception as exc:  # one bad file must not fail the run; the reason is reported
        log.debug("%s failed", rel, exc_info=True)
        first = (str(exc).splitlines() or [""])[0][:200]
        raise FileRefused(f"{type(exc).__name__}: {first}" if first else type(exc).__name__) from exc
