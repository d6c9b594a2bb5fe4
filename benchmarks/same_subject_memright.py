"""What does each "same subject" signal add, on the memory-right dev set? (issue 56)

The dream must decide whether a new statement replaces an older one about the same subject. This
measures, on real conversations written by people who never saw the code, how well each signal
the text offers tells the pairs that are a change from the pairs that are not. Nothing here is
tuned to the data's words: the pairs are read off the questions' labels by the rules below, and
the thresholds are quantiles of the scores themselves.

**Statements.** A statement is one part of a user message as the dream splits it: the sentences
of `consolidation.sentences_of` cut at `consolidation._SENTENCE_RE`, each cut again by
`change.clauses`. Only user messages are read (the assistant's lines are other evidence).
A statement "holds" a value when the value (a `current` or `stale` string) occurs in it.

**Pairs**, each (earlier statement, later statement), in the order they were said:
- change (questions of kind `update` and `chain`): the later statement is the earliest statement
  of an `evidence` message that holds a `current` value and comes after a statement holding a
  `stale` value (else the earliest such statement in any message); each `stale` value's
  statement is the earliest one holding it before that. Sorted by when they were said, each
  consecutive two are a pair (an update gives one pair, a chain one per step). A question
  without a `stale` value gives none (its old value is not named in the labels).
- look-alike (kinds `coexist` and `not_a_change`): the value's statement is the earliest
  statement holding a `current` value; the look-alike is the other statement that shares the
  most IDF weight with the question's `note` (the writer's description
  of the look-alike: "sparkling water at the gym is a later, different occasion"), counting only
  the note's terms (of two characters or more) that are not in the question or its values
  (the earliest on a tie), and sharing two of them or one with a digit or a Han character (one
  plain word in common, "state" of "co-stated", picked wrong statements). The pair is the two in the order
  said. None when no statement shares a note term.
- random: statements of two different user messages of the same scenario, drawn with a seeded
  generator (`--random` per scenario), the dream's `facts.is_memory` true of both, no labelled
  pair. Mostly two subjects; a few may happen to share one.

**Signals**, per pair: `rare` the IDF-weighted cosine of the two statements' term sets (project
tokenizer; IDF over the scenario's messages, both roles), `rare-masked` the same with every
labelled value of the scenario masked in both; `names` the count of names shared (a capitalised
word not opening a sentence, or an identifier with a digit, an underscore or an inner capital;
Han names are not read), `names-masked`; `rule` 1 when `change.relation(new, old)` is
"replaces"; `same-key` 1 when `facts.subject_of` gives both the same node key; `dream` both
(the offline dream's own test, roughly: same node and the rule says "replaces"); `embed` the
cosine of all-MiniLM-L6-v2 (`local` extra) between the two statements, labelled values masked.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/same_subject_memright.py
    .venv/bin/python benchmarks/same_subject_memright.py --scenarios life-01 --list --no-model
"""

from __future__ import annotations

import argparse
import math
import random
import re
from dataclasses import dataclass
from pathlib import Path

from memflow.tasks.dream.change import relation
from memflow.tasks.dream.statements import clauses, split_outside
from memflow.tasks.dream.consolidation import _SENTENCE_RE, sentences_of
from memflow.tasks.dream.facts import is_memory, subject_of
from memflow.tasks.evaluate.memright import load_scenario, scenario_folders
from memflow.tasks.ground.tokenize import tokenize

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "memory-right"
KINDS = ("change", "look-alike", "random")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff"


@dataclass(frozen=True)
class Statement:
    at: int        # position in the scenario, in the order said
    message: str   # "<session id>:<message id>"
    text: str


@dataclass(frozen=True)
class Pair:
    kind: str      # change | look-alike | random
    scenario: str
    question: str  # the question's id ("" for a random pair)
    old: Statement
    new: Statement


def statements(sessions: list[tuple[str, list[dict]]]) -> list[Statement]:
    """The user's statements of a scenario, as the dream splits a line (see the module text)."""
    out: list[Statement] = []
    for session, messages in sessions:
        for m in messages:
            if m["role"] != "user":
                continue
            for sentence in split_outside(_SENTENCE_RE, sentences_of(m["content"]))[0]:
                for part in clauses(sentence.strip()) if sentence.strip() else []:
                    out.append(Statement(len(out), f"{session}:{m['id']}", part))
    return out


def holding(said: list[Statement], values: list[str], messages: set[str] | None = None) -> list[Statement]:
    return [s for s in said
            if any(v in s.text for v in values) and (messages is None or s.message in messages)]


def change_pairs(said: list[Statement], q: dict, scenario: str) -> list[Pair]:
    """Update and chain: each stale value's statement, then the current one, consecutive pairs."""
    if not q["stale"]:
        return []
    first_stale = min((s.at for s in holding(said, q["stale"])), default=None)
    if first_stale is None:
        return []
    later = [s for s in holding(said, q["current"], set(q["evidence"])) if s.at > first_stale] \
        or [s for s in holding(said, q["current"]) if s.at > first_stale]
    if not later:
        return []
    new = later[0]
    firsts = {s for v in q["stale"] for s in holding(said, [v])[:1] if s.at < new.at}
    steps = sorted(firsts, key=lambda s: s.at)
    chain = steps + [new]
    return [Pair("change", scenario, q["id"], a, b) for a, b in zip(chain, chain[1:])]


def lookalike_pair(said: list[Statement], q: dict, scenario: str, idf: dict[str, float]) -> Pair | None:
    """Coexist and not_a_change: the value's first statement and the statement the note describes."""
    held = holding(said, q["current"])
    if not held:
        return None
    value = held[0]
    asked = set(tokenize(" ".join([q["question"], *q["current"]])))
    anchors = {t for t in tokenize(q["note"]) if len(t) > 1} - asked
    best, score = None, 0.0
    for s in said:
        if s is value:
            continue
        hit = anchors & set(tokenize(s.text))
        if len(hit) < 2 and not any(re.search(rf"[\d{_HAN}]", t) for t in hit):
            continue  # one plain word in common ("state" of "co-stated") is no description of it
        weight = sum(idf.get(t, 0.0) for t in hit)
        if weight > score:
            best, score = s, weight
    if best is None:
        return None
    old, new = sorted((value, best), key=lambda s: s.at)
    return Pair("look-alike", scenario, q["id"], old, new)


def random_pairs(said: list[Statement], taken: set[tuple[int, int]], count: int, rng: random.Random,
                 scenario: str) -> list[Pair]:
    pool = [s for s in said if is_memory(s.text)]
    out: list[Pair] = []
    for _ in range(count * 20):
        if len(out) == count or len(pool) < 2:
            break
        a, b = sorted(rng.sample(pool, 2), key=lambda s: s.at)
        if a.message != b.message and (a.at, b.at) not in taken:
            taken.add((a.at, b.at))
            out.append(Pair("random", scenario, "", a, b))
    return out


def idf_of(sessions: list[tuple[str, list[dict]]]) -> dict[str, float]:
    docs = [set(tokenize(m["content"])) for _, messages in sessions for m in messages]
    df: dict[str, int] = {}
    for doc in docs:
        for t in doc:
            df[t] = df.get(t, 0) + 1
    return {t: math.log(1 + (len(docs) - n + 0.5) / (n + 0.5)) for t, n in df.items()}


def masker(questions: list[dict]):
    """Every labelled value of the scenario, as a whole word where it starts or ends with one."""
    values = sorted({v for q in questions for v in q["current"] + q["stale"]}, key=len, reverse=True)
    if not values:
        return lambda text, mark: text
    pattern = re.compile("|".join((r"(?<!\w)" if v[0].isalnum() else "") + re.escape(v)
                                  + (r"(?!\w)" if v[-1].isalnum() else "") for v in values))
    return lambda text, mark: pattern.sub(mark, text)


def rare(a: str, b: str, idf: dict[str, float]) -> float:
    ta, tb = set(tokenize(a)), set(tokenize(b))
    norm = math.sqrt(sum(idf.get(t, 0) ** 2 for t in ta) * sum(idf.get(t, 0) ** 2 for t in tb))
    return sum(idf.get(t, 0) ** 2 for t in ta & tb) / norm if norm else 0.0


_WORD_RE = re.compile(r"[A-Za-z0-9][\w'.-]*[\w]|[A-Za-z]")
_SENTENCE_START_RE = re.compile(r"(?:^|[.!?:;]\s+|[\"(]\s*)$")


def names(text: str) -> set[str]:
    """Capitalised words not opening a sentence, and identifiers (pool_max, maxReplicas, H100)."""
    out = set()
    for m in _WORD_RE.finditer(text):
        word = m.group().rstrip(".")
        ident = ("_" in word or re.search(r"[a-z][A-Z]", word)
                 or (re.search(r"\d", word) and re.search(r"[A-Za-z]", word)))
        capital = (word[:1].isupper() and word.split("'")[0] != "I"
                   and not _SENTENCE_START_RE.search(text[:m.start()]))
        if ident or capital:
            out.add(word.lower())
    return out


def auc(pos: list[float], neg: list[float]) -> float:
    """P(a change scores above a negative), ties counting half (Mann-Whitney)."""
    if not pos or not neg:
        return float("nan")
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def score(pairs: list[Pair], idfs: dict[str, dict], masks: dict, model: str | None) -> list[dict[str, float]]:
    rows = []
    for p in pairs:
        idf, mask = idfs[p.scenario], masks[p.scenario]
        old, new = p.old.text, p.new.text
        mo, mn = mask(old, " "), mask(new, " ")
        rule = relation(new, old) == "replaces"
        key = subject_of(new).key == subject_of(old).key
        rows.append({"rare": rare(old, new, idf), "rare-masked": rare(mo, mn, idf),
                     "names": len(names(old) & names(new)), "names-masked": len(names(mo) & names(mn)),
                     "rule": float(rule), "same-key": float(key), "dream": float(rule and key)})
    if model:
        import numpy as np

        from memflow.tasks.ground.local_embeddings import embed_local

        texts = [masks[p.scenario](s.text, "X") for p in pairs for s in (p.old, p.new)]
        distinct = sorted(set(texts))
        vectors = dict(zip(distinct, np.asarray(embed_local(model, distinct))))
        for row, i in zip(rows, range(0, len(texts), 2)):
            row["embed"] = float(vectors[texts[i]] @ vectors[texts[i + 1]])
    return rows


def report(pairs: list[Pair], rows: list[dict[str, float]]) -> list[str]:
    by = {k: [r for p, r in zip(pairs, rows) if p.kind == k] for k in KINDS}
    lines = [f"{'signal':15s} {'AUC look':>8s} {'AUC rand':>8s}  at threshold: recall, wrong look-alikes, "
             f"wrong randoms, precision vs look-alikes / vs both"]
    tests = {name: (lambda r, n=name: r[n]) for name in rows[0]}
    for name, value in tests.items():
        pos = [value(r) for r in by["change"]]
        lines.append(f"{name:15s} {auc(pos, [value(r) for r in by['look-alike']]):8.2f} "
                     f"{auc(pos, [value(r) for r in by['random']]):8.2f}")
        ranked = sorted(pos, reverse=True)
        cuts = sorted({1.0} if set(pos) <= {0.0, 1.0} else
                      {ranked[max(0, math.ceil(q * len(pos)) - 1)] for q in (0.25, 0.5, 0.75)} - {0.0})
        lines += [f"{'':34s}" + cut_line(f">= {t:.2f}", by, lambda r, t=t, v=value: v(r) >= t) for t in cuts]
    for title, test in combinations(by, rows):
        lines.append(f"{title:34s}" + cut_line("", by, test))
    return lines


def combinations(by: dict, rows: list[dict]) -> list[tuple[str, object]]:
    """The rule with the model, and rare terms with the model, at the changes' score quantiles."""
    out: list[tuple[str, object]] = []
    if "embed" not in rows[0]:
        return out
    for q in (0.25, 0.5, 0.75):
        pos_e = sorted((r["embed"] for r in by["change"]), reverse=True)
        pos_r = sorted((r["rare-masked"] for r in by["change"]), reverse=True)
        te, tr = pos_e[math.ceil(q * len(pos_e)) - 1], max(1e-9, pos_r[math.ceil(q * len(pos_r)) - 1])
        out.append((f"rule or embed >= {te:.2f}", lambda r, te=te: r["rule"] or r["embed"] >= te))
        out.append((f"same-key and embed >= {te:.2f}", lambda r, te=te: r["same-key"] and r["embed"] >= te))
        out.append((f"rare-m {'>= ' + format(tr, '.2f') if tr > 1e-9 else '> 0'} and embed >= {te:.2f}",
                    lambda r, te=te, tr=tr: r["rare-masked"] >= tr and r["embed"] >= te))
    return out


def cut_line(label: str, by: dict, test) -> str:
    hit = {k: sum(bool(test(r)) for r in by[k]) for k in KINDS}
    tp = hit["change"]
    vs_look = tp / (tp + hit["look-alike"]) if tp + hit["look-alike"] else float("nan")
    taken = tp + hit["look-alike"] + hit["random"]
    vs_all = tp / taken if taken else float("nan")
    return (f"{label:9s} recall {tp}/{len(by['change'])} = {tp / max(1, len(by['change'])):.2f}, "
            f"look-alikes {hit['look-alike']}/{len(by['look-alike'])}, "
            f"random {hit['random']}/{len(by['random'])}, "
            f"precision {vs_look:.2f} / {vs_all:.2f}")


def build(data: Path, names_: list[str] | None, per_scenario: int, seed: int):
    pairs: list[Pair] = []
    idfs, masks, skipped = {}, {}, []
    for folder in scenario_folders(data, names_):
        sessions, questions = load_scenario(folder)
        said, idf = statements(sessions), idf_of(sessions)
        idfs[folder.name], masks[folder.name] = idf, masker(questions)
        found: dict[tuple[int, int], Pair] = {}
        for q in questions:
            if q["kind"] in ("update", "chain"):
                got = change_pairs(said, q, folder.name)
            elif q["kind"] in ("coexist", "not_a_change"):
                got = [p for p in [lookalike_pair(said, q, folder.name, idf)] if p]
            else:
                continue
            if not got:
                skipped.append(f"{folder.name}:{q['id']} ({q['kind']})")
            for p in got:
                found.setdefault((p.old.at, p.new.at), p)  # q5/q6 of a coexisting two give one pair
        pairs += found.values()
        rng = random.Random(f"{seed}:{folder.name}")
        pairs += random_pairs(said, set(found), per_scenario, rng, folder.name)
    return pairs, idfs, masks, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--scenarios", nargs="*", help="scenario folder names (default: all)")
    parser.add_argument("--random", type=int, default=20, help="random pairs per scenario")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--no-model", action="store_true", help="skip the embedding signal")
    parser.add_argument("--list", action="store_true", help="print every pair")
    args = parser.parse_args(argv)
    pairs, idfs, masks, skipped = build(args.data, args.scenarios, args.random, args.seed)
    rows = score(pairs, idfs, masks, None if args.no_model else args.model)
    if args.list:
        for p, r in zip(pairs, rows):
            figures = " ".join(f"{k}={v:.2f}" for k, v in r.items())
            print(f"{p.kind:10s} {p.scenario}:{p.question:4s} {figures}\n"
                  f"    old {p.old.message}: {p.old.text}\n"
                  f"    new {p.new.message}: {p.new.text}")
        print()
    counts = ", ".join(f"{k} {sum(p.kind == k for p in pairs)}" for k in KINDS)
    print(f"pairs: {counts} (seed {args.seed}); questions giving no pair: {len(skipped)} {' '.join(skipped)}")
    print("\n".join(report(pairs, rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
