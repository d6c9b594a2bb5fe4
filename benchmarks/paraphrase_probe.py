"""Where does an embedding model put a paraphrase? The recall issue asks that "How does the user
get to work?" ranks "My preferred commute is a light bicycle." in the top 3 of a workspace with
30+ distractor notes while BM25 alone misses it. This builds the test suite's workspace (32
distractors, 8 of which mention "user" or "work") and a topic-neutral one (32 distractors sharing
no word with the query), and prints, per model and query wording, the note's rank in the vector
branch and in default hybrid search (fused rank, and BM25's own rank: "-" when not among 60).

    .venv/bin/python benchmarks/paraphrase_probe.py                  # the local model
    .venv/bin/python benchmarks/paraphrase_probe.py --model openai/x --api-base http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from test_recall import DISTRACTORS, build_corpus  # noqa: E402

TARGET = "daily/2026-02-04/commute.md"
QUERIES = ["How does the user get to work?", "How do I get to work?"]
# The suite's distractors without the 8 that share "user" or "work", plus 8 of other topics.
NEUTRAL = [d for d in DISTRACTORS if not re.search(r"\b(user|work)\b", d, re.I)] + [
    "The sourdough starter needs feeding every twelve hours.",
    "My sister visits from Toronto for the holidays.",
    "The violin was restrung before the autumn concert.",
    "The roof gutter leaks whenever it rains heavily.",
    "Our cat sleeps on the warm laptop charger.",
    "The tax return was filed two weeks early this year.",
    "The birthday cake had lemon frosting and fresh berries.",
    "The vacation photos are backed up to an external drive.",
]


def vector_rank(settings, query: str) -> int | None:
    from memflow.tasks.recall import search

    only_vectors = settings.model_copy(update={"vector_weight": 1.0, "keyword_weight": 0.0})
    ranked = search(only_vectors, query, limit=60, explain=True, link_limit=0).results
    return next((r.explain["ranks"].get("vector") for r in ranked if r.path == TARGET), None)


def position(results) -> int | None:
    """The note's rank (from 1) among the results, None when it is not among them."""
    return next((n for n, r in enumerate(results, 1) if r.path == TARGET), None)


def probe(model: str, api_base: str, distractors: list[str]) -> list[tuple]:
    import test_recall

    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import init_workspace, layout
    from memflow.tasks.index import run_index
    from memflow.tasks.recall import search

    settings = load_settings(tempfile.mkdtemp(), embedding_model=model, model_api_base=api_base,
                             model_api_key="x" if api_base else "")
    init_workspace(layout(settings))
    saved, test_recall.DISTRACTORS = test_recall.DISTRACTORS, distractors
    try:
        build_corpus(layout(settings))
    finally:
        test_recall.DISTRACTORS = saved
    run_index(settings)
    keyword_only = settings.model_copy(update={"embedding_model": ""})
    as_written = settings.model_copy(update={"first_person_queries": False})
    rows = []
    for query in QUERIES:
        rank, plain_rank = vector_rank(settings, query), vector_rank(as_written, query)
        hybrid = position(search(settings, query, limit=60, link_limit=0).results)
        bm25 = position(search(keyword_only, query, limit=60, link_limit=0).results)
        rows.append((query, plain_rank, rank, hybrid, bm25))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", action="append", help="embedding model(s); default the local one")
    parser.add_argument("--api-base", default="")
    args = parser.parse_args()
    print("| model | distractors | query | vector rank, query as written | vector rank, with "
          "first-person reading | fused rank (default weights) | BM25 rank |")
    print("|---|---|---|---|---|---|---|")
    for model in args.model or ["local/all-MiniLM-L6-v2"]:
        for name, distractors in (("test suite", DISTRACTORS), ("topic-neutral", NEUTRAL)):
            for query, plain, rank, hybrid, bm25 in probe(model, args.api_base, distractors):
                print(f"| {model} | {name} | {query} | {plain or '-'} | {rank or '-'} "
                      f"| {hybrid or '-'} | {bm25 or '-'} |")


if __name__ == "__main__":
    main()
