"""What was said comes before the memory's restatement of it: a digest chunk the dream wrote
from turns ranks below those turns whenever they are candidates too (`recall.evidence`), and a
replaced value is never packed without the value that replaced it. Generated statements
(pseudo-words, seeded) so no word list of the code covers them."""

from __future__ import annotations

import os
import random
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
    for text in said:
        words = text.rstrip(".").split()
        question = " ".join([words[3], words[5], words[7]])  # thing, place, name
        results = search(settings, question, limit=10, explain=True).results
        turns = [n for n, r in enumerate(results) if r.path.startswith("session/") and words[3] in r.text]
        assert turns, (question, [r.path for r in results])  # the turn is found
        for n, r in enumerate(results):
            if not r.path.startswith("digest/"):
                continue
            places = set()
            for offset in range(r.start_line, r.end_line + 1):
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
