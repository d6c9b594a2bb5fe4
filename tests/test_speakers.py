"""Who said a line is metadata (filterable), not a search word, unless the query names them."""

import json
import os
import random

import pytest

from helpers import run_cli
from memflow import api
from memflow.tasks.evaluate.techchat_text import pseudo_words
from memflow.tasks.ground.speakers import MARK, line_terms, line_words, split_line, text_line_words
from memflow.tasks.ground.tokenize import tokenize, tokenize_lines

SEEDS = [int(x) for x in os.environ.get("MEMFLOW_SEEDS", "1,2,3").split(",")]  # MEMFLOW_SEEDS=...: others


@pytest.mark.parametrize("seed", SEEDS)
def test_a_label_is_a_marked_token_and_the_rest_of_the_line_its_words(seed):
    rng = random.Random(seed)
    name, other, *said = pseudo_words(rng, 8)
    who, other = name.capitalize(), other.capitalize()
    text = " ".join(said)
    assert split_line(f"{who}: {text}", transcript=True) == (who, text)
    assert split_line(f"- {who}: {text} [[session/dialog/x.jsonl#L3]]")[0] == who
    assert split_line(f"# Day > ## Said by {who} and {other}") == (f"{who} and {other}", "# Day > ## ")
    terms = line_terms(f"{who}: {text}", transcript=True)
    assert MARK + tokenize(who)[0] in terms and tokenize(who)[0] not in terms
    assert set(tokenize(text)) <= set(terms)
    assert line_terms(f"{who}: {text}") == tokenize(f"{who}: {text}")  # a note paragraph: words


def random_line(rng: random.Random, words: list[str]) -> str:
    """A line of pseudo-words mixed with what tokenizing treats specially: Han runs, digits,
    identifiers, underscores, punctuation, links, speaker labels, piece positions."""
    pieces = []
    for _ in range(rng.randrange(0, 14)):
        roll = rng.random()
        word = rng.choice(words)
        if roll < 0.12:
            pieces.append("".join(chr(rng.randrange(0x4E00, 0x4E40)) for _ in range(rng.randrange(1, 5))))
        elif roll < 0.2:
            pieces.append(f"{word}{rng.randrange(100)}_{rng.choice(words).capitalize()}")
        elif roll < 0.26:
            pieces.append(f"[[digest/wiki/{word}-{rng.choice(words)}.md]]")
        elif roll < 0.3:
            pieces.append(f"[[session/x.jsonl#L{rng.randrange(1, 40)}]]")
        elif roll < 0.4:
            pieces.append(rng.choice([",", ".", "!", "—", "(", ")", "`", "**", "9点"]))
        else:
            pieces.append(word.upper() if roll > 0.95 else word)
    line = " ".join(pieces)
    label = rng.random()
    if label < 0.2:
        return f"- {rng.choice(words).capitalize()}: {line}"
    if label < 0.3:
        return f"{rng.choice(words)} (L{rng.randrange(1, 99)} part 2/3): {line}"
    if label < 0.4:
        return f"# Day > ## Said by {rng.choice(words).capitalize()}"
    return line


@pytest.mark.parametrize("seed", SEEDS)
def test_a_text_is_tokenized_line_by_line_in_one_scan_as_each_line_alone(seed):
    rng = random.Random(seed)
    words = pseudo_words(rng, 400)
    for _ in range(200):
        lines = [random_line(rng, words) for _ in range(rng.randrange(1, 12))]
        assert tokenize_lines(lines) == [tokenize(line) for line in lines]
        text = "\n".join(lines)
        for transcript in (False, True):
            assert text_line_words(text, transcript=transcript) == [
                line_words(line, transcript=transcript) for line in lines]
    assert tokenize_lines(["", ""]) == [[], []]


def chat(rng: random.Random, vocab: list[str], user: str, assistant: str, turns: int) -> list[dict]:
    out = []
    for n in range(turns):
        mine = n % 2 == 0
        text = rng.choice(vocab) if mine and rng.random() < 0.5 else " ".join(rng.sample(vocab, 12))
        out.append({"role": "user" if mine else "assistant", "name": user if mine else assistant,
                    "content": text})
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_a_short_line_does_not_match_on_its_speakers_name(settings, seed):
    """`Vorla: hi` does not answer "where does vorla live": a session where Vorla only says hi
    ranks after every session that says "live", however rarely Vorla speaks (the issue's
    `user: hi` ranked second); the line saying where Vorla lives ranks first."""
    rng = random.Random(seed)
    vocab = pseudo_words(rng, 600)
    rare, left, right = (w.capitalize() for w in vocab[:3])
    place, verb, rest = vocab[3], vocab[4], vocab[5:]
    for s in range(6):
        if s == 0:  # the rare speaker's only session: one-word lines
            messages = [{"role": "user", "name": rare, "content": rng.choice(rest)} for _ in range(4)]
        else:
            messages = chat(rng, rest, left, right, 6)
            messages[1]["content"] += f" {verb}"  # the asked word, in many sessions
        if s == 3:
            messages[3]["content"] = f"{rare} {verb} near {place} these days"
        api.capture(messages, f"s{s}", workspace=settings)
    api.index(settings)
    results = api.search(f"where does {rare} {verb}", settings, limit=20, layer="session").results
    assert place in results[0].text
    order = [r.path.rsplit("/", 1)[-1] for r in results]
    assert "s0.jsonl" in order  # the rare speaker's lines still fill what is left
    assert all(verb in r.text for r in results[:order.index("s0.jsonl")])
    assert all(verb not in r.text for r in results[order.index("s0.jsonl"):])


@pytest.mark.parametrize("seed", SEEDS)
def test_speaker_filter_keeps_exactly_the_chunks_where_they_speak(settings, seed):
    rng = random.Random(seed)
    vocab = pseudo_words(rng, 500)
    names = [w.capitalize() for w in vocab[:4]]
    common = vocab[4]
    spoke: dict[str, set[str]] = {n: set() for n in names}
    for s in range(6):
        user, assistant = rng.sample(names, 2)
        messages = chat(rng, vocab[5:], user, assistant, 4)
        for m in messages:
            m["content"] += f" {common}"
        api.capture(messages, f"s{s}", workspace=settings)
        spoke[user].add(f"s{s}")
        spoke[assistant].add(f"s{s}")
    api.index(settings)
    for name in names:
        got = {r.path for r in api.search(common, settings, limit=100, layer="session", speaker=name).results}
        assert {p.rsplit("/", 1)[-1].removesuffix(".jsonl") for p in got} == spoke[name]
    assert api.search(common, settings, limit=10, speaker=vocab[-1]).results == []
    found = run_cli("-w", str(settings.workspace), "search", common, "--layer", "session", "--limit", "100",
                    "--speaker", names[0].lower(), "--json")  # any case: the name's tokens
    assert found.returncode == 0, found.stderr
    assert {r["path"].rsplit("/", 1)[-1].removesuffix(".jsonl")
            for r in json.loads(found.stdout)["results"]} == spoke[names[0]]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_query_naming_a_speaker_prefers_their_lines(settings, seed):
    rng = random.Random(seed)
    vocab = pseudo_words(rng, 500)
    first, second, third = (w.capitalize() for w in vocab[:3])
    topic, mine, theirs = vocab[3:6]
    for n, (who, value) in enumerate(((first, mine), (second, theirs))):
        filler = " ".join(rng.sample(vocab[6:], 10))
        messages = [{"role": "user", "name": who, "content": f"the {topic} goes with {value}"},
                    {"role": "assistant", "name": third, "content": filler}]
        api.capture(messages, f"s{n}", workspace=settings)
    api.index(settings)
    for n, (who, value) in enumerate(((first, mine), (second, theirs))):
        query = f"what did {who} say about the {topic}"
        ranked = api.search(query, settings, limit=5, layer="session").results
        assert ranked[0].path.endswith(f"/s{n}.jsonl"), [r.path for r in ranked]  # their session first
        assert value in "\n".join(api.search(query, settings, limit=5, layer="session",
                                             budget_tokens=250).packed)
