"""How much should a note's name and description weigh against its body (`field_weight`)?

A generated workspace per seed (pseudo-words from a large syllable vocabulary): per topic one
note named for it (two topic words in its name, one in its description, each in its body only
by chance) and three notes that mention the topic words in their bodies, one or two times each,
among fillers of varied length. The query is the two topic words; the named note should come
first. Prints hit@1 and MRR of the named note per weight (the keyword branch, vectors off).

    .venv/bin/python benchmarks/field_weight.py                 # weights 1,2,3,4; seeds 1,2,3
    .venv/bin/python benchmarks/field_weight.py --weights 1,2 --topics 80
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

SYLLABLES = [a + b for a in "bdfgklmnprstvz" for b in ("a", "e", "i", "o", "u", "ai", "or", "en")]


def vocabulary(rng: random.Random, size: int) -> list[str]:
    out: set[str] = set()
    while len(out) < size:
        out.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(out)


def body(rng: random.Random, filler: list[str], words: list[str], times: tuple[int, int]) -> str:
    text = rng.sample(filler, rng.randint(20, 120))
    for word in words:
        for _ in range(rng.randint(*times)):
            text.insert(rng.randrange(len(text) + 1), word)
    return " ".join(text)


def target(t: int) -> str:
    """The note named for topic `t` (a daily note: the digest's prior would weigh on it)."""
    return f"daily/2026-02-{1 + t % 28:02d}/topic{t}.md"


def build(root: Path, seed: int, topics: int, weight: int):
    from memflow import api

    rng = random.Random(seed)
    vocab = vocabulary(rng, 3000)
    topic_words, filler = vocab[:topics * 2], vocab[topics * 2:]
    settings = api.settings_for(root, field_weight=weight, embedding_model="")
    api.init(settings)
    for t in range(topics):
        pair = topic_words[2 * t:2 * t + 2]
        own = [w for w in pair if rng.random() < 0.5]
        api.write(target(t), f"# Notes\n\n{body(rng, filler, own, (1, 1))}\n",
                  name=" ".join(pair).title(), description=" ".join([pair[0], *rng.sample(filler, 8)]),
                  workspace=settings)
        for d in range(3):
            api.write(f"daily/2026-01-{1 + (t * 3 + d) % 28:02d}/t{t}d{d}.md",
                      f"# Day\n\n{body(rng, filler, pair, (1, 2))}\n", workspace=settings)
    api.index(settings)
    return settings, topic_words


def measure(seed: int, topics: int, weight: int) -> tuple[float, float]:
    from memflow import api

    with tempfile.TemporaryDirectory() as tmp:
        settings, topic_words = build(Path(tmp) / "ws", seed, topics, weight)
        hits = mrr = 0.0
        for t in range(topics):
            ranked = [r.path for r in api.search(" ".join(topic_words[2 * t:2 * t + 2]), settings, limit=4).results]
            rank = ranked.index(target(t)) + 1 if target(t) in ranked else 0
            hits += rank == 1
            mrr += 1 / rank if rank else 0.0
        return hits / topics, mrr / topics


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", default="1,2,3,4")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--topics", type=int, default=50)
    args = parser.parse_args()
    print("field_weight  hit@1   MRR    (mean over seeds)")
    for weight in (int(w) for w in args.weights.split(",")):
        scores = [measure(int(s), args.topics, weight) for s in args.seeds.split(",")]
        print(f"{weight:>12}  {sum(h for h, _ in scores) / len(scores):.3f}  "
              f"{sum(m for _, m in scores) / len(scores):.3f}")


if __name__ == "__main__":
    main()
