"""Would the local embedding model tell a change from a new fact? Issue 25 asks to measure what
the shipped model adds to the change rule for "same subject". This probe holds pairs written
here (not the technical-chat generator's templates, not LoCoMo), each an earlier statement and
a later one about the same named subject, with a value of the same kind in each: a *change*
(the later one gives the same thing a new value, in other words: "Lena works at X" -> "Lena
joined Y last month") or a *new fact* (another predicate with a value of the same kind: "Lena
works at X" -> "Lena visited Y"). Values and names are pseudo-words and random numbers (seeded),
so neither the rule nor the model has seen them.

It prints, per pair, what the change rule says (`change.relation`: "replaces" is a change) and
the model's cosine between the two statements with their values masked, then the precision and
recall of the rule alone and of the rule or a cosine at or above each threshold.

    .venv/bin/python benchmarks/same_subject_probe.py            # needs the `local` extra
    .venv/bin/python benchmarks/same_subject_probe.py --seed 7 --quiet
"""

from __future__ import annotations

import argparse
import random
import re

# (earlier, later, is a change). {s}: the subject's name; {a}/{b}: the old and the new value
# (a number N, or a name V): each side has one value of one kind.
PAIRS = [
    ("The {s} container is capped at {a:N} MiB.", "{s} may use {b:N} MiB now.", True),
    ("The {s} container is capped at {a:N} MiB.", "We lifted the {s} memory cap to {b:N} MiB.", True),
    ("The {s} container is capped at {a:N} MiB.", "The {s} cache holds {b:N} MiB.", False),
    ("The {s} container is capped at {a:N} MiB.", "{s} writes {b:N} MiB of logs a day.", False),
    ("I set {s} to {a:N} attempts.", "{s} now gives up after {b:N} tries.", True),
    ("I set {s} to {a:N} attempts.", "{s} processes {b:N} records per batch.", False),
    ("Batches in {s} are {a:N} rows each.", "We cut the {s} batches down to {b:N} rows.", True),
    ("Batches in {s} are {a:N} rows each.", "{s} retries {b:N} times before it gives up.", False),
    ("{s} keeps its state in {a:V}.", "{s} now persists into {b:V}.", True),
    ("{s} keeps its state in {a:V}.", "{s} sends its metrics to {b:V}.", False),
    ("{a:V} owns {s} from this sprint on.", "{b:V} took over {s}.", True),
    ("{a:V} owns {s} from this sprint on.", "{b:V} reviewed the last {s} change.", False),
    ("{s} works at {a:V}.", "{s} moved to {b:V}.", True),
    ("{s} works at {a:V}.", "{s} flew to {b:V} for a conference.", False),
    ("{s} works at {a:V}.", "{s} joined {b:V} last month.", True),
    ("{s} works at {a:V}.", "{s} visited {b:V}.", False),
    ("My {s} router is an {a:V}.", "I replaced the {s} router with a {b:V}.", True),
    ("My {s} router is an {a:V}.", "I bought a {b:V} for the {s} office.", False),
    ("The {s} p95 latency is {a:N} ms.", "{s} p95 dropped to {b:N} ms after the fix.", True),
    ("The {s} p95 latency is {a:N} ms.", "The {s} p50 latency is {b:N} ms.", False),
    ("{s} has {a:N} users.", "{s} now serves {b:N} customers.", True),
    ("{s} has {a:N} users.", "{s} has {b:N} servers.", False),
    ("{s} lives in {a:V}.", "{s} relocated to {b:V} in spring.", True),
    ("{s} lives in {a:V}.", "{s} spent the weekend in {b:V}.", False),
    ("{s} lives in {a:V}.", "{s}'s new flat is in {b:V}.", True),
    ("{s} lives in {a:V}.", "{s} was born in {b:V}.", False),
    ("The {s} meeting is at {a:N} am.", "We moved the {s} meeting to {b:N} am.", True),
    ("The {s} meeting is at {a:N} am.", "The {s} review is at {b:N} am.", False),
    ("{s} runs on {a:N} nodes.", "{s} was scaled out to {b:N} nodes.", True),
    ("{s} runs on {a:N} nodes.", "{s} lost {b:N} nodes in the outage.", False),
    ("The {s} budget is {a:N} euros.", "Finance approved {b:N} euros for {s}.", True),
    ("The {s} budget is {a:N} euros.", "{s} spent {b:N} euros on travel.", False),
    ("{s} is written in {a:V}.", "{s} was rewritten in {b:V}.", True),
    ("{s} is written in {a:V}.", "{s} calls a library written in {b:V}.", False),
    ("{s}'s coach is {a:V}.", "{s} trains with {b:V} now.", True),
    ("{s}'s coach is {a:V}.", "{s} played against {b:V}.", False),
    ("{s} drives a {a:V}.", "{s} sold the car and bought a {b:V}.", True),
    ("{s} drives a {a:V}.", "{s} rented a {b:V} for the trip.", False),
    ("The {s} service listens on port {a:N}.", "{s} answers on {b:N} since the migration.", True),
    ("The {s} service listens on port {a:N}.", "{s} calls the cache on port {b:N}.", False),
]

_VOWELS, _ONSETS, _CODAS = "aeiou", ["br", "k", "d", "fl", "gr", "m", "n", "pr", "s", "st", "t", "v", "z"], ["", "n", "r", "l", "x", "th", "s"]


def pseudo_word(rng: random.Random) -> str:
    return "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(rng.randint(2, 3)))


def fill(template: str, subject: str, values: dict[str, str]) -> str:
    text = re.sub(r"\{([ab]):[NV]\}", lambda m: values[m.group(1)], template).replace("{s}", subject)
    return text[:1].upper() + text[1:]


def masked(template: str, subject: str) -> str:
    text = re.sub(r"\{[ab]:N\}", "N", re.sub(r"\{[ab]:V\}", "X", template)).replace("{s}", subject)
    return text[:1].upper() + text[1:]


def value(rng: random.Random, kind: str) -> str:
    return str(rng.randint(2, 4000)) if kind == "N" else pseudo_word(rng).title()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--quiet", action="store_true", help="only the summary")
    args = parser.parse_args()
    import numpy as np

    from memflow.tasks.dream.change import relation
    from memflow.tasks.ground.local_embeddings import embed_local

    rng = random.Random(args.seed)
    rows = []
    for old, new, change in PAIRS:
        subject = pseudo_word(rng).title()
        kinds = dict(re.findall(r"\{([ab]):([NV])\}", old + new))
        values = {slot: value(rng, kind) for slot, kind in kinds.items()}
        if values.get("a") == values.get("b"):
            values["b"] = value(rng, kinds["b"]) + "1"
        said_old, said_new = fill(old, subject, values), fill(new, subject, values)
        rows.append((said_old, said_new, masked(old, subject), masked(new, subject), change,
                     relation(said_new, said_old) == "replaces"))
    texts = sorted({t for r in rows for t in r[2:4]})
    vectors = dict(zip(texts, np.asarray(embed_local(args.model, texts))))
    scored = [(*r, float(vectors[r[2]] @ vectors[r[3]])) for r in rows]
    if not args.quiet:
        for old, new, _, _, change, rule, cosine in sorted(scored, key=lambda r: -r[-1]):
            print(f"{'change' if change else 'new   '} rule={'yes' if rule else 'no '} cos={cosine:.3f}  {old} -> {new}")
    changes = sum(r[4] for r in scored)
    print(f"\n{len(scored)} pairs, {changes} changes, {len(scored) - changes} new facts (seed {args.seed}, {args.model})")
    for label, predicted in [("rule alone", lambda r: r[5])] + [
            (f"rule or cosine >= {t:.2f}", lambda r, t=t: r[5] or r[6] >= t) for t in (0.70, 0.75, 0.80, 0.85)]:
        hits = [r for r in scored if predicted(r)]
        right = sum(r[4] for r in hits)
        precision = right / len(hits) if hits else float("nan")
        print(f"{label:24s} changes found {right}/{changes} (recall {right / changes:.2f}), "
              f"wrong {len(hits) - right} (precision {precision:.2f})")
    cos_change = [r[6] for r in scored if r[4]]
    cos_new = [r[6] for r in scored if not r[4]]
    above = sum(a > b for a in cos_change for b in cos_new) / (len(cos_change) * len(cos_new))
    print(f"cosine: changes {min(cos_change):.3f}-{max(cos_change):.3f}, new facts {min(cos_new):.3f}-"
          f"{max(cos_new):.3f}; a change above a new fact in {above:.2f} of the pairs of pairs (AUC)")


if __name__ == "__main__":
    main()
