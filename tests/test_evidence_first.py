"""What was said comes before the memory's restatement of it: a digest chunk the dream wrote
from turns ranks below those turns whenever they are candidates too (`recall.evidence`), and a
replaced value is never packed without the value that replaced it. Generated statements
(pseudo-words, seeded) so no word list of the code covers them."""

from __future__ import annotations

import os
import random
import re
from datetime import date, timedelta

import pytest
from helpers import capture_kept_things

from memflow.tasks.dream.nightly import run_dream
from memflow.tasks.evaluate.techchat_text import pseudo_words
from memflow.tasks.index import run_index
from memflow.tasks.recall import line_citations, search
from memflow.tasks.recall.packing import context_of

SEEDS = [int(s) for s in os.environ.get("MEMFLOW_SEEDS", "5,11").split(",")]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_turns_a_digest_chunk_restates_rank_above_it(settings, lay, seed):
    rng = random.Random(seed)
    things, places, names = pseudo_words(rng, 80), pseudo_words(rng, 30), pseudo_words(rng, 12)
    start = date(2026, 7, 6)
    said = capture_kept_things(settings, rng, things, places, names, start, 4, lambda: rng.randint(6, 12))
    run_index(settings)
    run_dream(settings, start + timedelta(days=3))
    cited = line_citations(settings)
    compared = raised = 0
    # each statement's thing, place and name; and two statements' things and places at once
    # (a digest chunk holding both facts ranks with them, whichever turn holds each)
    asked = [(" ".join(w[3:8:2]), w[3]) for w in (t.rstrip(".").split() for t in said)]
    asked += [(" ".join([*a[3:6:2], *b[3:6:2]]), a[3]) for a, b in
              (tuple(t.rstrip(".").split() for t in pair) for pair in zip(said, said[1:]))]
    for question, thing in asked:
        results = search(settings, question, limit=10, explain=True).results
        turns = [n for n, r in enumerate(results) if r.path.startswith("session/") and thing in r.text]
        assert turns, (question, [r.path for r in results])  # the turn is found
        for n, r in enumerate(results):
            if not r.path.startswith("digest/"):
                continue
            places = set()
            for offset in range(r.start_line, r.end_line + 1):  # the facts sharing a word with the question
                if not _words(question) & _fact_words(settings, r.path, offset):
                    continue
                for path, line in cited(r.path, offset):
                    places |= cited(path, line) if path.startswith("daily/") else set()
            below = [m for m, e in enumerate(results) if m > n and e.path.startswith("session/")
                     and any(p == e.path and e.start_line <= q <= e.end_line for p, q in places)]
            assert not below, (question, r.path, [results[m].path for m in below])
            compared += bool(places)
        named = {f"{r.path}:{r.start_line}-{r.end_line}": n for n, r in enumerate(results)}
        for n, r in enumerate(results):  # a raised turn says why, and stands above that chunk
            if r.explain.get("restated_by"):
                assert r.explain["restated_by"].startswith("digest/")
                assert named.get(r.explain["restated_by"], len(results)) > n
                raised += 1
    assert compared + raised > 0  # digest chunks citing turns were met and checked


@pytest.mark.parametrize("seed", SEEDS)
def test_only_the_facts_the_question_matches_raise_their_turns(settings, lay, seed):
    """A digest chunk found by its node's name (or its facts' dates) restates nothing the
    question asked: it raises no turn. Of a chunk dated inside the window a question names,
    only facts dated inside it raise theirs."""
    rng = random.Random(seed * 7919 + 1)
    things, places, names = pseudo_words(rng, 90), pseudo_words(rng, 30), pseudo_words(rng, 12)
    speakers = [w.title() for w in pseudo_words(rng, 2)]
    start = date(2026, 3, 2)
    said = capture_kept_things(settings, rng, things, places, names, start, 5, lambda: rng.randint(5, 9), speakers)
    run_index(settings)
    run_dream(settings, start + timedelta(days=4))
    cited = line_citations(settings)
    questions = [f"What about {speaker}?" for speaker in speakers]
    questions += [f"What did {speaker} keep on {start + timedelta(days=d):%B %-d, %Y}?"
                  for speaker in speakers for d in range(5)]
    questions += [" ".join(text.rstrip(".").split()[3:6:2]) for text in rng.sample(said, 8)]
    raised = 0
    for question in questions:
        results = search(settings, question, limit=12, explain=True).results
        named = {f"{r.path}:{r.start_line}-{r.end_line}": r for r in results}
        for r in results:
            by = r.explain.get("restated_by")
            if not by:
                continue
            chunk = named[by]
            window = chunk.explain["time_window"]
            inside = window and window[0] <= (chunk.explain["date"] or "") <= window[1]
            raising = set()  # the lines of the turn cited by facts that match (and are in time)
            for offset in range(chunk.start_line, chunk.end_line + 1):
                day = _fact_day(settings, chunk.path, offset)
                if not _words(question) & _fact_words(settings, chunk.path, offset) \
                        or (inside and not (day and window[0] <= day <= window[1])):
                    continue
                for path, line in cited(chunk.path, offset):
                    raising |= {q for p, q in cited(path, line) if p == r.path} if path.startswith("daily/") else set()
            assert any(r.start_line <= q <= r.end_line for q in raising), (question, by, r.path, r.start_line)
            raised += 1
    assert raised > 0  # turns were raised, each by a fact that matches


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", re.sub(r"\[\[[^\]]*\]\]", " ", text).casefold())) - {"what", "about", "did", "on"}


def _fact_line(settings, path: str, number: int) -> str:
    lines = (settings.workspace / path).read_text(encoding="utf-8").split("\n")
    return lines[number - 1] if number <= len(lines) else ""


def _fact_words(settings, path: str, number: int) -> set[str]:
    """A digest fact's own words: not its date, not its links."""
    return _words(re.sub(r"^- \d{4}-\d{2}-\d{2}: ", "", _fact_line(settings, path, number)))


def _fact_day(settings, path: str, number: int) -> str | None:
    found = re.match(r"^- (\d{4}-\d{2}-\d{2}): ", _fact_line(settings, path, number))
    return found.group(1) if found else None


def test_a_replaced_value_packs_with_the_value_that_replaced_it():
    text = "\n".join([
        "# The user – home",
        "- 2026-05-10: I moved from Vantor to Quelle last week. [[daily/2026-05-10/a.md#L4]]",
        "  - until 2026-05-10: I live in Vantor near the river. [[daily/2026-05-06/b.md#L4]]",
        "  - until 2026-04-01: I live in Ostrum. [[daily/2026-04-01/c.md#L4]]",
        "- 2026-05-08: My cat Peri is four. [[daily/2026-05-08/d.md#L4]]",
    ])
    assert context_of(text, 2, 1) == [1, 2]  # the old value with the current one
    assert context_of(text, 3, 1) == [1, 3]  # however far down the history it is
    assert context_of(text, 1, 1) == [1, 2]  # a fact with its own history (up to `neighbours`)
    assert context_of(text, 4, 1) == [4]  # another fact: alone
