"""The line scanner finds the top-level blocks mistletoe finds (kind, first line, heading level,
list item lines) on generated Markdown mixing every block construct and its edge cases, or
leaves the text to mistletoe (block quotes, link reference definitions)."""

from __future__ import annotations

import os
import random

import pytest

from memflow.tasks.ground.blockscan import scan
from memflow.tasks.ground.markdown import _parsed, blocks, lines_with_ends

SEEDS = [int(s) for s in os.environ.get("MEMFLOW_SEEDS", "1,2,3,4,5").split(",")]
SYLLABLES = "ka lo mi nu ze ra to vi sa pe qu dor lin mar fex".split()


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3)))


def text(rng: random.Random) -> str:
    return " ".join(word(rng) for _ in range(rng.randint(1, 6)))


def line(rng: random.Random, tricky: bool) -> str:
    """One source line: mostly plain constructs, with `tricky` every edge a block may have."""
    plain = [
        lambda: "", lambda: text(rng), lambda: text(rng) + " [[" + word(rng) + ".md]]",
        lambda: "#" * rng.randint(1, 6) + " " + text(rng), lambda: f"- {text(rng)}",
        lambda: f"* {text(rng)}", lambda: f"{rng.randint(1, 3)}. {text(rng)}",
        lambda: f"| {word(rng)} | {rng.randint(1, 99)} |", lambda: "|---|---|",
        lambda: "```" + rng.choice(["", "python", "sh"]), lambda: "~~~", lambda: f"  {text(rng)}",
        lambda: f"  - {text(rng)}", lambda: f"    {text(rng)}", lambda: "---", lambda: "===",
    ]
    edges = [
        lambda: "    ", lambda: "\t" + text(rng), lambda: "   " + "#" * rng.randint(1, 7) + text(rng),
        lambda: "#" + word(rng), lambda: "#######", lambda: "# " + text(rng) + " ##",
        lambda: "- - -", lambda: "* * *", lambda: "___", lambda: "-", lambda: "- ", lambda: "+ " + text(rng),
        lambda: "1) " + text(rng), lambda: ". " + text(rng), lambda: "10. " + text(rng),
        lambda: "-      " + text(rng), lambda: "``` x `y`", lambda: "````", lambda: "   ```",
        lambda: "```" + word(rng), lambda: "a | b", lambda: ":---|---:", lambda: "| x |", lambda: "   - " + text(rng),
        lambda: "> " + text(rng), lambda: "[" + word(rng) + "]: /url", lambda: "[[" + word(rng) + "]] " + text(rng),
        lambda: "[" + word(rng) + "] " + text(rng), lambda: "<div>", lambda: "<!-- " + word(rng) + " -->",
        lambda: "      " + text(rng), lambda: "\t- " + text(rng), lambda: "--", lambda: "  ===  ",
        lambda: "中文" + word(rng),
    ]
    pool = plain + edges if tricky else plain
    return rng.choice(pool)()


def document(rng: random.Random, tricky: bool) -> list[str]:
    return lines_with_ends([line(rng, tricky) for _ in range(rng.randint(1, 40))])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("tricky", [False, True])
def test_scan_finds_the_blocks_mistletoe_finds(seed, tricky):
    rng = random.Random(seed * 7919 + tricky)
    scanned = 0
    for _ in range(600):
        src = document(rng, tricky)
        found = scan(src)
        if found is not None:
            scanned += 1
            assert found == _parsed(src), "".join(src)
    assert scanned > 400  # quotes and reference definitions are rare: most texts are scanned


def test_quotes_and_reference_definitions_are_left_to_mistletoe():
    assert scan(lines_with_ends(["para", "> quoted"])) is None
    assert scan(lines_with_ends(["[label]: /url", "", "text"])) is None
    assert scan(lines_with_ends(["[[a-link]] and text"])) is not None
    body = "intro\n> quoted line\n\n[ref]: /url\n\n# Heading\ntext"
    assert [b.kind for b in blocks(body)] == ["paragraph", "quote", "heading", "paragraph"]
