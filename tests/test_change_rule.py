"""The change rule on generated statements (issue #25): subjects, predicates, qualifiers and
values are pseudo-words drawn from vocabularies of several hundred per slot, so no word list in
the code can cover them; the seeds are not ones the rule was tuned on.

Pure checks of `change.relation` (thousands of pairs) and a pipeline run: captures over several
days with chains of values (A -> B -> C), qualifier pairs that must coexist, co-stated facts,
short statements and values that restate nothing, nightly dreams, then the digest, default
search and the packed context are checked for every question."""

from __future__ import annotations

import os
import random
from datetime import date, timedelta

import pytest
from helpers import misplaced_packed_lines

from memflow import api
from memflow.tasks.capture.conversation import auto_memory
from memflow.tasks.dream import digest
from memflow.tasks.dream.change import relation
from memflow.tasks.dream.statements import clauses
from memflow.tasks.dream.nightly import run_dream
from memflow.tasks.recall import search

# MEMFLOW_SEEDS=1,2,3 runs other seeds (a rule tuned to these would fail there)
SEEDS = [int(x) for x in os.environ.get("MEMFLOW_SEEDS", "11,29,47,83,101").split(",")]
_ONSETS = "b c d f g h j k l m n p r s t v z br dr gr kl pl st tr sk".split()
_VOWELS = "a e i o u ai ou".split()
_HAN = "岚浔珂瑶琪锦澜昕沐筠晞煜栩湘漪翎缇芮璟霁骁珩蔚"


def vocabulary(rng: random.Random, n: int, syllables: tuple[int, int] = (2, 3)) -> list[str]:
    """`n` distinct pseudo-words (consonant-vowel syllables: none ends in "-ed"; none is a
    function word such as "some", which is no name or value in any sentence, nor an English
    irregular past form such as "gave", which is a verb in any sentence, nor a pronoun such as
    "mine", which makes any sentence the speaker's, nor a negation such as "none", nor a number
    word such as "nine", which is a value in any sentence)."""
    from memflow.tasks.dream.change import negated
    from memflow.tasks.dream.words import EN_NUMBERS, IRREGULAR_PAST
    from memflow.tasks.dream.consolidation import _ME_RE, _YOU_RE
    from memflow.tasks.ground.tokenize import STOPWORDS

    words: set[str] = set()
    while len(words) < n:
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.randint(*syllables)))
        if word not in STOPWORDS and word not in IRREGULAR_PAST and word not in EN_NUMBERS and not _ME_RE.fullmatch(word) \
                and not _YOU_RE.fullmatch(word) and not negated(word):
            words.add(word)
    return sorted(words)


def han_vocabulary(rng: random.Random, n: int) -> list[str]:
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.sample(_HAN, 2)))
    return sorted(words)


def make_vocab(seed: int) -> tuple[random.Random, dict[str, list[str]]]:
    """A seeded generator and its slots: 400 pseudo-words each, none in two slots (names
    capitalised), 300 Chinese words."""
    rng = random.Random(seed)
    names = ("noun", "adj", "verb", "object", "qualifier", "unit", "name", "filler")
    # the slots share no word: a qualifier that is also the unit, or a name that is also the
    # noun, makes another sentence than the one a test means; "filler" is for text around the
    # statements (logs, configs, replies), so a question's words are not all over it
    words = vocabulary(rng, 400 * len(names))
    rng.shuffle(words)
    slots = {slot: sorted(words[400 * n:400 * (n + 1)]) for n, slot in enumerate(names)}
    slots["name"] = [w.capitalize() for w in slots["name"]]
    slots["han"] = han_vocabulary(rng, 300)
    return rng, slots


@pytest.fixture(params=SEEDS)
def vocab(request):
    return make_vocab(request.param)


def pick(rng, slots, slot, k=1):
    return rng.sample(slots[slot], k) if k > 1 else rng.choice(slots[slot])


def test_one_slot_with_a_new_value_stands_beside_the_old_one(vocab):
    """"I live in Leeds", later "I live in Bristol": no word of the new statement says the old
    one stopped holding (a second home, a second thing of that kind are as likely), so offline
    both stand, dated, and recall puts the newer first. Only a model may decide they answer
    one question."""
    rng, v = vocab
    for _ in range(200):
        adj, noun, verb = pick(rng, v, "adj"), pick(rng, v, "noun"), pick(rng, v, "verb")
        a, b = pick(rng, v, "name", 2)
        n1, n2 = rng.sample(range(2, 5000), 2)
        unit = pick(rng, v, "unit")
        pairs = [
            (f"The {adj} {noun} {verb}s {a}.", f"The {adj} {noun} {verb}s {b}."),
            (f"The {adj} {noun} is {n1} {unit}.", f"The {adj} {noun} is now {n2} {unit}."),
            (f"I {verb} in {a}.", f"I {verb} in {b}."),
            (f"My {noun} is {a}.", f"My new {noun} is {b}."),
            (f"Our {noun} {verb}s {n1} {unit}.", f"Our {noun} {verb}s {n2} {unit} now."),
        ]
        for old, new in pairs:
            assert relation(new, old) is None, (old, new)


def test_a_name_equated_with_a_possessive_says_the_same_either_way_round(vocab):
    """"Priya is my manager" after "My manager is Priya": the copula between a name and "my X"
    is read both ways, the same statement again; another name there stands beside it."""
    rng, v = vocab
    for _ in range(200):
        noun, noun2 = pick(rng, v, "noun", 2)
        a, b = pick(rng, v, "name", 2)
        det = rng.choice(["My", "Our", "His", "Her", "Their"])
        for old, new in ((f"{det} {noun} is {a}.", f"{b} is {det.lower()} {noun} now."),
                         (f"{a} is {det.lower()} {noun}.", f"{det} {noun} is {b} now."),
                         (f"{a} is {det.lower()} {noun}.", f"{b} is {det.lower()} {noun} now.")):
            assert relation(new, old) is None, (old, new)
        for old, new in ((f"{a} is {det.lower()} {noun}.", f"{b} is {det.lower()} {noun2} now."),
                         (f"{det} {noun} at {pick(rng, v, 'qualifier')} is {a}.", f"{b} is {det.lower()} {noun} now.")):
            assert relation(new, old) is None, (old, new)
        assert relation(f"{a} is {det.lower()} {noun}.", f"{det} {noun} is {a}.") == "same"


def test_naming_the_old_value_is_a_change(vocab):
    rng, v = vocab
    for _ in range(200):
        noun, verb = pick(rng, v, "noun"), pick(rng, v, "verb")
        a, b = pick(rng, v, "name", 2)
        n1, n2 = rng.sample(range(2, 900), 2)
        unit = pick(rng, v, "unit")
        o1, o2 = pick(rng, v, "object", 2)
        pairs = [
            (f"We {verb} {a} for the {noun}.", f"We moved the {noun} from {a} to {b}."),
            (f"The {noun} {verb}s {a}.", f"The {noun} {verb}s {b} instead of {a}."),
            (f"The {noun} takes {n1}.{n2 % 10} {unit}.", f"The {noun} went from {n1}.{n2 % 10} {unit} down to {n2} {unit}."),
            (f"I always {verb} a {o1} before work.", f"I switched from {o1} to {o2} in the morning."),
            # the old statement restated whole as the object of a verb, its value set against
            (f"The {noun} {o1} is {n1} {unit}.", f"We {verb}ed the {noun} {o1} from {n1} to {n2} {unit}."),
        ]
        for old, new in pairs:
            assert relation(new, old) == "replaces", (old, new)
        other = pick(rng, v, "noun")
        if other != noun:  # another attribute, another thing: the same numbers are no change of it
            for new in (f"We {verb}ed the {noun} {o2} from {n1} to {n2} {unit}.",
                        f"We {verb}ed the {other} {o1} from {n1} to {n2} {unit}."):
                assert relation(new, f"The {noun} {o1} is {n1} {unit}.") is None, new


def test_a_change_with_a_clause_or_a_negated_detail_beside_it_is_still_a_change(vocab):
    """What `memflow demo` showed a new user: "Correction: our payments team has 8 engineers
    now, two people joined this week" stood beside "Our payments team has 6 engineers" (a
    clause of its own after the comma), and "I switched from espresso to green tea in the
    morning; coffee was ruining my sleep" beside "I always drink a double espresso before my
    first meeting, no sugar" (the old line's "no" read as a turn of polarity, and the part after
    the semicolon as more of the first clause). A part after a comma that opens on a subject
    of its own leaves the change said before it; one that may qualify it ("when ...", an -ing
    form, a preposition) does not; a negation bearing only on words the other side lacks turns
    nothing and hides no change; a clause after a semicolon is a statement of its own."""
    rng, v = vocab
    for _ in range(150):
        noun, obj, obj2, unit = pick(rng, v, "noun"), pick(rng, v, "object"), pick(rng, v, "object"), pick(rng, v, "unit")
        verb, verb2, adj = pick(rng, v, "verb"), pick(rng, v, "verb"), pick(rng, v, "adj")
        o1, o2, o3 = pick(rng, v, "object", 3)
        n1, n2 = rng.sample(range(2, 900), 2)
        label = rng.choice(["", "Correction: ", "Update: "])
        old = f"Our {noun} {obj} has {n1} {unit}s"
        lead = rng.choice([str(rng.randint(2, 9)), "my", "the", "our", pick(rng, v, "name")])
        new = f"{label}{'our' if label else 'Our'} {noun} {obj} has {n2} {unit}s now, {lead} {obj2}s {verb2}ed this week."
        assert relation(new, old) is None, (old, new)  # no old value named: beside it, newer first
        for qualifier in (f"when the {obj2} is {adj}", f"{verb2}ing on the {obj2}", f"on {adj} {obj2}s",
                          f"{adj}ly on the {obj2}"):
            qualified = f"Our {noun} {obj} has {n2} {unit}s, {qualifier}."
            assert relation(qualified, old) is None, (old, qualified)
        habit = f"I always {verb} a {adj} {o1} before my first {noun}, no {o3}."
        switched = f"I switched from {o1} to {o2} in the morning"
        assert relation(switched, habit) == "replaces", (habit, switched)
        assert relation(f"I {verb} {o2}, no {o3}.", f"I {verb} {o1} with {o3}.") is None  # another fact
        assert relation(f"I don't {verb} {o2}.", f"I {verb} {o1}.") is None
        said = f"{switched}; {pick(rng, v, 'noun')} was {verb2}ing my {obj2}."
        assert clauses(said) == [switched, said.split("; ")[1].rstrip(".")], clauses(said)


def test_other_qualifiers_subjects_and_events_stand_beside(vocab):
    rng, v = vocab
    for _ in range(200):
        verb, noun = pick(rng, v, "verb"), pick(rng, v, "noun")
        o1, o2 = pick(rng, v, "object", 2)
        q1, q2 = pick(rng, v, "qualifier", 2)
        a, b = pick(rng, v, "name", 2)
        n1, n2 = rng.sample(range(2, 900), 2)
        unit = pick(rng, v, "unit")
        pairs = [
            (f"I {verb} {o1} at {q1}.", f"I {verb} {o2} at the {q2}."),      # another occasion
            (f"I {verb} {o1} at {q1}.", f"I {verb} {o1} at {q2}."),          # same thing, another time
            (f"The {noun} {verb}s {o1} during {q1}.", f"The {noun} {verb}s {o1} during {q2}."),
            (f"I live in {a}.", f"My {noun} lives in {b}."),                  # another subject
            (f"My {noun} lives in {a}.", f"I moved from {a} to {b}."),
            (f"I visited {a}.", f"I visited {b}."),                           # two events
            (f"We went to the {o1} {noun}.", f"We went to the {o2} {noun}."),
            (f"I {verb} {n1} {unit}.", f"I {verb} {n2} {unit} on {q1}s."),   # a qualifier added
            (f"I {verb} {o1} {q1}.", f"I {verb} {o2} {q2}."),                 # two slots differ
            (f"I {verb} at {a}.", f"I {verb}ed at {b} before {a}."),          # the old value still the later
            (f"We {verb} {a}.", f"We {verb} {b} with {a}."),                  # side by side
        ]
        # a negation bearing on what only one of them says ("Keep going and never give up" ->
        # "Keep going", "I won't quit, no matter what" -> "I won't quit") turns nothing
        pairs.append((f"I {verb} the {o1} and never {pick(rng, v, 'verb')} the {o2}.", f"I {verb} the {o1}."))
        pairs.append((f"I won't {verb} the {o1}, no {q1} what.", f"I won't {verb} the {o1}."))
        # two statements whose subject is only a pronoun for something said elsewhere need not
        # be about one thing ("It costs 40 euros", "It costs 50 euros")
        pronoun = rng.choice(["It", "They", "He", "She"])
        pairs.append((f"{pronoun} {verb}s {n1} {unit}s.", f"{pronoun} {verb}s {n2} {unit}s."))
        pairs.append((f"{pronoun} {verb} in {a}.", f"{pronoun} {verb} in {b}."))
        that = rng.choice(["That", "This"])
        pairs.append((f"{that} is {n1} {unit}s.", f"{that} is {n2} {unit}s."))
        # an old value and a new one of its kind with "to" far between them is no "from A to B"
        pairs.append((f"I {verb} {n1} {o1}s.", f"I {verb} {n1} {o1}s to the {noun} {q1}s and {pick(rng, v, 'verb')} "
                                                f"your {n2} {o2}s."))
        prep = rng.choice(["behind", "in", "at", "near", "under", "on"])
        adj = pick(rng, v, "adj")
        if {a.lower(), b.lower()} & {noun, adj, q1}:  # the slots' vocabularies may share a word
            continue
        pairs.append((f"The {noun} {prep} {a} is {adj} on {q1}s.", f"The {noun} {prep} {b} is {adj} on {q1}s."))  # which one
        for old, new in pairs:
            assert relation(new, old) is None, (old, new)
        from memflow.tasks.dream.facts import subject_of
        assert subject_of(pairs[-1][0]).name.lower() == f"{noun} {prep} {a}".lower(), subject_of(pairs[-1][0])


def test_an_occasion_changes_only_when_the_new_one_is_set_against_it(vocab):
    """An occasion (a prepositional phrase after the object) is kept apart from the value it
    qualifies, but a statement that sets a new one against it outright ("on Tuesdays instead of
    Fridays", "rather than", "from Fridays to Tuesdays") and restates what is done is a change;
    the same occasion beside another value, or the contrast about something else, is not."""
    rng, v = vocab
    for _ in range(200):
        verb, noun, other = pick(rng, v, "verb"), pick(rng, v, "noun"), pick(rng, v, "object")
        q1, q2, a, b = pick(rng, v, "name", 4)  # capitalised occasions (days, places), people
        old = f"We {verb} the {noun} on {q1}."
        for new in (f"We now {verb} the {noun} on {q2} instead of {q1}.",
                    f"We {verb} the {noun} on {q2} rather than {q1}.",
                    f"We moved the {noun} {verb} from {q1} to {q2}."):
            assert relation(new, old) == "replaces", (old, new)
        for new in (f"We moved the {other} from {q1} to {q2}.",          # another thing moved
                    f"We {verb} the {other} on {q2} instead of {q1}.",    # another object
                    f"We {verb} the {noun} on {q1} and {q2}."):           # an occasion added
            assert relation(new, old) is None, (old, new)
        assert relation(f"I have {other} with {b} on {q1}.", f"I have {noun} with {a} on {q1}.") is None


def test_a_statement_turned_negative_is_a_change_never_the_same(vocab):
    """"I drink coffee" then "I do not drink coffee": negation words are stopwords, so the
    words alone read the second as the first again (CORROBORATE: the denial cited as evidence of
    what it denies). A statement restated with its polarity turned is a change, either way; a
    negated statement about something else stands beside; neither is ever the same."""
    rng, v = vocab
    for _ in range(200):
        verb, noun = pick(rng, v, "verb"), pick(rng, v, "noun")
        o1, o2 = pick(rng, v, "object", 2)
        a, b = pick(rng, v, "han", 2)
        old = rng.choice([f"I {verb} {o1}.", f"We {verb} the {o1} every {noun}.", f"The {noun} {verb}s {o1}."])
        subject, rest = old.split(" ", 1) if not old.startswith("The") else (f"The {noun}", old[len(f"The {noun} "):])
        turned = rng.choice([f"{subject} do not {rest}", f"{subject} don't {rest[:-1]} anymore.",
                             f"{subject} no longer {rest}", f"{subject} never {rest}"]).replace("The", "The", 1)
        if old.startswith("The"):
            turned = rng.choice([f"The {noun} no longer {verb}s {o1}.", f"The {noun} never {verb}s {o1}."])
        assert relation(turned, old) == "replaces", (old, turned)
        assert relation(old.replace(".", " again."), turned) == "replaces", (turned, old)
        other = turned.replace(o1, o2)
        assert relation(other, old) is None, (old, other)
        narrower = f"{turned[:-1]} {rng.choice(['on', 'at', 'during'])} {pick(rng, v, 'qualifier')}."
        assert relation(narrower, old) is None, (old, narrower)  # not so on one occasion only
        assert relation(f"我不{a}{b}了。", f"我{a}{b}。") == "replaces"
        assert relation(f"我不{a}{b}了。", f"我{b}{a}。") is None


def test_the_same_statement_again_is_the_same(vocab):
    rng, v = vocab
    for _ in range(100):
        noun, verb, a = pick(rng, v, "noun"), pick(rng, v, "verb"), pick(rng, v, "name")
        assert relation(f"I {verb} in {a} now.", f"I {verb} in {a}.") == "same"
        assert relation(f"The {noun} {verb}s {a}!", f"the {noun} {verb}s {a}.") == "same"


def test_chinese_slots_stand_beside_and_a_named_old_value_changes(vocab):
    rng, v = vocab
    for _ in range(200):
        thing, q1, q2, x, y = rng.sample(v["han"], 5)
        n1, n2 = rng.sample(range(2, 99), 2)
        now = rng.choice(["现在", "目前", "如今"])  # "now": a function word, as in English
        for new, old in ((f"我的{thing}是{y}。", f"我的{thing}是{x}。"), (f"我住在{y}。", f"我住在{x}。"),
                         (f"我{now}住在{y}。", f"我住在{x}。"), (f"{thing}有{n2}个人。", f"{thing}有{n1}个人。")):
            assert relation(new, old) is None, (new, old)  # no word says the old stopped holding
        assert relation(f"我{now}住在{x}。", f"我住在{x}。") == "same"
        # the verb before 成 is any verb (改, 换, or a generated character): no list of them
        for turn in ("改", rng.choice(_HAN)):
            assert relation(f"我的{thing}从{x}{turn}成{y}了。", f"我的{thing}是{x}。") == "replaces", turn
        assert relation(f"我在{q2}喝{y}。", f"我在{q1}喝{x}。") is None
        assert relation(f"我去了{y}。", f"我去了{x}。") is None


def test_a_line_with_several_statements_is_split(vocab):
    rng, v = vocab
    for _ in range(100):
        v1, v2, noun = pick(rng, v, "verb", 2) + [pick(rng, v, "noun")]
        a, b = pick(rng, v, "name", 2)
        assert clauses(f"I {v1} in {a} and {v2} at the {noun}.") == [f"I {v1} in {a}", f"I {v2} at the {noun}"]
        assert clauses(f"Our {noun} has 6 {v1}s, and we {v2} on {b}.") == [f"Our {noun} has 6 {v1}s", f"we {v2} on {b}"]
        assert len(clauses(f"I {v1} {a} and {b}.")) == 1   # one statement about two names
        # a comma before a clause of its own (a name or "I", then a word in lower case)
        o1, o2 = pick(rng, v, "object", 2)
        assert clauses(f"My {noun} is {a}, {b} {v2}s to the {o1}.") == [f"My {noun} is {a}", f"{b} {v2}s to the {o1}"]
        assert clauses(f"I {v1} the {o1} now, I {v2} it in {a}.") == [f"I {v1} the {o1} now", f"I {v2} it in {a}"]
        for whole in (f"I {v1} {a}, {b} and {pick(rng, v, 'name')}.",      # a list of names
                      f"I {v1} in {a}, near the {o1}.",                     # a phrase, no clause
                      f"{a}, my {noun}, {v2}s the {o2}."):                  # an aside
            assert clauses(whole) == [whole], whole


def test_no_statement_is_cut_inside_an_attachment_or_an_aside(vocab):
    """What a chat sent with a message ("[image: a photo of a table with snacks and a cell
    phone]") and an aside in parentheses hold "and", commas and full stops of their own: a line
    is split into statements only outside them, so no fact ends or starts inside a bracket."""
    from memflow.schemas.dream import Evidence
    from memflow.tasks.dream.consolidation import split_fact

    rng, v = vocab
    for _ in range(100):
        v1, v2 = pick(rng, v, "verb", 2)
        noun, obj, adj = pick(rng, v, "noun"), pick(rng, v, "object"), pick(rng, v, "adj")
        a, b, c = pick(rng, v, "object", 3)
        name = pick(rng, v, "name")
        inside = rng.choice([f"a {noun} with {a}, {b} and {c}", f"{a} and {b}. {name.upper()} {c}",
                             f"{a}; {b}, but {c}"])
        kind = rng.choice(["[image: a photo of {}]", "[attachment: {}]", "({})"])
        first, second = f"I {v1} the {adj} {noun} in {name}.", f"My {obj} {v2}s every day."
        line = f"{first} {second} {kind.format(inside)}"
        said = [e.text for e in split_fact(Evidence(path="daily/2026-01-01/n.md", lines=[4], text=line))]
        assert said[0] == first, said
        assert said[-1].endswith(kind.format(inside)), said  # whole, with the statement it was sent with
        for text in said:
            assert text.count("[") == text.count("]") and text.count("(") == text.count(")"), said


def test_a_part_after_and_keeps_the_head_it_continues(vocab):
    """A subjectless part after "and" gets the first part's pronoun only when that pronoun alone
    is what it continues; after an infinitive, an auxiliary or a second clause, or with no
    pronoun to lend, the statement stays whole (a borrowed pronoun would state something nobody
    said; a part without a subject, "handles 500 rps", is no fact on its own)."""
    rng, v = vocab
    for _ in range(100):
        v1, v2, v3 = pick(rng, v, "verb", 3)
        adj, noun, obj = pick(rng, v, "adj"), pick(rng, v, "noun"), pick(rng, v, "object")
        pronoun = rng.choice(["I", "We", "They", "You"])
        unit = pick(rng, v, "unit")
        for line in (f"{pronoun} {v1} to {v2} {adj} and {v3} my {noun}.",        # infinitive
                     f"It {v1} me of the {noun} I {v2} while {v3}ing the {obj}.",  # a second subject
                     f"The {noun} {v1}s 3 {obj}s and {v2}s 500 {unit}s.",       # no pronoun to lend
                     f"I'm {v1}ing to the {noun} and will {v2} the {obj}.",      # an auxiliary opens it
                     f"{pronoun} {rng.choice(['will', 'can', 'should', 'might'])} {v1} {noun} and {v2} the {obj}.",
                     f"It is {adj}, so {pronoun.lower() if pronoun != 'I' else 'I'} {v1} my {noun} and {v2} the {obj}.",
                     # "and" between two nouns: the second has a verb of its own, or heads a clause
                     f"{pronoun} {v1} that the {noun} and {obj} {rng.choice(['are', 'were', 'will'])} {adj}.",
                     f"{pronoun} {v1} the {noun} and {obj} {rng.choice(['you', 'we', 'she'])} {v2}ed about."):
            parts = clauses(line)
            assert parts == [line], (line, parts)
        # the pronoun's own verb right after it: one statement each, the pronoun borrowed
        assert clauses(f"{pronoun} {v1} to the {noun} and {v3} my {obj}.") == [
            f"{pronoun} {v1} to the {noun}", f"{pronoun} {v3} my {obj}"]


def test_a_named_things_measure_restated_stands_beside(vocab):
    """"My dog Rex is 3 years old" -> "Rex is 4 years old now": no old value named, so offline
    both stand, dated (recall shows the newer first); nor does any near miss replace it."""
    rng, v = vocab
    for _ in range(200):
        noun, other_noun, verb, verb2 = *pick(rng, v, "noun", 2), *pick(rng, v, "verb", 2)
        name, other = pick(rng, v, "name", 2)
        unit, unit2 = pick(rng, v, "unit", 2)
        n1, n2 = rng.sample(range(2, 999), 2)
        old = f"My {noun} {name} {verb}s {n1} {unit}s."
        assert relation(f"{name} {verb}s {n2} {unit}s now.", old) is None, old
        ours = f"Our {noun} {name} {verb}s"
        assert relation(f"{ours} {n2} {unit}s.", f"{ours} {n1} {unit}s.") is None
        assert relation(f"{name} {verb}s {n2} {unit}s now, up from {n1}.", old) is None  # "up from": no "from X to Y"
        assert relation(f"{ours} {n1} -> {n2} {unit}s.", f"{ours} {n1} {unit}s.") == "replaces"
        for new in (f"{other} {verb}s {n2} {unit}s now.",          # another name
                    f"{name} {verb2}s {n2} {unit}s now.",          # another predicate
                    f"{name} {verb}s {n2} {unit2}s now.",          # another unit
                    f"My {other_noun} {name} {verb}s {n2} {unit}s.",  # said of another thing
                    f"{name} {verb}s {n2} {unit}s at the {other_noun}."):  # a qualifier added
            assert relation(new, old) != "replaces", (new, old)
        assert relation(f"{name} {verb}s {n1} {unit}s.", old) != "replaces"


def test_a_measure_said_at_a_new_level_stands_beside(vocab):
    """"The p99 latency is 850 ms which is too slow" -> "Pooling helped a lot: p99 is down to
    310 ms" names no old value: both stand (recall orders them by time). Formerly: one number each, the same unit (or a version: a decimal in both), the same noun
    phrase or it with a word fewer, the old verb said again or a new one that sets the level
    ("grew to"), the old qualifiers kept and nothing added after the number. Near misses: another
    unit, another word in the noun phrase, a pronoun, the old verb not said again, a qualifier
    dropped or added, a change by an amount ("by"), a whole number with no unit."""
    from memflow.tasks.dream.words import PREPOSITIONS
    from memflow.tasks.ground.tokenize import STOPWORDS

    rng, v = vocab
    for _ in range(200):
        n1, n2, q1, q2, a1, a2 = *pick(rng, v, "noun", 2), *pick(rng, v, "qualifier", 2), *pick(rng, v, "adj", 2)
        verb, verb2 = pick(rng, v, "verb", 2)
        unit, unit2 = pick(rng, v, "unit", 2)
        x, y = rng.sample(range(2, 5000), 2)
        label = " ".join(pick(rng, v, "object", 2)).capitalize()
        name = pick(rng, v, "name")
        short = rng.choice("KMGTPXZ") + rng.choice("aeiou") + rng.choice("BHLNRW")
        while short.lower() in STOPWORDS or short.lower() in PREPOSITIONS:  # "PeR", "MeN": function words
            short = rng.choice("KMGTPXZ") + rng.choice("aeiou") + rng.choice("BHLNRW")
        changes = [
            (f"The {n1} {n2} is {x} {unit} which is too {a1}.", f"{label}: {n1} is down to {y} {unit}."),
            (f"The {n1} {n2} is {x} {unit}s per {q1}.", f"The {n1} {n2} {verb}ed to {y} {unit}s per {q1}."),
            (f"Our {name} {n1} is {x}.{y % 10}", f"{name} is on {y}.{x % 10} now."),
            (f"The {n1} {verb}s {x} {unit}s on the {q1}.", f"The {n1} {verb}s {y} {unit}s on the {q1} now."),
            (f"The {n1} has {x} {unit}s.", f"The {n1} is up to {y} {unit}s."),
            # said by "I"/"we" with the measured thing as object, each verb setting it "to" a level
            (f"I set the {n1} {n2} to {x} {unit}s.", f"We {verb}ed the {n1} {n2} to {y} {unit}s."),
            # a passive state, a unit written as a short name ("capped at 128 MiB")
            (f"The {n1} is {verb}ed at {x} {short}.", f"The {n1} is {verb}ed at {y} {short} now."),
        ]
        for old, new in changes:
            assert relation(new, old) is None, (old, new)
        old = f"The {n1} {a1} {n2} is {x} {unit} on the {q1}."
        for new in (f"The {n1} {a1} {n2} is down to {y} {unit2} on the {q1}.",   # another unit
                    f"The {n1} {a2} {n2} is down to {y} {unit} on the {q1}.",    # another noun phrase
                    f"It is down to {y} {unit} on the {q1}.",                    # a pronoun
                    f"The {n1} {a1} {n2} is down to {y} {unit}.",                # a qualifier dropped
                    f"The {n1} {a1} {n2} is down to {y} {unit} on the {q1} at the {q2}.",  # one added
                    f"The {n1} {a1} {n2} {verb}ed by {y} {unit} on the {q1}."):  # an amount, not a level
            assert relation(new, old) is None, (old, new)
        old = f"The {n1} {verb}s {x} {unit}s."
        for new in (f"The {n1} is down to {y} {unit}s.",  # the old verb not said again
                    f"The {n1} {verb2}s {y} {unit}s."):  # another verb
            assert relation(new, old) is None, (old, new)
        # the number in a relative clause of the subject: the statement is about something else
        assert relation(f"The {n1} {verb}s at {y} {unit}s now.",
                        f"The {a1} {n1} that {verb}s at {x} {unit}s {verb2}s {name}.") is None
        sent, gave = rng.sample(["sent", "gave", "brought", "took", "sold"], 2)  # events, not levels
        assert relation(f"We {gave} the {n1} to {y} {unit}s.", f"We {sent} the {n1} to {x} {unit}s.") is None


def test_two_statements_each_of_its_own_day_are_two_events(vocab):
    """"Back on Drisdanseir today" and, a session later, "Back on Zukcro today": each says what
    its day was, so neither replaces the other; the same statement again is still the same."""
    rng, v = vocab
    for _ in range(200):
        a, b = pick(rng, v, "name", 2)
        verb, o1, o2 = pick(rng, v, "verb"), *pick(rng, v, "object", 2)
        x, y = pick(rng, v, "han", 2)
        day = rng.choice(["today", "tonight", "yesterday", "this morning"])
        for old, new in ((f"Back on {a} {day}.", f"Back on {b} {day}."),
                         (f"I {verb} the {o1} {day}.", f"I {verb} the {o2} {day}."),
                         (f"The {o1} is {rng.randint(2, 99)} {o2}s {day}.", f"The {o1} is {rng.randint(100, 999)} {o2}s {day}."),
                         (f"我今天{verb}{x}。", f"我今天{verb}{y}。")):
            assert relation(new, old) is None, (old, new)
            assert relation(old, old) == "same"


def test_a_part_opening_on_an_ing_form_continues_the_verb(vocab):
    """"I usually go climbing on Tuesdays and swimming on Fridays": the part after "and" opens
    on an -ing form that continues the first part's verb, so it borrows what comes before the
    first part's own -ing form ("I usually go swimming on Fridays"), never the pronoun alone ("I
    swimming on Fridays" was a fact in the digest); with no -ing form to line up with, it stays
    joined. Read from the ending's shape, not from a list of activities."""
    rng, v = vocab
    for _ in range(100):
        v1, g1, g2 = pick(rng, v, "verb", 3)
        adv, (q1, q2) = pick(rng, v, "adj"), pick(rng, v, "qualifier", 2)
        pronoun = rng.choice(["I", "We", "They"])
        line = f"{pronoun} {adv}ly {v1} {g1}ing on {q1}s and {g2}ing on {q2}s."
        assert clauses(line) == [f"{pronoun} {adv}ly {v1} {g1}ing on {q1}s",
                                 f"{pronoun} {adv}ly {v1} {g2}ing on {q2}s"], (line, clauses(line))
        line = f"{pronoun} {v1} {g1}ing and {g2}ing the {q1}."
        assert clauses(line) == [f"{pronoun} {v1} {g1}ing", f"{pronoun} {v1} {g2}ing the {q1}"], line
        line = f"{pronoun} {v1} to the {q1} and {g2}ing my {q2}."  # nothing to line up with
        assert clauses(line) == [line], (line, clauses(line))


def test_a_compound_subject_is_one_statement(vocab):
    """"My wife Lena and I have two kids": "and" joins two subjects, not two statements (it
    made "My wife Lena" a fact of its own); a part before "and" that is a clause of its own
    still splits."""
    rng, v = vocab
    for _ in range(100):
        noun, obj, verb, verb2 = pick(rng, v, "noun"), pick(rng, v, "object"), *pick(rng, v, "verb", 2)
        name, place = pick(rng, v, "name", 2)
        pronoun = rng.choice(["I", "we"])
        line = f"My {noun} {name} and {pronoun} {verb} two {obj}s."
        assert clauses(line) == [line], clauses(line)
        apart = f"{name} {verb}s in {place} and {pronoun} {verb2} the {obj}."
        assert clauses(apart) == [f"{name} {verb}s in {place}", f"{pronoun} {verb2} the {obj}"], clauses(apart)


def test_a_statement_pointing_back_stays_with_what_it_points_to(vocab):
    """A sentence opening on "it", "this", "that" (它, 这, 那) or on the third person ("she",
    "he", "they"; 她, 他) is joined to the statement before it instead of becoming a fact of its
    own (a node named "She is great"); the other statements of the line stay apart."""
    from memflow.schemas.dream import Evidence
    from memflow.tasks.dream.consolidation import split_fact

    rng, v = vocab
    for _ in range(100):
        v1, v2, v3 = pick(rng, v, "verb", 3)
        adj, noun, obj, name = pick(rng, v, "adj"), pick(rng, v, "noun"), pick(rng, v, "object"), pick(rng, v, "name")
        pointer = rng.choice(["It", "It's", "This", "That", "That's", "These", "Those", "She", "He", "They"])
        first, back, other = (f"I {v1} the {adj} {noun} in {name}.", f"{pointer} {v2}s my {obj} a lot.",
                              f"My {obj} {v3}s {rng.randint(2, 99)} {noun}s.")
        said = [e.text for e in split_fact(Evidence(path="daily/2026-01-01/n.md", lines=[4],
                                                    text=" ".join([first, back, other])))]
        assert said == [f"{first} {back}", other], said
        alone = [e.text for e in split_fact(Evidence(path="daily/2026-01-01/n.md", lines=[4], text=back))]
        assert alone == [back]  # nothing before it to point to: kept as it was said
        # after a short adverbial ("Right now it runs ...", "Currently they ..."): an adverb by its
        # shape (a pseudo-word in -ly) or a time word after a pseudo-word
        lead = rng.choice([f"{pick(rng, v, 'adj').capitalize()}ly", f"{pick(rng, v, 'adj').capitalize()} now", "Now"])
        led = f"{lead} {pointer.lower()} {v2}s on {rng.randint(2, 99)} {obj}s."
        said = [e.text for e in split_fact(Evidence(path="daily/2026-01-01/n.md", lines=[4], text=f"{first} {led} {other}"))]
        assert said == [f"{first} {led}", other], said
        for apart in (f"{v2.capitalize()} {pointer.lower()}!", f"We {v2} this!"):  # a verb and its object
            said = [e.text for e in split_fact(Evidence(path="daily/2026-01-01/n.md", lines=[4], text=f"{first} {apart}"))]
            assert said == [first, apart], said
        noun_phrase = f"The {noun} {pointer.lower()} {v2}s is {adj}."  # an article opens a noun phrase
        said = [e.text for e in split_fact(Evidence(path="daily/2026-01-01/n.md", lines=[4], text=f"{first} {noun_phrase}"))]
        assert said == [first, noun_phrase], said
        a, b, c = pick(rng, v, "han", 3)
        zh = f"我在{a}{b}。这{c}很{pick(rng, v, 'han')}。"
        assert [e.text for e in split_fact(Evidence(path="daily/2026-01-01/n.md", lines=[4], text=zh))] == [zh]


def test_a_message_opening_on_a_pronoun_is_about_what_the_speaker_said_before(vocab):
    """A statement opening on a pronoun that points back ("It only happens when ...") and naming
    nothing else goes to the node of the same speaker's statement before it in the note (it was
    a node named by its first words, `It only happens`, which gathered unrelated statements of
    every session); another speaker's statement before it, or none, lends nothing; a statement
    naming a thing of its own keeps its own node."""
    from memflow.schemas.notes import Note
    from memflow.tasks.dream.consolidation import extract_units

    rng, v = vocab
    for _ in range(40):
        noun, other = pick(rng, v, "noun", 2)
        v1, v2 = pick(rng, v, "verb", 2)
        a, b, c = pick(rng, v, "object", 3)
        # a verb joined to the pronoun ("They'll", "It'd") changes nothing (it named a node after
        # the verb: "They'll ship it" was a node `Ship`)
        pointer = rng.choice(["It", "They", "This", "That", "Those", "They'll", "It'll", "They've", "It'd", "They'd"])
        speaker, listener = rng.sample(["user: ", ""], 2)  # a role or no label (a named speaker's are theirs)
        before = f"The {noun} {v1}s {rng.randint(2, 999)} {a}s."
        back = f"{pointer} {rng.choice(['only', 'really', 'never', 'still'])} {v2}s when {b} and {c} share one {other}."
        named = f"{pointer} {rng.choice(['only', 'really', 'never', 'still'])} {v2}s the {pick(rng, v, 'name')} {other}."
        body = "\n".join(["# Notes", "", "## Facts", "",
                           f"- {speaker}{before} [[session/dialog/s.jsonl#L1]]",
                           f"- {speaker}{back} [[session/dialog/s.jsonl#L3]]",
                           f"- {listener}{back} [[session/dialog/s.jsonl#L4]]",
                           f"- {listener}{named} [[session/dialog/s.jsonl#L5]]", ""])
        units = [u for u, _ in extract_units([Note(path="daily/2026-01-01/n.md", body=body, text=body)])]
        by_line = {u.evidence[0].lines[0]: u for u in units}
        first, second, fourth = (by_line[n] for n in (5, 6, 8))
        assert second.subject == first.subject and second.name == first.name, (before, back, second.name)
        # another speaker's statement before it lends nothing, and with nothing to point to it
        # is no unit (left in the daily note): not a node named by its first words
        assert 7 not in by_line, by_line.get(7)
        assert fourth.name == named.split()[4], fourth.name  # it names a thing of its own


def test_a_title_or_an_initial_does_not_end_a_sentence(vocab):
    """"My dentist is Dr. Lee." stays one statement (it was cut into "My dentist is Dr." and
    a lost "Lee."): a period after an initial or a capitalised abbreviation without a vowel
    (generated: no list of titles) does not end the sentence; after a word it does."""
    from memflow.schemas.dream import Evidence
    from memflow.tasks.dream.consolidation import split_fact

    rng, v = vocab
    consonants = "bcdfghjklmnpqrstvwxz"
    for _ in range(100):
        noun, obj, verb = pick(rng, v, "noun"), pick(rng, v, "object"), pick(rng, v, "verb")
        name, word = pick(rng, v, "name"), pick(rng, v, "name")
        title = rng.choice(consonants).upper() + "".join(rng.choice(consonants) for _ in range(rng.randint(0, 3)))
        first = f"My {noun} is {title}. {name}."
        second = f"I {verb} the {obj} with {word}."
        said = [e.text for e in split_fact(Evidence(path="daily/2026-01-01/n.md", lines=[4],
                                                    text=f"{first} {second}"))]
        assert said == [first, second], said


def test_between_people_a_reaction_to_what_the_other_sent_is_no_fact_of_the_speaker(vocab):
    """A statement opening on a pronoun that points back (it, this, that, these, those; 这, 那,
    它) with nothing of the speaker's before it: between people it reacts to what the other one
    said or sent, and is no fact of the speaker; with the speaker in it ("It was my X") it is
    kept, as is a statement of the speaker's own after which it comes (joined to it). Said to
    the assistant, kept as said."""
    from memflow.schemas.dream import Evidence
    from memflow.tasks.dream.consolidation import split_fact

    rng, v = vocab
    for _ in range(100):
        v1, v2 = pick(rng, v, "verb", 2)
        adj, noun, obj = pick(rng, v, "adj"), pick(rng, v, "noun"), pick(rng, v, "object")
        who, other = (n.capitalize() for n in pick(rng, v, "name", 2))
        people = frozenset({who, other})
        pointer = rng.choice(["It", "It's", "This", "That", "That's", "These", "Those"])
        back = rng.choice([f"{pointer} {v1}s so {adj}!", f"{pointer} {noun} is {adj}.",
                           f"{pointer} {v1}s like a {adj} {noun}."])
        mine = f"My {obj} {v2}s {rng.randint(2, 99)} {noun}s."

        def facts(text: str, between=people) -> list[str]:
            return [e.text for e in split_fact(Evidence(path="daily/2026-01-01/n.md", lines=[4],
                                                        text=f"{who}: {text}"), between)]

        assert facts(back) == []
        assert facts(f"{back} {mine}") == [f"{who}: {mine}"]
        assert facts(f"{mine} {back}") == [f"{who}: {mine} {back}"]  # points to the speaker's own
        owned = f"{pointer} {v1}s my {adj} {noun}."
        assert facts(owned) == [f"{who}: {owned}"]
        assert facts(back, frozenset()) == [f"{who}: {back}"]
        a, b = pick(rng, v, "han", 2)
        assert facts(f"这{a}真{b}！") == []
        assert facts(f"那是我的{a}{b}。") == [f"{who}: 那是我的{a}{b}。"]


def test_what_is_said_to_the_listener_or_asked_is_no_fact_of_the_speaker(vocab):
    """Between people, a statement about the one spoken to ("Your X looks Y", "You did Z";
    你...) is no fact of the speaker, nor is a question with an attachment after it; a statement
    naming the speaker, even beside a "you", is. Said to the assistant, "you" statements are
    the user's instructions: kept."""
    from memflow.schemas.dream import Evidence
    from memflow.schemas.notes import Note
    from memflow.tasks.dream.consolidation import people_in, split_fact

    rng, v = vocab
    for _ in range(100):
        v1, v2, v3 = pick(rng, v, "verb", 3)
        adj, noun, obj = pick(rng, v, "adj"), pick(rng, v, "noun"), pick(rng, v, "object")
        who, other = (n.capitalize() for n in pick(rng, v, "name", 2))
        people = frozenset({who, other})
        mine = rng.choice([f"I {v1} the {adj} {noun}.", f"My {obj} {v1}s {rng.randint(2, 99)} {noun}s.",
                           f"We {v1} your {noun} with my {obj}."])
        yours = rng.choice([f"Your {noun} {v2}s so {adj}!", f"You {v2} the {adj} {obj}.",
                            f"{v2.capitalize()} your {obj} well.", f"The {noun} {v2}s you.",
                            f"So {adj} of the {noun}, {other}!"])
        asked = f"Where did you {v3} the {noun}? [image: a photo of a {adj} {obj}]"
        parts = [mine, yours, asked]
        rng.shuffle(parts)
        line = Evidence(path="daily/2026-01-01/n.md", lines=[4], text=f"{who}: " + " ".join(parts))
        said = [e.text for e in split_fact(line, people)]
        assert said == [f"{who}: {mine}"], (parts, said)
        to_assistant = [e.text for e in split_fact(line)]
        # a line read out of its note: a label shaped as a name is its speaker
        label = f"{who}: "
        assert to_assistant == [f"{label}{p}" for p in parts if p != asked], (parts, to_assistant)
        a, b = pick(rng, v, "han", 2)
        for zh, kept in ((f"你的{a}{b}很好。", False), (f"我给你{a}了{b}。", True)):
            facts = split_fact(Evidence(path="daily/2026-01-01/n.md", lines=[4], text=f"{who}: {zh}"), people)
            assert bool(facts) == kept, zh
        # a name ending a statement is the listener only when it is one of the people talking
        place = next(n for n in (x.capitalize() for x in pick(rng, v, "name", 3))
                     if not any(p.startswith(n) for p in people))  # (the start of a name calls them)
        kept = split_fact(Evidence(path="daily/2026-01-01/n.md", lines=[4],
                                   text=f"{who}: The {noun} {v1}s in {adj} {obj}s, {place}."), people)
        assert len(kept) == 1, kept
        # a participant called by name, first, after an opening word or between commas, in full
        # or by the start of the name: said to them; with the speaker named too it is kept
        opener = pick(rng, v, "verb").capitalize()
        short = other[:max(3, len(other) - 2)]
        stranger = next(n for n in (x.capitalize() for x in pick(rng, v, "name", 4))
                        if not any(p.startswith(n[:3]) or n.startswith(p[:3]) for p in people))
        called = [f"{opener} {other}, the {noun} {v2}s so {adj}!", f"{opener}, {short}, that {noun} is {adj}!",
                  f"{other}, {adj} {noun}s in the {obj}!", f"{opener} {other} - {adj} {noun}s in the {obj}!"]
        for text in called:
            evidence = Evidence(path="daily/2026-01-01/n.md", lines=[4], text=f"{who}: {text}")
            assert split_fact(evidence, people) == [], text
            assert [e.text for e in split_fact(evidence)] == [f"{label}{text}"], text
        for text in (f"{opener} {other}, I {v1} the {adj} {noun}.", f"{opener} {stranger}, the {noun} {v1}s {adj}!"):
            evidence = Evidence(path="daily/2026-01-01/n.md", lines=[4], text=f"{who}: {text}")
            assert [e.text for e in split_fact(evidence, people)] == [f"{who}: {text}"], text
        for title, between in ((f"Said by {other}", {who, other}), ("Said by the assistant", set()),
                               (f"Said by the assistant and {other}", {who, other}), ("Facts", set())):
            body = f"# Day\n\n## Facts\n\n- {who}: x y\n\n## {title}\n\n- x\n"
            assert people_in(Note(path="daily/2026-01-01/n.md", body=body)) == between, title
        # a named assistant, the user's lines unnamed: the user's "you" is an instruction
        body = f"# Day\n\n## Facts\n\n- You {v1} in {adj} {noun}s.\n\n## Said by {other}\n\n- {other}: x y\n"
        assert people_in(Note(path="daily/2026-01-01/n.md", body=body)) == frozenset()


def test_a_speaker_is_known_by_the_notes_structure_not_by_the_labels_word(vocab):
    """A label shaped as a name (`Xovo: ...`) opening one line of a note is that line's own
    label (as `Correction:` or `Reminder:` would be, whatever word it is); one opening two lines
    or more, or named by a `Said by` section, or opening the lines of a conversation between
    people, is a speaker. The word itself decides nothing: the same pseudo-word is a label in
    one note and a speaker in another."""
    from memflow.schemas.notes import Note
    from memflow.tasks.dream.consolidation import extract_units, speaker, speakers_in

    rng, v = vocab
    for _ in range(60):
        word, other = (n.capitalize() for n in pick(rng, v, "name", 2))
        noun, obj, verb = pick(rng, v, "noun"), pick(rng, v, "object"), pick(rng, v, "verb")
        n1, n2 = rng.sample(range(2, 900), 2)
        once = f"- {word}: The {noun} {verb}s {n1} {obj}s.\n- The {obj} {verb}s at {n2}.\n"
        note = Note(path="daily/2026-01-01/a.md", body=f"# Day\n\n## Facts\n\n{once}")
        assert speakers_in(note) == frozenset(), once
        units = [u for u, _ in extract_units([note])]
        assert not any(u.subject == f"person:{word.lower()}" for u in units), units
        assert any(f"The {noun} {verb}s {n1} {obj}s." in u.summary for u in units), units  # kept
        twice = f"- {word}: I {verb} the {noun}.\n- {word}: My {obj} has {n1} {noun}s.\n"
        note = Note(path="daily/2026-01-01/b.md", body=f"# Day\n\n## Facts\n\n{twice}")
        assert speakers_in(note) == {word}
        assert {u.subject for u, _ in extract_units([note])} == {f"person:{word.lower()}"}
        talk = (f"# Day\n\n## Facts\n\n- {word}: I {verb} the {noun}.\n\n"
                f"## Said by {other}\n\n- {other}: The {obj} is {n2} {noun}s.\n")
        note = Note(path="daily/2026-01-01/c.md", body=talk)
        assert speakers_in(note) == {word, other}
        assert speaker(f"{word}: the {noun} {verb}s.", speakers_in(note)) == (word, f"the {noun} {verb}s.")
        # read out of its note (a digest line), a label shaped as a name is its speaker; a chat
        # role or a word before a clause in lower case is not
        assert speaker(f"{word}: The {noun} {verb}s.") == (word, f"The {noun} {verb}s.")
        assert speaker(f"{word}: the {noun} {verb}s.")[0] == ""
        assert speaker(f"User: The {noun} {verb}s.")[0] == ""
        # a sign between a number and a name is no letter: "32× A100 ..." made a node `×`
        from memflow.tasks.dream.facts import slug, subject_of
        sign = rng.choice("×÷")
        assert slug(subject_of(f"{n1}{sign} {other}{n2} on the {noun} {obj}, {verb}.").name), sign


# -- the whole loop ------------------------------------------------------------------------------

def say(day: date, sid: str, texts: list[str]) -> list[dict]:
    return [{"id": f"{sid}-{n}", "role": "user", "timestamp": f"{day.isoformat()}T09:{n:02d}:00Z",
             "content": t} for n, t in enumerate(texts)]


def generated_life(rng: random.Random, v: dict) -> tuple[list[tuple[date, list[str]]], list[dict]]:
    """Days of statements, and what each question must find: chains of a value changing over
    three days, pairs that must coexist, a co-stated fact whose other half changes, short
    statements."""
    start = date(2026, 2, 2)
    days: list[list[str]] = [[], [], []]
    checks = []
    nouns = iter(rng.sample(v["noun"], 40))
    verbs = iter(rng.sample(v["verb"], 20))  # each fact its own predicate: every question has one answer
    names = iter(rng.sample(v["name"], 20))  # and its own values
    for _ in range(3):  # chains A -> B -> C: without a cue, with "now", naming the old value
        noun, adj, verb = next(nouns), pick(rng, v, "adj"), next(verbs)
        a, b, c = next(names), next(names), next(names)
        days[0].append(f"The {adj} {noun} {verb}s {a}.")
        days[1].append(f"The {adj} {noun} {verb}s {b} now.")
        days[2].append(f"The {adj} {noun} {verb}s {c} instead of {b}.")
        checks.append({"kind": "chain", "query": f"{adj} {noun} {verb}s", "values": [c, b, a]})
    for _ in range(2):  # a measured value that changes
        noun, adj, unit = next(nouns), pick(rng, v, "adj"), pick(rng, v, "unit")
        n1, n2 = rng.sample(range(10, 999), 2)
        days[0].append(f"The {adj} {noun} is {n1} {unit}.")
        days[2].append(f"The {adj} {noun} is now {n2} {unit}.")
        checks.append({"kind": "chain", "query": f"{adj} {noun}", "values": [str(n2), str(n1)]})
    noun, adj, adj2, unit, verb = next(nouns), *pick(rng, v, "adj", 2), pick(rng, v, "unit"), next(verbs)
    n1, n2 = rng.sample(range(10, 999), 2)  # a level set anew, after a label, by another verb + "to"
    days[0].append(f"The {adj} {noun} is {n1} {unit} which is too {adj2}.")
    days[2].append(f"{' '.join(pick(rng, v, 'object', 2)).capitalize()}: the {adj} {noun} {verb}ed to {n2} {unit}.")
    checks.append({"kind": "chain", "query": f"{adj} {noun}", "values": [str(n2), str(n1)]})
    for _ in range(2):  # one thing at two occasions: both stay current
        verb, o1, o2 = next(verbs), *rng.sample(v["object"], 2)
        q1, q2 = rng.sample(v["qualifier"], 2)
        days[0].append(f"I {verb} {o1} at {q1}.")
        days[1].append(f"I {verb} {o2} at the {q2}.")
        checks.append({"kind": "beside", "lines": [f"I {verb} {o1} at {q1}.", f"I {verb} {o2} at the {q2}."]})
    v1, v2, noun = next(verbs), next(verbs), next(nouns)
    a, b = next(names), next(names)
    days[0].append(f"I {v1} in {a} and {v2} at the {noun}.")  # co-stated; only the first half changes
    days[2].append(f"I {v1} in {b}.")
    checks.append({"kind": "chain", "query": f"{v1} in", "values": [b, a]})
    checks.append({"kind": "beside", "lines": [f"I {v2} at the {noun}"]})
    # the line that said both still says a current thing: it is not labelled replaced
    checks.append({"kind": "unlabelled", "text": f"{v2} at the {noun}"})
    thing, x, y = rng.sample(v["han"], 3)  # Chinese, without a cue word
    days[0].append(f"我的{thing}是{x}。")
    days[2].append(f"我的{thing}是{y}。")
    checks.append({"kind": "chain", "query": f"我的{thing}", "values": [y, x], "about": thing})
    noun, adj, unit = next(nouns), pick(rng, v, "adj"), pick(rng, v, "unit")
    n1, n2 = rng.sample(range(100, 999), 2)
    code = "\n".join(f"    {pick(rng, v, 'object')}_{i} = run({pick(rng, v, 'object')!r}, n={i})" for i in range(12))
    days[0].append(f"Here is the profile of the {noun} job:\n\n```python\n{code}\n```\n\n"
                   f"The {adj} {noun} takes {n1} {unit} on the big box. Can you see why?")
    days[2].append(f"I rewrote the loop:\n\n```python\n{code}\n```\n\n"
                   f"After that the {adj} {noun} takes {n2} {unit} instead of {n1} {unit}. Anything else to try?")
    checks.append({"kind": "chain", "query": f"{adj} {noun} takes", "values": [str(n2), str(n1)]})
    noun, verb, unit = next(nouns), next(verbs), pick(rng, v, "unit")
    name = pick(rng, v, "name")  # a named thing's measure, the name alone later: another node's fact
    n1, n2 = rng.sample(range(2, 99), 2)
    days[0].append(f"My {noun} {name} {verb}s {n1} {unit}s.")
    days[2].append(f"{name} {verb}s {n2} {unit}s now.")
    checks.append({"kind": "chain", "query": f"{name} {verb}s", "values": [str(n2), str(n1)], "about": name})
    name = pick(rng, v, "name")
    days[1].append(f"Call me {name}.")  # a short statement
    checks.append({"kind": "found", "query": name, "text": f"Call me {name}."})
    return [(start + timedelta(days=3 * i), texts) for i, texts in enumerate(days)], checks


def current_and_history(lay) -> dict[str, digest.FactLine]:
    return {f.text: f for p in (lay.root / "digest").rglob("*.md") for f in digest.facts_of(p.read_text())}


def test_generated_life_keeps_the_current_value_first_and_every_statement(settings, lay, vocab):
    rng, v = vocab
    days, checks = generated_life(rng, v)
    for n, (day, texts) in enumerate(days):
        rng.shuffle(texts)
        auto_memory(settings, say(day, f"life-{n}", texts), f"life-{n}")
        run_dream(settings, day)
    check_life(settings, lay, checks, [t for _, texts in days for t in texts if "```" not in t])


def check_life(settings, lay, checks: list[dict], every: list[str]) -> None:
    """Each chain's newest value is current in the digest, with the older ones it named as its
    history in date order, and the packed context (300 tokens) states it before any older one; lines that
    must coexist are current without history; every statement is found by default search."""
    facts = current_and_history(lay)
    for check in checks:
        if check["kind"] == "chain":
            newest, *older = check["values"]
            about = check.get("about", check["query"].split()[-1])
            [line] = [f for f in facts.values() if newest in f.text and about in f.text]
            # a value is history only where the newer statement named it ("instead of B"); else
            # both stand in the digest and the packed context below puts the newest first
            history = [next((o for o in older if o in h.text), None) for h in line.history]
            assert None not in history and history == [o for o in older if o in history], (check, line)
            dates = [line.date] + [h.date for h in line.history]
            assert dates == sorted(dates, reverse=True)  # the history in date order, newest first
            blocks = api.search(check["query"], settings.workspace, limit=5, budget_tokens=300).packed or []
            assert not misplaced_packed_lines(lay.root, blocks), misplaced_packed_lines(lay.root, blocks)
            packed = "\n".join(blocks)
            assert newest in packed, (check, packed)
            # by line, among the lines about the chain's subject (another chain may share a value)
            lines = [line for line in packed.split("\n") if about in line]
            for old in older:
                if any(old in line for line in lines):
                    first_new = next(n for n, line in enumerate(lines) if newest in line)
                    assert first_new <= next(n for n, line in enumerate(lines) if old in line), (check, packed)
                    assert newest in lines[first_new] and (old not in lines[first_new]
                                                           or lines[first_new].index(newest) < lines[first_new].index(old))
        elif check["kind"] == "beside":
            for text in check["lines"]:
                assert text in facts and not facts[text].history, (text, list(facts))
        elif check["kind"] == "unlabelled":
            from memflow.tasks.recall.replaced import is_replaced

            found = [line for hit in search(settings, check["text"], limit=10).results
                     for line in hit.text.split("\n") if check["text"] in line]
            assert found and not any(is_replaced(line) for line in found), found
    for text in every:  # every statement is found by default search
        shown = "\n".join(h.text for h in search(settings, text, limit=10).results)
        assert text.rstrip(".") in shown or all(part.rstrip(".") in shown for part in clauses(text)), (text, shown)


def test_roles_and_labels_are_not_subjects(vocab):
    """An assistant's line in a daily note is a procedure or nothing, however the log spells
    the role; a short label before a colon ("Change of plan: ...") or a quantifier ("Half of
    the ...") does not name the node."""
    from memflow.schemas.dream import Evidence
    from memflow.tasks.dream.consolidation import make_unit, note_facts
    from memflow.tasks.dream.facts import subject_of
    from memflow.tasks.ground.notes import parse_note

    rng, v = vocab
    for _ in range(50):
        noun, thing = pick(rng, v, "noun"), pick(rng, v, "name")
        n1 = rng.randint(1000, 65000)
        role = rng.choice(["assistant", "Assistant", "ASSISTANT", "tool"])
        body = (f"# {noun}\n\n## Said by the assistant\n\n- {role}: ## {thing} alert in {noun} Half of the "
                f"{pick(rng, v, 'object')} tests in {noun} time out on the fixture.\n")
        facts = note_facts(parse_note("daily/2026-03-19/x.md", body))
        assert all(not f.text.lower().startswith(role.lower()) for f in facts), facts
        assert all(subject_of(f.text).name.lower() != role.lower() for f in facts)
        label = rng.choice(["Change of plan", "Update", "Heads up", "Quick note"])
        subject = subject_of(f"{label}: {thing.lower()} moves to port {n1}.")
        assert subject.name.lower() == thing.lower(), (label, thing, subject)
        # determiner quantifiers, fractions, numbers (closed classes); a noun heading a partitive
        # ("The rest of", "The majority of") is read as any noun phrase is (#56)
        quantifier = rng.choice(["Half", "Most", "Some", "All", "Quarter", f"{rng.randint(2, 99)}%"])
        obj = pick(rng, v, "object")
        subject = subject_of(f"{quantifier} of the {obj} {noun}s in {thing} time out on the fixture.")
        assert subject.name.split()[0].lower() == obj, (quantifier, obj, subject)  # not "Half"
        # one capitalised word and a colon before a clause in lower case is a label, not a
        # speaker ("Decision: the X listener binds port N" had made a person node `Decision`)
        word = pick(rng, v, "name")
        unit = make_unit(Evidence(path="daily/2026-03-19/x.md", lines=[4],
                                  text=f"{word}: the {thing.lower()} listener binds port {n1} from now on."))
        assert not unit.subject.startswith("person:"), unit
        assert unit.name.lower().startswith(thing.lower()), unit.name
        said = make_unit(Evidence(path="daily/2026-03-19/x.md", lines=[4], text=f"{word}: I {pick(rng, v, 'verb')} the {noun}."))
        assert said.subject == f"person:{word.lower()}", said  # a speaker's own statement


def test_a_named_speakers_encouragement_is_theirs_a_how_to_with_a_tool_is_a_procedure(vocab):
    """In a conversation between named people, "never give up!" or "check out my painting" is
    what that person said (their node); a line naming a script or command is a procedure,
    whoever says it; with no speaker named, steps stay a procedure. Procedure names keep
    contractions whole (no "Don forget ...")."""
    from memflow.tasks.dream.facts import subject_of

    rng, v = vocab
    opening = ["Never", "Always", "Don't forget to", "Make sure you", "Check out", "Stop", "Use"]
    for _ in range(60):
        name, obj, noun, verb = pick(rng, v, "name"), pick(rng, v, "object"), pick(rng, v, "noun"), pick(rng, v, "verb")
        said = f"{rng.choice(opening)} {verb} the {obj} {noun}{rng.choice(['!', '.', ''])}"
        subject = subject_of(said, name)
        assert subject.bucket == "personal" and subject.key == f"person:{name.lower()}", (said, subject)
        mine = f"Check out my {obj} {noun} from last {pick(rng, v, 'qualifier')}!"
        assert subject_of(mine, name).bucket == "personal" and subject_of(mine).bucket == "personal", mine
        tool = rng.choice([f"Run scripts/{noun}.sh before the {obj} sync.",
                           f"Use `{verb} --{obj}` to rebuild the {noun}.",
                           f"Never restart {noun}.py while the {obj} drains."])
        assert subject_of(tool, name).bucket == "procedure", tool
        steps = f"Always {verb} the {obj} before the {noun} sync."
        assert subject_of(steps).bucket == "procedure", steps
        named = subject_of(f"Don't forget to {verb} the {obj} {noun} first.")
        assert "Don" not in named.name.split() and not named.key.startswith("procedure:don-"), named


# -- context: the same frame said about two different things ---------------------------------

def test_a_statement_said_about_another_thing_is_not_a_change(vocab):
    """"We pinned X to 4.3" in a message about one project and "We pinned X to 5.3" about
    another: the same frame with a new value, but the sources name different things, so the
    new line stands beside the old one. The same project (named in the line or again and again
    in its note) or a source naming nothing else leaves the rule as it was."""
    from memflow.tasks.dream.change import other_context

    rng, v = vocab
    for _ in range(200):
        lib, noun, verb = pick(rng, v, "object"), pick(rng, v, "noun"), pick(rng, v, "verb")
        p1, p2 = pick(rng, v, "name", 2)
        n1, n2 = (f"{rng.randint(1, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}" for _ in range(2))
        if n1 == n2:  # drawn twice (seed 3434): the same statement, no change to test
            continue
        old, new = f"We {verb} {lib} to {n1} in the {noun} file.", f"We {verb} {lib} to {n2} in the {noun} file."
        assert relation(new, old) is None  # the same frame, no old value named: both stand
        assert relation(f"We {verb} {lib} from {n1} to {n2} in the {noun} file.", old) == "replaces"

        def line(statement, project):
            return f"- user: {statement} The {pick(rng, v, 'noun')} is rebuilt whenever {project} rotates its keys."

        def note(project, statement_line):
            return "\n".join([f"- user: Back on {project} today.", statement_line,
                              f"- assistant: I moved the {pick(rng, v, 'noun')} step of {project} behind the queue."])

        assert other_context(new, (line(new, p2), ""), old, (line(old, p1), ""))
        assert not other_context(new, (line(new, p1), ""), old, (line(old, p1), ""))
        bare_old, bare_new = f"- user: {old}", f"- user: {new}"  # named only in the rest of the note
        assert other_context(new, (bare_new, note(p2, bare_new)), old, (bare_old, note(p1, bare_old)))
        assert not other_context(new, (bare_new, note(p1, bare_new)), old, (bare_old, note(p1, bare_old)))
        assert not other_context(new, (bare_new, ""), old, (line(old, p1), ""))  # nothing else named
        assert not other_context(new, (f"- {p2}: {new}", ""), old, (f"- {p1}: {old}", ""))  # speakers


def test_projects_keep_their_own_values_through_dreams(settings, lay, vocab):
    """Sessions about several projects state the same kind of fact with different values; a
    later session about one of them changes its value. After nightly dreams each project's
    value is current and none is replaced (the later session names no old value: both of
    project 1's values stand, dated), and search finds every statement."""
    rng, v = vocab
    start = date(2026, 3, 2)
    lib, noun, verb = pick(rng, v, "object"), pick(rng, v, "noun"), pick(rng, v, "verb")
    projects = pick(rng, v, "name", 3)
    values = [f"{rng.randint(1, 9)}.{rng.randint(0, 40)}.{i}" for i in range(4)]

    def session(day: date, project: str, value: str, sid: str) -> list[dict]:
        return say(day, sid, [f"Back on {project} today; the {pick(rng, v, 'noun')} part again.",
                              f"We {verb} {lib} to {value} in the {noun} file.",
                              f"The {pick(rng, v, 'noun')} for {pick(rng, v, 'object')} is rebuilt whenever "
                              f"{project} rotates the keys."])

    days = [(start + timedelta(days=2 * i), p, values[i]) for i, p in enumerate(projects)]
    days.append((start + timedelta(days=8), projects[0], values[3]))  # project 1 changes its value
    for n, (day, project, value) in enumerate(days):
        auto_memory(settings, session(day, project, value, f"proj-{n}"), f"proj-{n}")
        run_dream(settings, day)
    facts = current_and_history(lay)
    statement = f"We {verb} {lib} to {{}} in the {noun} file."
    for value in values:
        assert statement.format(value) in facts, (value, list(facts))
        assert not facts[statement.format(value)].history
    for value in values:
        shown = "\n".join(h.text for h in search(settings, f"{lib} {value}", limit=10).results)
        assert value in shown, (value, shown)


def test_a_day_or_month_names_no_node(vocab):
    """"We deploy on Tuesdays and Thursdays" (`memflow demo`) made a node `Tuesdays`: a day or
    month name, or its plural, says when, not what the statement is about; a name beside it
    still names the node."""
    import calendar

    from memflow.tasks.dream.facts import subject_of

    rng, v = vocab
    times = [*calendar.day_name, *calendar.month_name[1:]]
    for _ in range(60):
        verb, obj = pick(rng, v, "verb"), pick(rng, v, "object")
        first, second = rng.sample(times, 2)
        plural = rng.choice(["s", ""])
        said = f"{rng.choice(['we', 'We', 'I'])} {verb} the {obj} on {first}{plural} and {second}{plural}"
        assert not any(t.lower() in subject_of(said).key for t in (first, second)), (said, subject_of(said))
        name = pick(rng, v, "name")
        named = f"We {verb} {name} on {first}{plural}"
        assert subject_of(named).key == f"topic:{name.lower()}", (named, subject_of(named))


def test_a_leading_phrase_or_indefinite_pronoun_does_not_name_the_node(vocab):
    """"After the last X the Y Z stopped ...": the node is the Y Z; "Nothing in X reads ...": X;
    "The Y for X is rebuilt ...": which Y (Y for X); "Since the X, the Y ...": Y; "We run it on 6
    Xs": the user's. Words from the pseudo-word vocabularies."""
    from memflow.tasks.dream.facts import subject_of

    rng, v = vocab
    for _ in range(100):
        a, b, c, d = (pick(rng, v, slot) for slot in ("noun", "object", "noun", "qualifier"))
        if len({a, b, c, d}) < 4:
            continue
        lead = rng.choice(["After", "Before", "During", "With"])
        subject = subject_of(f"{lead} the last {a} the {b} {c} stopped emitting {d} events.")
        assert subject.name.lower() == f"{b} {c}", subject
        pronoun = rng.choice(["Nothing", "Nobody", "Everything", "Something"])
        subject = subject_of(f"{pronoun} in {b} reads the {c} before {a} has finished its {d} pass.")
        assert subject.name.lower() == b, subject
        # an indefinite pronoun as the whole subject: what it does something to ("Nobody really
        # owns X" was a node `Nobody really`)
        # a verb by its shape ("-ed", not "-eed") ends the subject ("That server crashed twice"
        # was a node `Server crashed`)
        verb = pick(rng, v, "verb")
        if not verb.endswith("e"):
            said = f"{rng.choice(['That', 'The', 'Our'])} {b} {verb}ed {rng.choice(['twice', 'again', 'yesterday'])}."
            assert subject_of(said).name.lower() == b, (said, subject_of(said))
        pronoun = rng.choice(["Nobody", "Someone", "Everyone", "Somebody", "Everybody", "Nothing"])
        adverb = rng.choice(["", f"{pick(rng, v, 'adj')}ly ", "here ", "still "])
        said = f"{pronoun} {adverb}{pick(rng, v, 'verb')}s {rng.choice(['', 'the '])}{b}."
        assert subject_of(said).name.lower() == b, (said, subject_of(said))
        subject = subject_of(f"The {c} for {b} is rebuilt whenever {pick(rng, v, 'name')} rotates the {d} keys.")
        assert subject.name.lower() == f"{c} for {b}", subject
        # a clause or phrase before a comma (a preposition or subordinating conjunction opens it)
        opener = rng.choice(["After adding the", "Since the", "When we changed the", "In", "Once the", "before the"])
        said = f"{opener} {a}, the {b} {pick(rng, v, 'verb')}s {rng.randint(2, 900)} {d}s."
        assert subject_of(said).name.lower() == b, (said, subject_of(said))
        name = pick(rng, v, "name")
        subject = subject_of(f"{name}, the {c}, {pick(rng, v, 'verb')}s at {pick(rng, v, 'name')}.")  # an aside
        assert subject.name.lower() == name.lower(), subject
        # nothing named but "we": the user's node, not a node named after the sentence's first words
        subject = subject_of(f"We {pick(rng, v, 'verb')} it on {rng.randint(2, 90)} {b}s.")
        assert subject.bucket == "personal" and not subject.name.startswith("We"), subject
        # a modal after the subject ends it ("Beshios may use 384 MiB" was a node "Beshios may")
        modal = rng.choice(["may", "might", "must", "could", "would", "can", "will", "should"])
        said = f"The {b} {c} {modal} {pick(rng, v, 'verb')} {rng.randint(2, 900)} {d}s."
        assert subject_of(said).name.lower() == f"{b} {c}", (said, subject_of(said))
        said = f"{b.capitalize()} {modal} {pick(rng, v, 'verb')} {rng.randint(2, 900)} {d}s now."
        assert subject_of(said).name.lower() == b, (said, subject_of(said))
        # an adverb by its shape before the subject ("Mostly the build is slow")
        adverb = f"{pick(rng, v, 'adj').capitalize()}ly"
        said = f"{adverb} the {b} {c} {pick(rng, v, 'verb')}s on {d}s."
        assert subject_of(said).name.lower() == f"{b} {c}", (said, subject_of(said))
        # a number is a value, not a name: counts of one thing share its node; a number alone
        # is named by what it counts
        n1, n2 = rng.sample(range(2, 5000), 2)
        verb = pick(rng, v, "verb")
        one, other = subject_of(f"The {n1} {c}s {verb} the {b}."), subject_of(f"The {n2} {c}s {verb} the {b} now.")
        assert one.key == other.key and one.name.lower() == f"{c}s" and not any(ch.isdigit() for ch in one.key), (one, other)
        counted = subject_of(f"About {n1} {c}s per {d} at {a}.")
        assert counted.name.lower() == f"{c}s", counted
        assert subject_of(f"About {n1}% of {c}s {verb} the {b}.").name.lower() == f"{c}s"


def test_a_change_said_with_the_subject_as_object_corrects_the_subjects_node(settings, lay, vocab):
    """"The Redis cache TTL is 300 seconds", later "We raised the Redis cache TTL from 300 to 900
    seconds": the later statement's grammatical subject is "we", the thing it changes is named
    inside it. It goes to the node of that thing (the dream made a second node of the same name,
    so the old value stayed current), and, restated whole with the old value set against a new
    one, it replaces the old value there; a node keyed the old way (`thing:`) is found too."""
    rng, v = vocab
    start = date(2026, 5, 1)
    for n in range(3):
        name, noun, verb, unit = pick(rng, v, "name"), pick(rng, v, "noun"), pick(rng, v, "verb"), pick(rng, v, "unit")
        n1, n2 = rng.sample(range(2, 900), 2)
        old, new = f"The {name} {noun} is {n1} {unit}.", f"We {verb}ed the {name} {noun} from {n1} to {n2} {unit}."
        day = start + timedelta(days=10 * n)
        auto_memory(settings, say(day, f"old-{n}", [old]), f"old-{n}")
        run_dream(settings, day)
        if n == 2:  # a node written before the key was unified
            node = next(p for p in (lay.root / "digest").rglob("*.md") if old in p.read_text())
            node.write_text(node.read_text().replace("subject: topic:", "subject: thing:"))
        auto_memory(settings, say(day + timedelta(days=3), f"new-{n}", [new]), f"new-{n}")
        run_dream(settings, day + timedelta(days=3))
        facts = current_and_history(lay)
        assert new in facts and [h.text for h in facts[new].history] == [old], (old, new, list(facts))
        named = [p for p in (lay.root / "digest").rglob("*.md") if f"\n# {name}\n" in p.read_text()]
        assert len(named) == 1, named


def test_a_fact_follows_a_person_s_edit_of_the_line_it_cites(settings, lay, vocab):
    """A person edits a consolidated daily line by hand ("blue folder" -> "red folder", a number,
    a name): at the next dream the digest fact citing it says what the line says now, the old
    wording as its history (the edit is the evidence: no frame rule needed), and nothing else
    in the digest changes; a line rewritten into something else is left to `check`; a third
    dream changes nothing. Pseudo-words; before, the digest kept the old words."""
    rng, v = vocab
    day = date(2026, 6, 1)
    lines = []
    for _ in range(6):
        noun, obj, verb = pick(rng, v, "noun"), pick(rng, v, "object"), pick(rng, v, "verb")
        lines.append(rng.choice([f"I keep my {noun} in the {obj} {pick(rng, v, 'noun')}.",
                                 f"The {noun} {verb}s {rng.randint(2, 900)} {pick(rng, v, 'unit')}.",
                                 f"My {noun} is {pick(rng, v, 'name')}."]))
    auto_memory(settings, say(day, "ed-0", lines), "ed-0")
    run_dream(settings, day)
    before = current_and_history(lay)
    note = next((lay.root / "daily" / day.isoformat()).glob("*.md"))
    text = note.read_text()
    edits = {}
    for old in rng.sample(lines, 2):
        words = old.rstrip(".").split()
        at = rng.randrange(1, len(words))
        fresh = pick(rng, v, "object")
        new = " ".join(words[:at] + [fresh] + words[at + 1:]) + "."
        if new == old or old not in text:
            continue
        text = text.replace(old, new, 1)
        edits[old] = new
    assert edits, "no line edited: the test says nothing"
    note.write_text(text, encoding="utf-8")
    run_dream(settings, day + timedelta(days=1))
    after = current_and_history(lay)
    for old, new in edits.items():
        assert new in after and [h.text for h in after[new].history] == [old], (old, new, list(after))
        assert old not in after
    untouched = {t: f for t, f in before.items() if t not in edits}
    def dated(fact):  # a history as said (its line numbers move when a fact above gains history)
        return [(h.date, h.text) for h in fact.history]

    assert all(t in after and dated(after[t]) == dated(f) for t, f in untouched.items())
    again = current_and_history(lay)
    run_dream(settings, day + timedelta(days=2))
    assert current_and_history(lay).keys() == again.keys()
    from memflow.tasks.index import run_index

    run_index(settings)
    findings = [f for f in api.check(lay.root).findings if f.area != "index"]
    assert findings == [], findings


def test_of_a_long_message_only_the_piece_saying_the_replaced_statement_is_labelled(settings, lay, vocab):
    """A long message is indexed as pieces (prose, code, more prose). When the digest replaces
    one statement of it, only the piece saying that statement is labelled replaced; the code and
    the other facts of the message stay current (they were labelled by position before)."""
    rng, v = vocab
    noun, adj, unit, other = pick(rng, v, "noun"), pick(rng, v, "adj"), pick(rng, v, "unit"), pick(rng, v, "noun")
    n1, n2 = rng.sample(range(10, 999), 2)
    code = "\n".join(f"    {pick(rng, v, 'object')}_{i} = run({pick(rng, v, 'object')!r}, n={i})" for i in range(24))
    intro = " ".join(f"The {pick(rng, v, 'noun')} {pick(rng, v, 'verb')}s the {pick(rng, v, 'object')}." for _ in range(8))
    old = f"The {adj} {noun} is {n1} {unit}."
    kept = f"The {other} {pick(rng, v, 'verb')}s {pick(rng, v, 'name')} on {pick(rng, v, 'qualifier')}s."
    message = f"{intro}\n\n```python\n{code}\n```\n\n{old} {kept}\n\n```python\n{code}\n```"
    auto_memory(settings, say(date(2026, 3, 2), "long-1", [message]), "long-1")
    run_dream(settings, date(2026, 3, 2))
    auto_memory(settings, say(date(2026, 3, 9), "long-2", [f"The {adj} {noun} went from {n1} {unit} to {n2} {unit}."]), "long-2")
    run_dream(settings, date(2026, 3, 9))
    [line] = [f for f in current_and_history(lay).values() if str(n2) in f.text]
    assert [str(n1) in h.text for h in line.history] == [True]  # the change is in the digest
    pieces = [piece for r in search(settings, f"{adj} {noun} {other} {code.split()[0]}", limit=20).results
              if r.path.startswith("session/") and "long-1" in r.path for piece in r.text.split("\n")[1:]]
    assert len(pieces) > 2 and all(" part " in piece for piece in pieces)  # the message's pieces
    labelled = [piece for piece in pieces if "(replaced 2026-03-09)" in piece]
    assert labelled and all(str(n1) in piece for piece in labelled), labelled
    assert any(kept.rstrip(".") in piece for piece in pieces if piece not in labelled) or \
        any(kept.rstrip(".") in piece and old.rstrip(".") in piece for piece in labelled)
    assert not any("```" in piece or "run(" in piece for piece in labelled)  # code is no replaced fact


def test_a_thing_named_with_a_word_less_changes_the_node_named_fully(settings, lay, vocab):
    """"The nightly backup job runs at 2am", later "The backup job went from 2am to 3am": the same
    thing named with one word less before its head; its node is searched for the fact the
    statement changes. When two nodes could be meant ("nightly" and "weekly"), neither changes."""
    rng, v = vocab
    noun, other = pick(rng, v, "noun", 2)
    adj, adj2, adj3 = pick(rng, v, "adj", 3)
    unit = pick(rng, v, "unit")
    n1, n2, n3, n4, n5 = rng.sample(range(10, 999), 5)
    day = date(2026, 4, 6)
    auto_memory(settings, say(day, "mod-1", [f"The {adj} {noun} is {n1} {unit}s.", f"The {adj2} {other} is {n3} {unit}s.",
                                             f"The {adj3} {other} is {n4} {unit}s."]), "mod-1")
    run_dream(settings, day)
    later = day + timedelta(days=7)
    auto_memory(settings, say(later, "mod-2", [f"The {noun} went from {n1} {unit}s to {n2} {unit}s.",
                                               f"The {other} is now {n5} {unit}s."]), "mod-2")
    run_dream(settings, later)
    facts = current_and_history(lay)
    [line] = [f for f in facts.values() if f"{n2} {unit}s" in f.text]
    assert [f"{n1} {unit}s" in h.text for h in line.history] == [True], line
    for n in (n3, n4, n5):  # which of two nodes was meant is not said: all three stay current
        [kept] = [f for f in facts.values() if f" {n} {unit}s" in f.text]
        assert not kept.history, kept
    # the node of the thing named shorter links to both nodes naming it with a word more
    shorter = (lay.root / lay.digest / "wiki" / f"{other}.md").read_text(encoding="utf-8")
    related = [line for line in shorter.split("\n") if line.startswith("Related: ")]
    assert related and all(f"[[{lay.digest}/wiki/{a}-{other}.md]]" in related[0] for a in (adj2, adj3)), shorter


def test_a_chinese_measure_restated_with_the_name_alone_stands_beside(settings, lay, vocab):
    """"我的狗叫豆豆，它三岁了" then "豆豆现在四岁了": no old value named, so both stand, dated;
    nothing else of the user's is touched."""
    rng, v = vocab
    digits = "二三四五六七八九"
    for _ in range(200):
        thing, name, other, unit, unit2 = rng.sample(v["han"], 5)
        x, y = rng.sample(digits, 2)
        old = f"我的{thing}叫{name}，它{x}{unit}了。"
        assert relation(f"{name}现在{y}{unit}了。", old) is None, old
        for new in (f"{other}现在{y}{unit}了。", f"{name}现在{y}{unit2}了。", f"{name}的{other}现在{y}{unit}了。"):
            assert relation(new, old) is None, (old, new)
    name, city = rng.sample(v["han"], 2)
    x, y = rng.sample(digits, 2)
    unit = "岁"  # years old: the facet cues file "my dog ... years old" with the family, the name alone under life
    day = date(2026, 5, 4)
    auto_memory(settings, say(day, "zh-1", [f"我的狗叫{name}，它{x}{unit}了。我住在{city}。"]), "zh-1")
    run_dream(settings, day)
    later = day + timedelta(days=5)
    auto_memory(settings, say(later, "zh-2", [f"{name}现在{y}{unit}了。"]), "zh-2")
    run_dream(settings, later)
    facts = current_and_history(lay)
    [line] = [f for f in facts.values() if f"{y}{unit}" in f.text]
    assert not line.history and any(f"{x}{unit}" in f.text and not f.history for f in facts.values()), line
    assert any(f"我住在{city}" in f.text and not f.history for f in facts.values())  # untouched


def test_a_word_opening_a_statement_before_its_subject_names_no_node(vocab):
    """A word set off by a comma, or followed by a pronoun, a determiner or a conjunction before
    one, is not what the statement is about, whatever the word is (an interjection, an adverb:
    here pseudo-words in both places); a name followed by an appositive is the subject."""
    from memflow.tasks.dream.facts import subject_of, without_opener

    rng, v = vocab
    for _ in range(20):
        opener = pick(rng, v, "qualifier").capitalize()
        noun, value, name = pick(rng, v, "noun"), pick(rng, v, "object"), pick(rng, v, "name")
        for said in (f"{opener}, the {noun} is at {value}.", f"{opener} the {noun} is at {value}.",
                     f"{opener} and the {noun} is at {value} now."):
            assert subject_of(said).name.lower() == noun, (said, subject_of(said))
        assert subject_of(f"{opener}, my {noun} is at {value}.").key == "person:the-user"
        assert subject_of(f"{opener} and we keep the {noun} at {value}.").key == "person:the-user"
        # an adverb of the closed class before a verb: the speaker's statement without a subject
        for adverb in ("Also", "Already", "Just", "Still"):
            said = f"{adverb} {pick(rng, v, 'verb')}ed the {noun} to {value}."
            assert subject_of(said).key == "person:the-user", (said, subject_of(said))
        # a subject that is a pronoun with nothing before it to point to places nothing
        assert subject_of(f"{opener}, she's at {value} now.", placed_only=True).key == ""
        # not an opener: a name, its appositive, or a name and another joined by "and"
        appositive = f"{name}, the {noun} of mine, is at {value}."
        assert without_opener(appositive) == appositive
        other = pick(rng, v, "name")
        assert subject_of(f"{name} and {other} keep the {noun} at {value}.").name.startswith(name)


def test_an_interjection_before_a_name_or_an_existential_names_no_node(vocab):
    """An interjection of the closed class before a name ("Yes Kenji approved ...") is no
    subject, and "No"/"Well" only before a name (before a noun they are a determiner and a
    noun); an existential ("There's also a X Y that ...", "There are 3 X ...") is about the noun
    phrase after its verb, not an adverb or an adjective in it; an adverb between a name and its
    verb ("Kenji never approved") is no part of the name. Names, nouns and verbs are pseudo-words."""
    from memflow.tasks.dream.facts import subject_of
    from memflow.tasks.dream.words import ALSO_NOT_INTERJECTIONS, INTERJECTIONS, PLAIN_ADVERBS

    rng, v = vocab
    for _ in range(40):
        name, other = (n.capitalize() for n in pick(rng, v, "name", 2))
        noun, obj, adj, verb = pick(rng, v, "noun"), pick(rng, v, "object"), pick(rng, v, "adj"), pick(rng, v, "verb")
        n1 = rng.randint(2, 900)
        word = rng.choice(sorted(INTERJECTIONS)).capitalize()
        said = f"{word} {name} {verb}ed the {noun} {obj}."
        assert subject_of(said).name == name, (said, subject_of(said))
        double = rng.choice(sorted(ALSO_NOT_INTERJECTIONS)).capitalize()
        assert subject_of(f"{double} {noun} {obj}s {verb} at the {adj} {other}.").name.lower() != ""
        assert subject_of(f"{double} {noun} {obj}s {verb} at the {adj} {other}.").key != "person:the-user"
        adverb = rng.choice(sorted(PLAIN_ADVERBS - {"here", "there"}))
        lead = rng.choice(["There's", "There is", "There was", "There are", "Here is", "There has been"])
        said = f"{lead} {adverb} a {adj} {noun} that {verb}s {n1} {obj}s."
        assert subject_of(said).name.lower() == f"{adj} {noun}", (said, subject_of(said))
        said = f"There are {n1} {noun}s of the {obj}."
        assert subject_of(said).name.lower() == f"{noun}s", (said, subject_of(said))
        said = f"{name} {adverb} {verb}s the {noun}."
        assert subject_of(said).name == name, (said, subject_of(said))


def test_a_chinese_phrase_names_no_node_a_latin_name_in_chinese_does(vocab):
    """A subject that would be a Chinese phrase (nothing here cuts Chinese into words) makes the
    statement the speaker's, as a statement in Chinese alone is; a Latin name leading a Chinese
    statement names its node."""
    from memflow.tasks.dream.facts import subject_of

    rng, v = vocab
    for _ in range(20):
        han, other = pick(rng, v, "han", 2)
        word, name = pick(rng, v, "object"), pick(rng, v, "name")
        for said in (f"{han}了 {word} 和 {pick(rng, v, 'object')}", f"{han} {word} {other}"):
            assert subject_of(said).key == "person:the-user", (said, subject_of(said))
        assert subject_of(f"{name} {han}{other}").name == name


# -- #56: a replacement only on the statement's own evidence ------------------------------------

def test_a_change_the_statement_names_replaces_in_every_form(vocab):
    """The statement names the old value and a new one of its kind with a change between them:
    "from A to B", "B instead of A", "A -> B", 从A到B / 从A降到B, with the old line's subject or a
    word the old line holds as its subject; "no longer" restating the old line says it stopped."""
    rng, v = vocab
    for _ in range(150):
        noun, verb, obj, unit = pick(rng, v, "noun"), pick(rng, v, "verb"), pick(rng, v, "object"), pick(rng, v, "unit")
        a, b = pick(rng, v, "name", 2)
        n1, n2 = rng.sample(range(2, 900), 2)
        x, y, thing = rng.sample(v["han"], 3)
        pairs = [
            (f"The {noun} {verb}s {a}.", f"The {noun} moved from {a} to {b}."),
            (f"The {noun} {verb}s {a}.", f"The {noun} {verb}s {b} instead of {a} now."),
            (f"The {noun} is {n1} {unit}.", f"The {noun} went {n1} {unit} -> {n2} {unit}."),
            (f"The {noun} is {n1} {unit}.", f"The {noun} went {n1} → {n2} {unit}."),
            (f"Current {obj} has {n1}% {noun}.", f"{noun.capitalize()} {verb}s from {n1}% to {n2}%."),  # a word the old holds
            (f"{a} {thing}{n1}MB，{x}。", f"{a} {thing}从 {n1}MB {y}到 {n2}MB 了。"),  # a language mix
            (f"我的{thing}是{x}。", f"我的{thing}从{x}改成{y}了。"),
            (f"I {verb} the {obj}.", f"I no longer {verb} the {obj}."),
            (f"I {verb} the {obj}.", f"I don't {verb} the {obj} anymore."),
        ]
        for old, new in pairs:
            assert relation(new, old) == "replaces", (old, new)


def test_what_only_looks_like_a_change_stands_beside(vocab):
    """"from" of an origin, a plan, a wish, a supposition or a change under way, two values of a
    kind that coexist, another thing of the same kind, another subject, an old line that states
    more than the value changed: never a replacement (a wrong one is worse than none)."""
    rng, v = vocab
    for _ in range(150):
        noun, noun2, verb, obj, unit = *pick(rng, v, "noun", 2), pick(rng, v, "verb"), pick(rng, v, "object"), pick(rng, v, "unit")
        a, b, c, who, who2 = pick(rng, v, "name", 5)
        n1, n2 = rng.sample(range(2, 900), 2)
        x, y, thing = rng.sample(v["han"], 3)
        old = f"The {noun} {verb}s {a}."
        for new in (f"I {verb}ed from {a} this week, {obj} {noun2} and back to {b} on {c}.",  # an origin
                    f"We will move the {noun} from {a} to {b} next {obj}.",  # a plan
                    f"We're moving the {noun} from {a} to {b}.",  # under way
                    f"If the {noun} went from {a} to {b}, {obj} would {verb}.",  # supposed
                    f"The {noun} {verb}s {a} and {b}.",  # two that coexist
                    f"The {noun2} moved from {a} to {b}.",  # another thing of the kind
                    f"{who2} moved from {a} to {b}."):  # another subject
            assert relation(new, old) is None, (old, new)
        assert relation(f"{who2} moved from {a} to {b}.", f"{who} {verb}s in {a}.") is None
        # the old line holds another value: replacing it would retire that one too
        assert relation(f"The {noun} went from {n1} to {n2} {unit}.", f"The {noun} is {n1} {unit}, {c} {verb}s the {obj}.") is None
        # a part opening on a preposition qualifies the value: replaced with it
        assert relation(f"I moved from {a} to {b}.", f"I {verb} in {a}, in a {obj} near {c}.") == "replaces"
        # "from" and a "to" of another phrase further on; a pronoun both happen to hold
        adj, word = pick(rng, v, "adj"), pick(rng, v, "filler")
        assert relation(f"And when I'm away from the {obj}, {noun}ing is {adj} for me. It's a way to be {word}.",
                        f"Giving it my all every time I'm on the {obj}.") is None
        # 想 (a modal: a wish), 如果 (a condition)
        assert relation(f"{a}想从{x}换成{y}。", f"{a}用的是{x}。") is None
        assert relation(f"如果{thing}从{x}换成{y}，就好了。", f"{thing}是{x}。") is None


def test_one_letter_names_no_node(vocab):
    """"k thanks" made a node `K`: a one-letter subject is no name a person gives a thing; the
    statement is left in its daily note (unplaced), while a longer name or an identifier with a
    letter in it names its node."""
    import string

    from memflow.tasks.dream.facts import UNPLACED, subject_of
    from memflow.tasks.ground.tokenize import STOPWORDS

    rng, v = vocab
    for _ in range(40):
        # a letter that is no word of its own (not "a", "I", nor a clitic such as "s")
        letter = rng.choice([c for c in string.ascii_letters if c.lower() not in STOPWORDS and c.lower() not in "ai"])
        word, verb, noun, name = pick(rng, v, "filler"), pick(rng, v, "verb"), pick(rng, v, "noun"), pick(rng, v, "name")
        for said in (f"{letter} {word}", f"{letter} {word}!", f"{letter} {verb}s the {noun}."):
            assert subject_of(said, placed_only=True) is UNPLACED, said
        assert subject_of(f"{name} {verb}s the {noun}.", placed_only=True).name == name
        ident = f"{letter.upper()}{rng.randint(2, 99)}"
        assert subject_of(f"The {ident} {noun} {verb}s.", placed_only=True).name.lower().startswith(ident.lower())


def test_a_procedure_is_never_named_by_a_symbol(vocab):
    """"Looks coherent. - `maxSurge: 1` + `maxUnavailable: 0` is ..." made a node `+` (the label's
    colon cut the first code span, leaving "` + `" as the line's command): a procedure's name
    holds a word."""
    from memflow.tasks.dream.facts import subject_of

    rng, v = vocab
    for _ in range(40):
        adj, noun, obj, word = pick(rng, v, "adj"), pick(rng, v, "noun"), pick(rng, v, "object"), pick(rng, v, "filler")
        a, b = pick(rng, v, "verb", 2)
        said = f"Assistant: {adj.capitalize()} {noun}. - `{a}Max: 1` {rng.choice('+&|*=')} `{b}Min: 0` is a {word} {obj}."
        got = subject_of(said)
        assert got.bucket == "procedure" and len(got.key.split(":", 1)[1]) >= 2 and any(c.isalpha() for c in got.name), (said, got)


def test_a_fragment_names_no_node_whatever_its_words_end_in(vocab):
    """"Back on Chosstus today", "the grairtshios part again" (generated technical chats) made
    nodes: a word in "-s" after the first was read as a verb's present "-s". A name capitalised
    inside the sentence, or a word after a determiner or a preposition, heads a noun phrase; a
    lower-case word in "-s" after a name or a noun is still a verb ("Kenji owns billing now")."""
    from memflow.tasks.dream.statements import is_clause

    rng, v = vocab
    for _ in range(200):
        name, noun, verb = pick(rng, v, "name"), pick(rng, v, "noun"), pick(rng, v, "verb")
        plural = rng.choice(["s", "es", ""])
        for fragment in (f"Back on {name}{plural} today", f"the {noun}{plural} part again",
                         f"Back on {name}{plural}", f"on {noun}{plural} {rng.choice(['again', 'today'])}"):
            assert not is_clause(fragment), fragment
        for clause in (f"{name} {verb}s {noun} now", f"{name} {verb}s the {noun}",
                       f"{verb.capitalize()}{'d' if verb.endswith('e') else 'ed'} the {noun} in {name}{plural}", f"I {verb} in {name}{plural}"):
            assert is_clause(clause), clause
