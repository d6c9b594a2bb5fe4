"""Speakers in a keyword search (see ground.speakers): a query's speaker tokens, and BM25 where
a speaker alone never makes a hit rank above one matching a word of the query."""

from __future__ import annotations

import numpy as np

from memflow.tasks.ground.speakers import named_speakers, rows_with, said_words
from memflow.tasks.ground.tokenize import query_tokens
from memflow.tasks.stores import keyword


def search_tokens(index: keyword.KeywordIndex, query: str, tokenizer: str) -> list[str]:
    """A query's keyword tokens, plus the marked token of each speaker it names."""
    tokens = query_tokens(query, tokenizer)
    return tokens + named_speakers(tokens, index.retriever.vocab_dict if index.retriever else ())


def speakers_after_words(index: keyword.KeywordIndex, tokens: list[str], n: int,
                         mask: np.ndarray, factor: np.ndarray | None = None) -> list[tuple[int, float]]:
    """BM25 top-n where a speaker the query names counts fully in chunks matching a word of the
    query, and a chunk matching only the speaker ranks after all of those (`user: hi` is never
    the second answer to "where does the user live", but can fill a large budget)."""
    words = said_words(tokens)
    if len(words) == len(tokens):
        return keyword.top_k(index, tokens, n, mask, factor=factor)
    worded = rows_with(index.retriever, len(mask), words)
    hits = keyword.top_k(index, tokens, n, mask & worded, factor=factor)
    if len(hits) < n:
        floor = min((score for _, score in hits), default=1.0)
        rest = keyword.top_k(index, tokens, n - len(hits), mask & ~worded, factor=factor)
        top = max((score for _, score in rest), default=1.0)
        # below every worded hit, even after the layer priors (session 1.5, digest 0.5) apply
        hits += [(row, floor * 0.1 * score / top) for row, score in rest]
    return hits
