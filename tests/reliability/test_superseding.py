"""Superseding per line and time at recall, black-box.

A line the digest replaced stays findable with the rest of its note, labelled and after the line
that replaced it; of undreamt lines answering the same question with different values, the
packed context (`search --budget 300`) states the newest first, and as of a day before the
change the old one. Subjects, predicates and values are pseudo-words drawn from a seeded
vocabulary of several hundred per slot, so no word list in the code can know them.
`MEMFLOW_RELIABILITY=full` runs more pairs.
"""

from __future__ import annotations

import json
import os
import random
from datetime import date, timedelta

import pytest
from harness import FULL, memflow

from memflow import api

pytestmark = pytest.mark.slow  # black-box CLI runs with dreams

PAIRS = 40 if FULL else 6
SEEDS = tuple(int(x) for x in os.environ["MEMFLOW_SEEDS"].split(",")) if os.environ.get("MEMFLOW_SEEDS") \
    else (20261202, 7177) if FULL else (20261202,)


def say(day: str, sid: str, *texts: str) -> list[dict]:
    return [{"id": f"{sid}-{n}", "role": "user", "timestamp": f"{day}T09:{n:02d}:00Z", "content": t}
            for n, t in enumerate(texts)]


def capture(ws, day: str, sid: str, *texts: str) -> None:
    res = memflow(ws, "capture", "-", "--session", sid, "--date", day, input=json.dumps(say(day, sid, *texts)))
    assert res.returncode == 0, res.stderr


def test_a_replaced_line_keeps_the_rest_of_its_note_findable_and_comes_after_its_replacement(tmp_path):
    ws = tmp_path / "ws"
    assert memflow(ws, "init").returncode == 0
    capture(ws, "2026-06-01", "h1", "I live in Berlin, near the Tiergarten.",
            "My bike lock trick: loop the chain through the rear wheel and the frame.")
    assert memflow(ws, "dream", "--date", "2026-06-01").returncode == 0
    capture(ws, "2026-06-09", "h2", "I moved from Berlin to Lisbon last week.")
    assert memflow(ws, "dream", "--date", "2026-06-09").returncode == 0
    assert memflow(ws, "index").returncode == 0
    tip = memflow(ws, "search", "bike lock trick")
    assert tip.returncode == 0 and "no results" not in tip.stdout
    assert "loop the chain through the rear wheel" in tip.stdout  # its note shares a replaced line
    for args in ((), ("--budget", "300")):
        home = memflow(ws, "search", "where do I live Berlin", *args).stdout
        old = "(replaced 2026-06-09)" if not args else "until 2026-06-09"  # packed: the digest's history line
        labelled = [line for line in home.splitlines() if old in line and "Lisbon" not in line]
        assert labelled and all("I live in Berlin" in line for line in labelled), home
        assert home.index("Lisbon") < home.index(labelled[0]), home
    packed = memflow(ws, "search", "where do I live Berlin", "--budget", "300").stdout
    assert packed.count("I live in Berlin") == 1, packed  # said once: a turn the history line holds is not packed again
    then = memflow(ws, "search", "where do I live Berlin", "--as-of", "2026-06-05", "--budget", "300").stdout
    assert "Berlin" in then and "Lisbon" not in then and "(replaced" not in then  # current then
    flagged = memflow(ws, "search", "where do I live Berlin", "--superseded").stdout
    assert "I live in Berlin" in flagged


def pseudo_words(rng: random.Random, n: int, taken: set[str], lang: str = "en") -> list[str]:
    """`n` new nonsense words, none in `taken`: pronounceable (3-4 syllables) in English, two
    random CJK ideographs in Chinese."""
    onsets, vowels = "bdfgklmnprstvz", "aeiou"
    out = []
    while len(out) < n:
        if lang == "zh":
            word = "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(2))
        else:
            word = "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.choice((3, 4))))
        if word not in taken:
            taken.add(word)
            out.append(word)
    return out


def generated_pairs(seed: int, lang: str = "en") -> list[tuple[str, str, str, str, date, date]]:
    """(subject, predicate, old value, new value, day said, day changed) drawn from 400 words per
    slot; both days random, the change 2-40 days later."""
    rng = random.Random(seed)
    taken: set[str] = set()
    subjects, predicates, values = (pseudo_words(rng, 400, taken, lang) for _ in range(3))
    pairs = []
    for s, p in zip(rng.sample(subjects, PAIRS), rng.sample(predicates, PAIRS)):
        old, new = rng.sample(values, 2)
        first = date(2026, 3, 1) + timedelta(days=rng.randrange(60))
        pairs.append((s, p, old, new, first, first + timedelta(days=rng.randrange(2, 40))))
    return pairs


FRAMES = {"en": ("The {s} {p} is {v}.", "Our {s} {p} is {v} now.", "For the {s}, the {p} is {v}."),
          "zh": ("{s}的{p}是{v}。", "我们{s}的{p}现在是{v}。")}
QUESTIONS = {"en": "What is the {s} {p}?", "zh": "{s}的{p}是什么？"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_newest_value_of_undreamt_notes_comes_first_and_as_of_gives_the_old_one(tmp_path, lang):
    for seed in SEEDS:
        ws = tmp_path / f"ws-{seed}"
        api.init(ws)
        pairs = generated_pairs(seed, lang)
        rng = random.Random(seed + 1)
        said: dict[date, list[str]] = {}
        for s, p, old, new, first, changed in pairs:
            said.setdefault(first, []).append(rng.choice(FRAMES[lang]).format(s=s, p=p, v=old))
            said.setdefault(changed, []).append(rng.choice(FRAMES[lang]).format(s=s, p=p, v=new))
        for n, (day, texts) in enumerate(sorted(said.items())):  # one conversation a day, several facts
            rng.shuffle(texts)
            api.capture(say(day.isoformat(), f"c{n}", *texts), f"c{n}", ws)
        api.index(ws)
        for n, (s, p, old, new, first, changed) in enumerate(pairs):
            question = QUESTIONS[lang].format(s=s, p=p)
            if n == 0:  # as a user would ask: the CLI
                now = memflow(ws, "search", question, "--budget", "300").stdout
                then = memflow(ws, "search", question, "--budget", "300", "--as-of", first.isoformat()).stdout
            else:
                now = "\n\n".join(api.search(question, ws, budget_tokens=300).packed)
                then = "\n\n".join(api.search(question, ws, budget_tokens=300, as_of=first).packed)
            assert new in now and (old not in now or now.index(new) < now.index(old)), (seed, question, now)
            assert old in then and (new not in then or then.index(old) < then.index(new)), (seed, question, then)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_value_changed_later_in_the_same_conversation_comes_first(tmp_path, lang):
    """Both values said in one conversation (one daily note, one transcript window): the one
    said later is packed first."""
    for seed in SEEDS:
        ws = tmp_path / f"ws-{seed}"
        api.init(ws)
        pairs = generated_pairs(seed + 3, lang)
        rng = random.Random(seed + 4)
        for n, (s, p, old, new, first, _changed) in enumerate(pairs):
            texts = [rng.choice(FRAMES[lang]).format(s=s, p=p, v=old),
                     rng.choice(FRAMES[lang]).format(s=s, p=p, v=new)]
            api.capture(say(first.isoformat(), f"c{n}", *texts), f"c{n}", ws)
        api.index(ws)
        for s, p, old, new, _first, _changed in pairs:
            now = "\n\n".join(api.search(QUESTIONS[lang].format(s=s, p=p), ws, budget_tokens=300).packed)
            assert new in now and (old not in now or now.index(new) < now.index(old)), (seed, now)
