"""BM25 top-k (stores.keyword.top_k) looks at the rows above a sampled floor only: on generated
corpora with Zipf-like words, duplicate documents (ties), filter masks, dead rows, per-row
factors with ties and token weights, it returns exactly the k best by score x factor, ties by
row (at the k-th place too), as ranking every matching row does."""

from __future__ import annotations

import os
import random
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest

from memflow.tasks.stores import keyword
from memflow.tasks.stores.postings import Postings, bm25_parts

SEEDS = [int(s) for s in os.environ.get("MEMFLOW_SEEDS", "3,19").split(",")]


def reference(post: Postings, tokens, k, mask, alive, weights, factor):
    scores = np.asarray(post.get_scores(tokens, weights) if weights else post.get_scores(tokens), dtype=np.float32)
    rows = [r for r in range(len(scores)) if scores[r] > 0 and (mask is None or mask[r]) and (alive is None or alive[r])]
    ranked = {r: (float(scores[r]) if factor is None else float(np.float64(scores[r]) * factor[r])) for r in rows}
    best = sorted(rows, key=lambda r: (-ranked[r], r))[:k]
    return [(r, float(scores[r])) for r in best]


@pytest.mark.parametrize("seed", SEEDS)
def test_top_k_equals_ranking_every_matching_row(seed):
    rng = random.Random(seed)
    vocab = [f"w{n}" for n in range(400)]
    docs = []
    for _ in range(6000):
        if docs and rng.random() < 0.15:
            docs.append(list(rng.choice(docs)))  # duplicates tie on every query
        else:
            docs.append([vocab[min(int(rng.paretovariate(0.7)) - 1, len(vocab) - 1)] for _ in range(rng.randint(1, 30))])
    matrix, vocab_dict, *_ = bm25_parts(pa.array(docs, pa.list_(pa.string())))
    post = Postings(matrix["data"], matrix["indices"], matrix["indptr"], vocab_dict, matrix["num_docs"])
    n = len(docs)
    sampled = 0
    for _ in range(200):
        tokens = [rng.choice(vocab[:6]) if rng.random() < 0.6 else rng.choice(list(vocab_dict))
                  for _ in range(rng.randint(1, 4))]
        k = rng.choice([1, 3, 10, 50, 100])
        mask = np.array([rng.random() < 0.85 for _ in range(n)]) if rng.random() < 0.5 else None
        alive = np.array([rng.random() < 0.9 for _ in range(n)]) if rng.random() < 0.3 else None
        factor = np.array([rng.choice([0.5, 1.0, 1.0, 1.5, 2.0]) for _ in range(n)]) if rng.random() < 0.6 else None
        weights = {t: rng.choice([0.3, 1.0, 2.0]) for t in tokens} if rng.random() < 0.3 else None
        index = SimpleNamespace(retriever=post, alive=alive)
        scores = np.asarray(post.get_scores(tokens, weights) if weights else post.get_scores(tokens), dtype=np.float32)
        sampled += keyword._floor(scores, k, mask, alive, factor) > 0
        got = keyword.top_k(index, tokens, k, mask, weights, factor)
        assert got == reference(post, tokens, k, mask, alive, weights, factor), (tokens, k)
    assert sampled > 50  # the floor was used, not only the full ranking


def test_ties_at_the_kth_place_keep_the_lowest_rows():
    scores = np.array([0, 3, 2, 2, 2, 1, 2], dtype=np.float32)
    hits = np.flatnonzero(scores > 0)
    assert keyword._best(hits, scores, 3, None).tolist() == [1, 2, 3]
    assert keyword._best(hits, scores, 0, None).tolist() == []
