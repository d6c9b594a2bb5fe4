"""BM25 statistics come from the evidence: a dream's nodes (which restate daily lines) never
change how what was said scores; a node written by hand counts like any note. Generated
statements (pseudo-words, seeded) so no word list of the code covers them."""

from __future__ import annotations

import os
import random
from datetime import date, timedelta

import pytest
from helpers import capture_kept_things

from memflow.tasks.capture.conversation import auto_memory
from memflow.tasks.dream.nightly import run_dream
from memflow.tasks.evaluate.techchat_text import pseudo_words
from memflow.tasks.ground.workspace import layout
from memflow.tasks.index import run_index
from memflow.tasks.recall.hybrid import open_index
from memflow.tasks.stores import keyword

SEEDS = [int(s) for s in os.environ.get("MEMFLOW_SEEDS", "3,8").split(",")]


def evidence_scores(settings, queries: list[list[str]]) -> list[dict[str, float]]:
    """Per query: BM25 score of every matching chunk outside digest/, by chunk id."""
    index = open_index(layout(settings), settings)
    ids, layers = index.docs.column("id"), index.docs.column("layer")
    out = []
    for query in queries:
        hits = keyword.top_k(index, query, 10_000)
        out.append({ids[row].as_py(): score for row, score in hits if layers[row].as_py() != "digest"})
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_a_dream_never_reorders_what_was_said(settings, lay, seed):
    rng = random.Random(seed)
    names, things, places = pseudo_words(rng, 30), pseudo_words(rng, 60), pseudo_words(rng, 40)
    start = date(2026, 3, 2)
    statements = []
    for day in range(6):
        stamp = (start + timedelta(days=day)).isoformat()
        lines = [f"I keep my {rng.choice(things)} in {rng.choice(places).title()} with "
                 f"{rng.choice(names).title()}." for _ in range(rng.randint(4, 8))]
        statements += lines
        log = [{"id": f"d{day}-{n}", "role": "user", "timestamp": f"{stamp}T09:{n:02d}:00Z", "content": text}
               for n, text in enumerate(lines)]
        auto_memory(settings, log, f"s{day}")
    run_index(settings)
    vocab = open_index(lay, settings).retriever.vocab_dict
    words = sorted(t for t in vocab if t.isalpha())
    queries = [rng.sample(words, rng.randint(1, 3)) for _ in range(25)]
    before = evidence_scores(settings, queries)
    summary = run_dream(settings, start + timedelta(days=5))
    assert summary.units > 0 and list((lay.root / lay.digest).rglob("*.md"))  # the dream wrote nodes
    after = evidence_scores(settings, queries)
    assert after == before  # same chunks, same scores (bit for bit), so the same order

    # a note written by hand in digest/ (citing no evidence) is counted like any other note
    node = lay.root / lay.digest / "wiki" / "hand.md"
    node.write_text("# Hand\n\n" + " ".join(rng.choice(words) for _ in range(40)) + "\n", encoding="utf-8")
    run_index(settings)
    changed = evidence_scores(settings, queries)
    assert any(c != b for c, b in zip(changed, before))


@pytest.mark.parametrize("seed", SEEDS)
def test_a_digest_line_is_not_packed_after_the_turn_it_restates(settings, lay, seed):
    """A digest line cites a daily line, which cites the turn: once the turn is in the packed
    context, the digest line restating it is not packed again (reached through the index's
    links: `line_citations`); without following that second link the statement takes the
    budget twice. A digest line packs alone: the facts beside it are other facts."""
    from memflow.schemas.recall import Filters
    from memflow.tasks.ground.tokens import count_tokens
    from memflow.tasks.recall import hit_packer, line_citations, search, term_weights

    rng = random.Random(seed)
    things, places, names = pseudo_words(rng, 60), pseudo_words(rng, 30), pseudo_words(rng, 12)
    start = date(2026, 5, 4)
    said = capture_kept_things(settings, rng, things, places, names, start, 3, lambda: 10, ["Tarin", "Moleva"])
    run_index(settings)
    run_dream(settings, start + timedelta(days=2))
    cited = line_citations(settings)
    hidden = 0
    for text in rng.sample(said, 10):
        question = text.split()[3]  # the thing: said once
        weights = term_weights(settings, question)
        turn = search(settings, question, limit=1, filters=Filters(layer="session")).results
        fact = search(settings, question, limit=1, filters=Filters(layer="digest")).results
        assert turn and fact and question in turn[0].text and question in fact[0].text
        packs = {}
        for name, citations in (("with", cited), ("without", None)):
            blocks = hit_packer(turn + fact, weights, count_tokens, settings.keyword_tokenizer,
                                settings.pack_neighbours, citations=citations)(2000)
            packs[name] = dict(blocks)
        assert 0 in packs["with"] and 1 not in packs["with"], packs  # said once, by the turn
        digest_lines = [line for line in packs["without"][1].split("\n")[1:] if line.strip() != "…"]
        assert len(digest_lines) == 1 and question in digest_lines[0]  # the fact alone
        hidden += 1
    assert hidden == 10
