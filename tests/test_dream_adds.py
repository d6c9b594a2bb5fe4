"""The dream adds, it does not displace: a digest node written over the same conversations leaves
every line a packed context showed without it in the context, and what is true now first.

Each test captures the same generated conversations (pseudo-words, `test_change_rule.make_vocab`)
into two workspaces, writes a digest node into one as the dream writes them (dated fact lines
citing the daily lines they restate, split or reworded), and compares the packed contexts of the
same question at several budgets. `MEMFLOW_SEEDS=...` runs other seeds."""

from __future__ import annotations

import os

import pytest
from test_answers import day_of, first_with, lines_of, session
from test_change_rule import make_vocab, pick

from memflow import api
from memflow.schemas.settings import load_settings
from memflow.tasks.ground.workspace import init_workspace, layout

SEEDS = [int(x) for x in os.environ.get("MEMFLOW_SEEDS", "5,29,71").split(",")]
BUDGETS = (150, 200, 250, 300, 400, 500, 700, 1000)


def workspaces(tmp_path, sessions: list[list[dict]]):
    """(settings without a digest, settings with one to be written): the same sessions in both."""
    out = []
    for name in ("plain", "dreamt"):
        settings = load_settings(tmp_path / name)
        init_workspace(layout(settings))
        for n, messages in enumerate(sessions):
            api.capture(messages, f"s{n}", settings)
        out.append(settings)
    return out


def daily_line(settings, words: str) -> str:
    """`daily/...md#Ln` of the daily line holding `words`."""
    root = settings.workspace
    for path in sorted((root / "daily").rglob("*.md")):
        for n, line in enumerate(path.read_text().split("\n"), 1):
            if words in line and line.startswith("- "):
                return f"{path.relative_to(root).as_posix()}#L{n}"
    raise AssertionError(f"no daily line holds {words!r}")


def write_node(settings, folder: str, name: str, subject: str, facts: list[tuple[str, str, str]]) -> None:
    """A node as the dream writes one: `facts` are (day, text, the words of the daily line cited)."""
    lines = [f"- {day}: {text} [[{daily_line(settings, words)}]]" for day, text, words in facts]
    node = settings.workspace / "digest" / folder / f"{name.lower()}.md"
    node.parent.mkdir(parents=True, exist_ok=True)
    node.write_text(f"---\nname: {name}\ndescription: {facts[0][1]}\nsubject: {subject}\nformat: facts-1\n---\n\n"
                    f"# {name}\n\n" + "\n".join(lines) + "\n")


def said(packed: list[str], statements: list[str]) -> set[str]:
    text = "\n".join(packed)
    return {s for s in statements if s in text}


@pytest.mark.parametrize("seed", SEEDS)
def test_a_reworded_digest_fact_whose_turn_is_a_candidate_neither_answers_nor_moves_the_scores(seed):
    """A digest fact the dream split off a turn in other words ("They take me to X." from "... and
    take me to X.") is not held word for word by that turn, so it answered beside it: it took a
    slot of the opening (a turn that fitted without the dream no longer did), and its shortness
    lowered the mean length every line is scored against (near ties flipped). Reached through its
    daily line's citation, the turn answers for it: the opening is what it is without the node."""
    from memflow.schemas.recall import SearchResult
    from memflow.tasks.recall.answers import Head, answers
    from memflow.tasks.recall.packing import _terms_of, line_number

    rng, v = make_vocab(seed)
    verb, thing, adj, noun = pick(rng, v, "verb"), pick(rng, v, "noun"), pick(rng, v, "adj"), pick(rng, v, "filler")
    place, other = pick(rng, v, "name", 2)
    turns = [f"user: They fire up my {adj} mind and take me to {place}. They're my way to {verb} from {thing}.",
             f"assistant: The {noun} helps with that.",
             f"user: I keep lots of reminders of {other}, kind of a way to {verb} from {thing}."]
    log, daily, node = "session/dialog/s1.jsonl", "daily/2026-03-02/a.md", "digest/personal/the-user.md"
    transcript = SearchResult(id="t", path=log, start_line=1, end_line=3, text="\n".join(turns), score=0.02)
    fact = SearchResult(id="d", path=node, start_line=9, end_line=10, score=0.019,
                        text=f"# The user\n- 2026-03-02: They fire up my {adj} mind. They take me to {place}. "
                             f"They're my way to {verb} from {thing}. [[{daily}#L13]]")
    terms = _terms_of("bigram")
    weights = {t: 1.0 for t in terms(f"what does the user do to {verb} from {thing}")}
    head = Head(lambda term: 1.0, lambda path: None, 400, cites=lambda path, n: frozenset(
        {(log, 1)} if (path, n) == (daily, 13) else ()))
    alone = answers([transcript], weights, terms, line_number, head)
    beside = answers([transcript, fact], weights, terms, line_number, head)
    assert [(a.turn, a.score) for a in beside] == [(a.turn, a.score) for a in alone]
    assert all(a.hit == 0 for a in beside)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_node_ranked_for_one_fact_does_not_raise_the_older_turn_of_another(tmp_path, seed):
    """A user's node ranks for its fact holding most of the question's words ("X and I lived
    together"); the turn of another of its facts, holding fewer ("X sent me a video ... A is
    treating her well"), must not be raised with it above the newer "X took the B job": the
    newer value comes first with the node as without it."""
    rng, v = make_vocab(seed)
    friend, old, new, uni = pick(rng, v, "name", 4)
    noun, adj = pick(rng, v, "noun"), pick(rng, v, "adj")
    statements = [f"{friend} and I lived together in {uni} at uni, she has been my {adj} {noun} for years.",
                  f"{friend} sent me a video of her new flat. She says {old} is treating her well so far.",
                  f"So {friend} took the {new} job after all. She flew out last week."]
    sessions = [session(rng, v, n, [s], echo=False) for n, s in enumerate(statements)]
    plain, dreamt = workspaces(tmp_path, sessions)
    write_node(dreamt, "personal", "The user", "person:the-user",
               [(day_of(0), statements[0], f"{friend} and I lived together"),
                (day_of(1), f"{friend} sent me a video of her new flat.", f"{friend} sent me a video"),
                (day_of(1), f"She says {old} is treating her well so far.", f"{friend} sent me a video")])
    api.index(plain)
    api.index(dreamt)
    question = f"Which place is {friend} living in now?"
    for budget in BUDGETS:
        before = lines_of(api.search(question, plain, budget_tokens=budget).packed)
        after = lines_of(api.search(question, dreamt, budget_tokens=budget).packed)
        if first_with(before, new) < len(before):
            assert first_with(after, new) < len(after), (budget, after)
            if first_with(before, new) <= first_with(before, old):
                assert first_with(after, new) <= first_with(after, old), (budget, after)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_node_raises_no_other_piece_of_a_long_turn_whose_piece_is_above_it(tmp_path, seed):
    """A long message is indexed in pieces, each a candidate of its own, all standing for its
    one log line. A node citing that line had raised every piece of it to its rank, the pieces
    that hold none of what the fact says too (in a technical chat they took the room of the
    evidence asked for); when a candidate above the node holds the line, no piece is raised."""
    rng, v = make_vocab(seed)
    system, store, part = pick(rng, v, "name"), pick(rng, v, "name"), pick(rng, v, "noun")

    def paragraph() -> str:
        return " ".join(f"The {pick(rng, v, 'filler')} {pick(rng, v, 'filler')} of {part} is "
                        f"{pick(rng, v, 'qualifier')}." for _ in range(8))
    code = "\n".join(f"  {pick(rng, v, 'filler')}: {rng.randint(100, 999)}" for _ in range(12))
    long_turn = "\n\n".join([paragraph(), f"```yaml\n{part}:\n{code}\n```",
                             f"We decided to go with {store} as the store behind {part} in {system}.",
                             paragraph(), paragraph()])
    _, dreamt = workspaces(tmp_path, [session(rng, v, 0, [long_turn], echo=False)])
    write_node(dreamt, "wiki", store, f"topic:{store.lower()}",
               [(day_of(0), f"We decided to go with {store} as the store behind {part}.",
                 f"We decided to go with {store}")])
    api.index(dreamt)
    question = f"Which store is behind {part} in {system}?"
    results = api.search(question, dreamt, limit=40, explain=True).results
    for n, raised in enumerate(results):
        if not (raised.explain or {}).get("restated_by"):
            continue
        above = [r for r in results[:n] if r.path == raised.path
                 and r.start_line <= raised.end_line and raised.start_line <= r.end_line]
        assert not above, (raised.path, raised.start_line, raised.end_line, raised.explain["restated_by"])
