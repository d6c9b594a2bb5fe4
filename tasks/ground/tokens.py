"""Token counts in cl100k_base, from the encoding file bundled with litellm (offline).

litellm itself is not imported here (it takes seconds); only its bundled tiktoken cache is used.
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path

from memflow.tasks.ground.memo import memo


@lru_cache(maxsize=1)
def _encoding():
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("litellm is not installed: it carries the offline cl100k_base file")
    bundled = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(bundled))
    import tiktoken

    return tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    """cl100k tokens of `text`, special-token markers counted as the text they are (what
    `encode(text, disallowed_special=())` counts, without its special-token pass)."""
    return len(_encoding().encode_ordinary(text))


@memo(1 << 16)
def count_line_tokens(text: str) -> int:
    """`count_tokens`, remembered: packing counts the same candidate lines on every search."""
    return count_tokens(text)


def truncate_tokens(text: str, budget: int) -> str:
    """The longest prefix of `text` that fits `budget` tokens."""
    ids = _encoding().encode(text, disallowed_special=())
    return text if len(ids) <= budget else _encoding().decode(ids[: max(budget, 0)])


# No packed block costs fewer cl100k tokens than this: its header `[PATH:L1-L2]...` + "\n" is
# at least six pieces of the encoding's pre-tokenizer, each at least one token ("[" with the
# path's start, ":L", the first number, "-L", the second, "]" with the line end), and the one
# line under it is at least one (tests/test_monotone_packing.py checks it on random paths).
BLOCK_FLOOR = 7


@memo(1 << 16)
def block_floor(path: str) -> int:
    """The fewest cl100k tokens a packed block of a hit in `path` costs, never below
    `BLOCK_FLOOR`: its header starts `[PATH:L` and a line number follows, and the pre-tokenizer
    cuts the header there as it cuts that prefix alone (the `L` is a letter run, which stops at
    a digit; every earlier piece ends inside the prefix), so the prefix's tokens are the
    header's first ones; four more pieces follow (the first number, `-L`, the last number,
    `]`), then the line, at least one (tests/test_monotone_packing.py, on random paths)."""
    return max(BLOCK_FLOOR, count_line_tokens(f"[{path}:L") + 5)  # a header's own count reads it too


def least_tokens(text: str) -> int:
    """A lower bound of `count_tokens(text)` read without the encoding: the words of `text`
    between spaces (" ") that hold a character other than whitespace. Each pre-tokenizer
    piece is at least one token, and no piece holds characters of two such words: a piece has a
    space only first (" word", " ?!") or only whitespace, and a character Python does not call
    whitespace is no whitespace to the pre-tokenizer either (the reverse is not true, `\\x1c`,
    so the words are cut at spaces only). tests/test_monotone_packing.py checks it on random
    text of many scripts, digits, punctuation and control characters."""
    return sum(1 for word in text.split(" ") if word and not word.isspace())
