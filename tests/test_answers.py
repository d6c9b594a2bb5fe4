"""What is true now comes first (`recall.answers`): a packed context opens with the lines that
answer the question, newest first, whether or not the dream consolidated anything.

The conversations are generated: every word a statement is made of is drawn from pseudo-word
vocabularies (`test_change_rule.make_vocab`) and each statement takes one of several sentence
shapes at random, so no word list in the code can cover them; `MEMFLOW_SEEDS=...` runs other
seeds. Between the statements of the fact asked about, the user talks about other things and
the assistant answers, echoing the user's words."""

from __future__ import annotations

import os
import random
import re
from datetime import date, timedelta

import pytest
from test_change_rule import make_vocab, pick

from memflow import api
from memflow.tasks.recall.answers import asks_now

SEEDS = [int(x) for x in os.environ.get("MEMFLOW_SEEDS", "5,29,71").split(",")]

SHAPES = ["My {adj} {noun} is at {value}.", "These days the {adj} {noun} sits at {value}.",
          "{value} is where my {adj} {noun} is kept.", "Quick one: my {adj} {noun} is at {value}, finally.",
          "We put the {adj} {noun} at {value}."]


def day_of(n: int) -> str:
    return (date(2026, 3, 2) + timedelta(days=7 * n)).isoformat()


def session(rng, v, n: int, said: list[str], echo: bool = True) -> list[dict]:
    """A day's conversation: `said` among the user's other statements, each answered by the
    assistant (echoing the user's words when `echo`)."""
    lines = said + [f"My {pick(rng, v, 'filler')} {pick(rng, v, 'filler')} is {pick(rng, v, 'qualifier')}."
                    for _ in range(rng.randint(2, 4))]
    rng.shuffle(lines)
    out = []
    for k, line in enumerate(lines):
        reply = f"Noted: {line[0].lower()}{line[1:]}" if echo else \
            f"The {pick(rng, v, 'filler')} {pick(rng, v, 'filler')} helps with that."
        out += [{"id": f"u{k}", "role": "user", "timestamp": f"{day_of(n)}T09:{2 * k:02d}:00Z", "content": line},
                {"id": f"a{k}", "role": "assistant", "timestamp": f"{day_of(n)}T09:{2 * k + 1:02d}:00Z",
                 "content": reply}]
    return out


def changed_fact(settings, seed: int, steps: int = 3):
    """A fact stated with a new value in each of `steps` sessions (other sessions between), in
    random shapes; returns (the question, values oldest first)."""
    rng, v = make_vocab(seed)
    adj, noun = pick(rng, v, "adj"), pick(rng, v, "noun")
    values = pick(rng, v, "name", steps)
    for n in range(2 * steps):
        said = [rng.choice(SHAPES).format(adj=adj, noun=noun, value=values[n // 2])] if n % 2 == 0 else []
        api.capture(session(rng, v, n, said), f"s{n}", settings)
    api.index(settings)
    return f"Where is my {adj} {noun}?", values


def lines_of(packed: list[str]) -> list[str]:
    return [line for block in packed for line in block.split("\n")[1:] if line.strip() and line != "…"]


def first_with(lines: list[str], value: str) -> int:
    return next((n for n, line in enumerate(lines) if re.search(rf"\b{value}\b", line)), len(lines))


@pytest.mark.parametrize("seed", SEEDS)
def test_the_newest_value_opens_a_small_context_before_every_older_one(settings, seed):
    question, values = changed_fact(settings, seed)
    for budget in (200, 500, 1000):
        lines = lines_of(api.search(question, settings, budget_tokens=budget).packed)
        current = first_with(lines, values[-1])
        assert current < len(lines), (budget, values, lines)
        older = [first_with(lines, old) for old in values[:-1]]
        assert all(current <= n for n in older), (budget, values, lines)
        if budget >= 500:  # with room, the older values follow as history, newest first
            assert sorted(o for o in older if o < len(lines)) == [o for o in reversed(older) if o < len(lines)]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_later_line_naming_an_old_value_is_followed_without_the_question_words(settings, seed):
    """ "A was too far, so it went to B": no word of the question, but it names the value of
    the line that answers it, later: it comes first."""
    rng, v = make_vocab(seed)
    adj, noun = pick(rng, v, "adj"), pick(rng, v, "noun")
    old, new = pick(rng, v, "name", 2)
    api.capture(session(rng, v, 0, [f"My {adj} {noun} is at {old}."]), "s0", settings)
    api.capture(session(rng, v, 1, []), "s1", settings)
    api.capture(session(rng, v, 2, [f"{old} was too {pick(rng, v, 'qualifier')}, so it went to {new}."],
                        echo=False), "s2", settings)
    api.index(settings)
    lines = lines_of(api.search(f"Where is my {adj} {noun}?", settings, budget_tokens=500).packed)
    assert first_with(lines, new) < len(lines), lines
    assert first_with(lines, new) <= first_with(lines, old), lines


@pytest.mark.parametrize("seed", SEEDS)
def test_the_opening_holds_the_users_statements_not_echoes_or_greetings(settings, seed):
    """At a small budget: no assistant line echoing the user, no turn capture found nothing in
    (a greeting holding a word of the question)."""
    rng, v = make_vocab(seed)
    adj, noun, value = pick(rng, v, "adj"), pick(rng, v, "noun"), pick(rng, v, "name")
    messages = session(rng, v, 0, [f"My {adj} {noun} is at {value}."])
    messages.insert(0, {"id": "hi", "role": "user", "timestamp": f"{day_of(0)}T08:59:00Z", "content": "Hi!"})
    api.capture(messages, "s0", settings)
    api.index(settings)
    packed = api.search(f"Where is my {adj} {noun}?", settings, budget_tokens=200).packed
    opening = packed[0].split("\n")[1:]
    assert any(value in line and line.startswith("user:") for line in opening), packed
    assert not any(line.startswith("assistant:") and value in line for line in opening), packed


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_as_of_a_day_no_later_line_opens_the_context(settings, seed):
    question, values = changed_fact(settings, seed)
    as_of = day_of(2)  # the second value was said that day, the third two weeks later
    lines = lines_of(api.search(question, settings, budget_tokens=300, as_of=as_of).packed)
    assert first_with(lines, values[1]) < len(lines) and first_with(lines, values[2]) == len(lines), lines
    assert first_with(lines, values[1]) <= first_with(lines, values[0]), lines


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_a_question_in_the_past_tense_is_packed_as_ranked_evidence(settings, seed):
    """ "Where was my X?" asks about what was: the context is the ranked evidence with its
    neighbours, exactly as without the opening."""
    question, _ = changed_fact(settings, seed)
    past = question.replace("Where is", "Where was")
    assert asks_now(question) and not asks_now(past)
    with_opening = api.search(past, settings, budget_tokens=300).packed
    without = api.search(past, settings.model_copy(update={"pack_answers_tokens": 0}), budget_tokens=300).packed
    assert with_opening == without


def test_the_tense_of_a_question_is_its_first_auxiliary():
    assert asks_now("Which city is Pri living in these days?")
    assert asks_now("What's the dog called?") and asks_now("How much does she pay now?")
    assert asks_now("他现在住在哪里？")  # no English auxiliary: what holds now
    assert not asks_now("When did Melanie paint a sunrise?")
    assert not asks_now("Where was Rachel living in February?")


@pytest.mark.parametrize("seed", SEEDS)
def test_what_a_budget_packs_every_larger_budget_packs_with_the_opening(settings, seed):
    """The opening and the blocks after it are one sequence: a larger budget holds every line a
    smaller one held (a line shown in part counts by its kept words)."""
    question, values = changed_fact(settings, seed, steps=4)
    rng, v = make_vocab(seed + 1)
    asked = [question, f"What is my {pick(rng, v, 'filler')}?", question.replace("Where is my", "Is my")]
    for q in asked:
        held: set[str] = set()
        for budget in (60, 120, 200, 300, 400, 500, 700, 1000, 1500):
            lines = {re.sub(r"\s*\[\[[^\]]*\]\]$", "", line) for line in lines_of(api.search(q, settings, budget_tokens=budget).packed)}
            assert held <= lines, (q, budget, held - lines)
            held = lines


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_a_greeting_opens_no_block_after_the_opening(settings, seed):
    """The ranked blocks after the opening do not open on a turn capture found nothing in
    ("Hi!"): it may stand beside a line that says something, as its context, not lead."""
    rng, v = make_vocab(seed)
    adj, noun, value = pick(rng, v, "adj"), pick(rng, v, "noun"), pick(rng, v, "name")
    messages = session(rng, v, 0, [f"My {adj} {noun} is at {value} in the morning."])
    messages.insert(0, {"id": "hi", "role": "user", "timestamp": f"{day_of(0)}T08:59:00Z",
                        "content": "Hi! Good morning."})
    api.capture(messages, "s0", settings)
    api.index(settings)
    for budget in (200, 500):
        packed = api.search(f"Where is my {adj} {noun} in the morning?", settings, budget_tokens=budget).packed
        assert all(block.split("\n")[1] != "user: Hi! Good morning." for block in packed), packed


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_a_digest_restatement_does_not_push_the_newer_long_turn_out_of_the_opening(settings, seed):
    """A digest fact restating a clause of a long turn ("My X is at A.") scores far above the
    long turn it came from; it is shown once, as the turn, so it must not set the bar a newer
    long turn ("... moved my X to B ...") has to reach to open the context."""
    rng, v = make_vocab(seed)
    adj, noun = pick(rng, v, "adj"), pick(rng, v, "noun")
    old, new = pick(rng, v, "name", 2)

    def long_turn(statement: str) -> str:
        filler = [f"The {pick(rng, v, 'filler')} {pick(rng, v, 'filler')} was {pick(rng, v, 'qualifier')}."
                  for _ in range(14)]
        return " ".join([*filler[:4], statement, *filler[4:]])

    api.capture(session(rng, v, 0, [long_turn(f"My {adj} {noun} is at {old}.")], echo=False), "s0", settings)
    api.capture(session(rng, v, 1, []), "s1", settings)
    api.capture(session(rng, v, 2, [long_turn(f"Since then the {adj} {noun} sits at {new} for good.")],
                        echo=False), "s2", settings)
    root = settings.workspace
    daily = next(p for p in sorted((root / "daily").rglob("*.md")) if f"is at {old}" in p.read_text())
    number = next(n for n, line in enumerate(daily.read_text().split("\n"), 1) if f"is at {old}" in line)
    node = root / "digest" / "wiki" / f"{noun.lower()}.md"
    node.parent.mkdir(parents=True, exist_ok=True)
    link = daily.relative_to(root).as_posix()
    node.write_text(f"---\nname: {noun}\ndescription: where it is\nformat: facts-1\n---\n\n# {noun}\n\n"
                    f"- {day_of(0)}: My {adj} {noun} is at {old}. [[{link}#L{number}]]\n")
    api.index(settings)
    lines = lines_of(api.search(f"Where is my {adj} {noun}?", settings, budget_tokens=500).packed)
    assert first_with(lines, new) < len(lines), lines
    assert first_with(lines, new) <= first_with(lines, old), lines


def test_of_two_lines_saying_the_same_words_the_higher_ranked_hits_is_kept_whatever_was_made_first():
    from memflow.tasks.recall.answers import _Line, _not_restated

    def line(hit: int, offset: int, who: str) -> _Line:
        text = "Moved to Porto last month."
        return _Line(hit, offset, date(2026, 4, 6), who, text, f"h{hit}#L{offset}", (f"h{hit}", offset),
                     {"porto": 1}, 1)
    for order in ([(3, 0), (0, 5), (1, 2)], [(1, 2), (0, 5), (3, 0)], [(0, 5), (3, 0), (1, 2)]):
        made = {place: line(*place, "user") for place in reversed(order)}  # made in another order than listed
        kept = _not_restated([made[place] for place in order])
        assert [(x.hit, x.offset) for x in kept] == [(0, 5)], order


def test_the_words_said_to_the_listener_come_off_as_one_loop_over_every_word_takes_them_off():
    """`_unaddressed` skips its loop over the words of most lines (no capitalised word set off
    by punctuation, single spaces); on random lines of names, words, punctuation, CJK sentence
    ends and odd spacing it says what that loop says."""
    from memflow.tasks.recall.answers import _SENTENCE_RE, _addressed, _unaddressed

    def one_loop(text: str) -> str:
        out = []
        for sentence in _SENTENCE_RE.split(text):
            words = sentence.split()
            out.append(" ".join(word for n, word in enumerate(words) if not _addressed(word, n, words)))
        return " ".join(out)

    rng = random.Random(11)
    pieces = ["Melanie", "Jo", "hey", "thanks", "Porto", "USA", "Émile", "éclair", "Łukasz", "x2", "R2D2", "the",
              "我们", "好", "。", "！", "？", ",", "，", "!", "?", ".", "~", "…", "“", "”", "'", ":", " ", "  ", "\t", "\n", "\u00a0"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) + rng.choice(["", " ", ""]) for _ in range(rng.randint(0, 14)))
        assert _unaddressed(text) == one_loop(text), repr(text)
