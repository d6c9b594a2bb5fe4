"""Long messages and lines in pieces (issue #28): a reply longer than a packing unit is indexed
and packed as pieces that each say who spoke, where and which part; code stays verbatim and
never keeps a turn out; a note or resource line longer than the chunk budget is cut after
sentences. A turn is hidden only when a note line in the context holds all of its text."""

import json
import os
import random
import re

import pytest

from memflow import api
from memflow.schemas.notes import Note
from memflow.schemas.recall import SearchResult
from memflow.tasks.ground.pieces import LINE_END, line_pieces, message_pieces
from memflow.tasks.ground.tokens import count_tokens
from memflow.tasks.ground.transcript import piece_of, transcript_units
from memflow.tasks.index.chunking import chunk_bytes, chunk_markdown
from memflow.tasks.recall import packer

SEEDS = [int(x) for x in os.environ.get("MEMFLOW_SEEDS", "5,23,47").split(",")]
SYLLABLES = ["ba", "ce", "di", "fo", "gu", "ha", "ji", "ko", "lu", "ma", "ne", "po", "ri", "su", "tra"]


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4)))


def sentence(rng: random.Random, n: int | None = None) -> str:
    return " ".join(word(rng) for _ in range(n or rng.randint(4, 30))).capitalize() + rng.choice(".!?")


def code_block(rng: random.Random, lines: int) -> str:
    body = [f"{'    ' * rng.randint(0, 2)}{word(rng)}({word(rng)}, {rng.randint(0, 999)})  # {word(rng)}"
            for _ in range(lines)]
    return "\n".join(["```python", *body, "```"])


def long_reply(rng: random.Random) -> tuple[str, list[str]]:
    """A Markdown reply: paragraphs, a list, code blocks; and its code blocks."""
    parts, codes = [], []
    for _ in range(rng.randint(3, 7)):
        kind = rng.random()
        if kind < 0.4:
            parts.append(" ".join(sentence(rng) for _ in range(rng.randint(1, 8))))
        elif kind < 0.6:
            parts.append("\n".join(f"- {sentence(rng)}" for _ in range(rng.randint(2, 6))))
        else:
            codes.append(code_block(rng, rng.randint(2, 60)))
            parts.append(codes[-1])
    return "\n\n".join(parts), codes


@pytest.mark.parametrize("seed", SEEDS)
def test_a_long_message_is_pieces_within_the_budget_with_its_words_in_order_and_code_verbatim(seed):
    rng = random.Random(seed)
    for _ in range(30):
        text, codes = long_reply(rng)
        budget = rng.choice([160, 300, 600])
        pieces = message_pieces(text, budget)
        assert all(len(p.text.encode()) <= budget for p in pieces)
        prose = [p.text for p in pieces if not p.code]
        code = [line for p in pieces if p.code for line in p.text.split(LINE_END)]
        # the words in order (prose whitespace collapsed, list bullets kept)
        assert " ".join(prose).split() == re.sub(r"```.*?```", " ", text, flags=re.S).split()
        # every code line is in a piece as it was written (indentation kept), in order
        assert code == [line for c in codes for line in c.split("\n")]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_long_line_is_cut_after_sentences_and_the_parts_give_it_back(seed):
    rng = random.Random(seed)
    for _ in range(30):
        line = " ".join(sentence(rng) for _ in range(rng.randint(20, 200)))
        budget = rng.choice([200, 500, 1000])
        parts = line_pieces(line, budget)
        assert "".join(parts) == line and all(len(p.encode()) <= budget for p in parts)
        assert all(p.rstrip()[-1] in ".!?" for p in parts[:-1] if len(p.encode()) < budget - 200)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_note_line_of_kilobytes_is_chunks_of_the_budget(seed):
    rng = random.Random(seed)
    line = " ".join(sentence(rng) for _ in range(150))  # 6-12 kB on one line
    text = f"# Title\n\n## Notes\n\nshort first line\n\n{line}\n\nlast line\n"
    chunks = chunk_markdown(Note(path="daily/2026-01-02/x.md", text=text, body=text, body_start=1), 1000)
    parts = [c for c in chunks if "of L7]" in c.text]
    assert len(parts) > 5 and all(len(c.text.encode()) <= 1000 for c in chunks)
    assert all(c.start == c.end == 7 for c in parts)
    assert "".join(c.text.split("\n")[-1] for c in parts) == line
    windows = chunk_bytes(line, 1000)
    assert all(w[2].rstrip()[-1] in ".!?" for w in windows[:-1])  # resources: after sentences too


def write_log(ws, sid: str, messages: list[dict]) -> None:
    api.capture(messages, sid, ws)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_a_long_reply_is_packed_in_pieces_naming_speaker_line_and_part_and_code_never_keeps_a_turn_out(tmp_path, seed):
    rng = random.Random(seed)
    ws = tmp_path / "ws"
    api.init(ws)
    topic = word(rng) + "zor"
    reply = "\n\n".join([f"The {topic} answer: {sentence(rng, 20)}", code_block(rng, 80),
                         sentence(rng, 40), code_block(rng, 40), f"So {topic} works. {sentence(rng, 10)}"])
    fact = f"my {topic} runs version {rng.randint(2, 9)}.{rng.randint(0, 9)} on {word(rng)}"
    messages = [{"role": "user", "content": f"What about {topic}? {sentence(rng)}"},
                {"role": "assistant", "content": reply},
                {"role": "user", "content": f"Noted: {fact}."}]
    write_log(ws, "chat-1", messages)
    api.index(ws)
    log = (ws / "session/dialog/chat-1.jsonl").read_text()
    units = transcript_units(log, "UTC", 600)
    pieces = [(n, text) for n, text, _ in units if piece_of(text)]
    assert len(pieces) > 5 and all(len(t.encode()) <= 600 for _, t in pieces)
    assert all(t.startswith(f"assistant (L{n} part ") for n, t in pieces)
    for budget in (250, 500, 1000):
        packed = "\n".join(api.search(f"{topic} version", ws, limit=10, budget_tokens=budget).packed or [])
        assert fact in packed, budget  # the user's turn is packed, however long the listing is
        assert re.search(rf"assistant \(L\d+ part \d+/{len(pieces)}[,)]", packed)


def result(path: str, start: int, lines: list[str], heading: str) -> SearchResult:
    return SearchResult(id=path, path=path, start_line=start, end_line=start + len(lines) - 1,
                        text="\n".join([heading, *lines]), score=1.0)


def test_a_turn_is_hidden_only_behind_a_note_line_holding_all_of_its_text():
    turn = "Caroline: I went to the support group yesterday and it was so powerful to hear them"
    log = "session/dialog/s1.jsonl"
    quoting = result("daily/2026-05-08/s1.md", 4,
                     ["- Caroline went to the support group yesterday [[session/dialog/s1.jsonl#L3]]"], "## Facts")
    holding = result("daily/2026-05-08/s2.md", 4,
                     [f"- {turn} [[session/dialog/s1.jsonl#L3]]"], "## Facts")
    transcript = result(log, 2, ["Melanie: hi", turn], "# Session s1, 2026-05-08")
    weights = {"support": 2.0, "group": 1.5}
    quoted = "\n".join(packer([quoting, transcript], weights, count_tokens)(1000))
    assert turn in quoted  # the note quotes part of it: the turn's own words are packed
    held = packer([holding, transcript], weights, count_tokens)(1000)
    assert sum(turn in block for block in held) == 1  # the note line says all of it: shown once
