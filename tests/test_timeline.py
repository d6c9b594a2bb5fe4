"""Time in recall: dated lines, since/until over digest facts, as_of, a question's time words."""

from datetime import date, datetime, timedelta, timezone

import pytest

from memflow.schemas.recall import Filters
from memflow.tasks.recall.hybrid import search, today_in
from memflow.tasks.recall.timeline import as_of_text, time_window, window_text


def say(day, sid, *texts):
    return [{"id": f"{sid}-{n}", "role": "user", "timestamp": f"{day}T09:{n:02d}:00Z", "content": t}
            for n, t in enumerate(texts)]


@pytest.fixture
def moved(settings, lay):
    """Lived in Berlin (said 2026-06-01), moved to Lisbon (said 2026-06-09), both dreamt."""
    from memflow.tasks.capture.conversation import auto_memory
    from memflow.tasks.dream import run_dream

    auto_memory(settings, say("2026-06-01", "h1", "I live in Berlin, near the Tiergarten."), "h1")
    run_dream(settings, date(2026, 6, 1))
    auto_memory(settings, say("2026-06-09", "h2", "I moved from Berlin to Lisbon last week."), "h2")
    run_dream(settings, date(2026, 6, 9))
    return settings


def texts(settings, query, **filters):
    return [r.text for r in search(settings, query, limit=5, filters=Filters(**filters)).results]


def test_as_of_answers_as_memory_stood_then(moved):
    before = texts(moved, "where do I live", as_of=date(2026, 6, 5))
    assert before and "Berlin" in before[0]
    assert not any("Lisbon" in t for t in before)  # stated after that day: not known yet
    digest = [t for t in before if "- 2026-06-01: " in t]
    assert digest and "until" not in digest[0]  # the replaced value was the current one then
    after = texts(moved, "where do I live", as_of=date(2026, 6, 20))
    assert "Lisbon" in after[0] and after[0].index("Lisbon") < after[0].index("Tiergarten")
    assert not texts(moved, "where do I live", as_of=date(2026, 5, 1))  # nothing was known
    # nor do the node's description (its current first fact) and its links say what came later
    from memflow.tasks.recall import render_response

    then = search(moved, "where do I live", limit=5, filters=Filters(as_of=date(2026, 6, 5)))
    assert then.results and "Lisbon" not in render_response(then)
    assert all(link.path < "daily/2026-06-06" for r in then.results for link in r.links
               if link.path.startswith("daily/"))


def test_since_and_until_filter_digest_facts_by_their_own_dates(moved):
    dated = search(moved, "where do I live", limit=5, filters=Filters(layer="digest")).results
    assert dated, "the digest holds the facts"
    june = texts(moved, "where do I live Lisbon", layer="digest", since=date(2026, 6, 5))
    assert june and "Lisbon" in june[0]  # a digest node is no longer dropped for its undated path
    early = texts(moved, "where do I live Berlin", layer="digest", until=date(2026, 6, 5))
    assert early and "Berlin" in early[0] and "Lisbon" not in early[0]  # only the lines dated inside
    assert not texts(moved, "where do I live", layer="digest", since=date(2026, 7, 1))


def test_explain_shows_the_date_and_time_factor(moved):
    hit = search(moved, "where do I live", limit=1, explain=True).results[0]
    assert hit.explain["date"] and hit.explain["time_factor"] == 1.0


def test_relative_time_resolves_in_the_workspace_timezone():
    instant = datetime(2026, 12, 1, 3, 0, tzinfo=timezone.utc)  # Dec 1 in UTC, Nov 30 in LA
    for tz, today in (("UTC", date(2026, 12, 1)), ("America/Los_Angeles", date(2026, 11, 30))):
        assert today_in(tz, instant) == today
        yesterday = today - timedelta(days=1)
        assert time_window("What did I eat yesterday?", today_in(tz, instant)) == (yesterday, yesterday)
        assert time_window("我昨天吃了什么", today_in(tz, instant)) == (yesterday, yesterday)
    assert time_window("what happened last week", date(2026, 12, 1)) == (date(2026, 11, 23), date(2026, 11, 29))
    assert time_window("where did I go in May", date(2026, 3, 1)) == (date(2025, 5, 1), date(2025, 5, 31))
    assert time_window("5月我去了哪里", date(2026, 12, 1)) == (date(2026, 5, 1), date(2026, 5, 31))
    assert time_window("Where do I live?", date(2026, 12, 1)) is None
    assert time_window("I may go", date(2026, 12, 1)) is None


def test_a_question_naming_a_time_ranks_what_is_dated_then_first(settings, lay):
    from memflow.tasks.capture.conversation import auto_memory
    from memflow.tasks.index import run_index

    today = today_in(settings.timezone)
    for back, food in ((1, "ramen"), (9, "pizza"), (30, "tacos")):
        day = (today - timedelta(days=back)).isoformat()
        auto_memory(settings, say(day, f"d{back}", f"For dinner I ate {food} at the corner place."), f"d{back}")
    run_index(settings)
    hits = search(settings, "what did I eat for dinner yesterday", limit=3, explain=True).results
    assert "ramen" in hits[0].text and hits[0].explain["time_factor"] == 2.0
    off = settings.model_copy(update={"time_weight": 0.0})
    assert search(off, "what did I eat for dinner yesterday", limit=3, explain=True).results[0].explain["time_factor"] == 1.0


def test_line_level_time_functions():
    node = ("# Jonas – home\n- 2026-06-09: I moved to Lisbon. [[daily/2026-06-09/a.md#L3]]\n"
            "  - until 2026-06-09: I live in Berlin. [[daily/2026-06-01/b.md#L4]]")
    # a line left out is left blank: the others keep their places (a hit's lines are numbered
    # back from its end line, so a line taken out showed the lines above it one line off)
    assert as_of_text(node, date(2026, 6, 5)).split("\n")[1:] == [
        "", "- 2026-06-01: I live in Berlin. [[daily/2026-06-01/b.md#L4]]"]
    assert as_of_text(node, date(2026, 5, 1)) is None
    assert as_of_text(node, date(2026, 7, 1)) == node
    assert window_text(node, None, date(2026, 6, 5)) == "# Jonas – home\n\n" + node.split("\n")[2]
    assert window_text(node, date(2026, 7, 1), None) is None


def test_lines_answering_the_same_question_are_packed_newest_first():
    """Same frame, another value (by the lines' own terms, no word list): the newer block first;
    unrelated lines and a window the question names keep or set the order."""
    from memflow.tasks.recall.timeline import newest_first, same_question
    from memflow.tasks.ground.tokenize import tokenize

    def terms(text):
        return frozenset(tokenize(text, "bigram"))
    assert same_question(terms("The quarterly budget is 40k."), terms("The quarterly budget is now 55k."))
    assert not same_question(terms("I drink black tea at breakfast."), terms("I drink sparkling water at the gym."))
    assert not same_question(terms("I live in Berlin."), terms("I live in Berlin, near the Tiergarten."))
    old = "[daily/2026-03-02/a.md:L5-L5] Facts\n- The quarterly budget is 40k. #L5"
    new = "[daily/2026-04-09/b.md:L7-L7] Facts\n- The quarterly budget is now 55k. #L7"
    other = "[daily/2026-05-01/c.md:L3-L3] Facts\n- The printer jams on A3 paper. #L3"
    assert newest_first([old, other, new], "bigram") == [2, 0, 1]
    assert newest_first([other, old], "bigram") == [0, 1]
    march = (date(2026, 3, 1), date(2026, 3, 31))
    assert newest_first([new, old], "bigram", march) == [1, 0]  # "in March": the line dated then


@pytest.mark.parametrize("seed", [int(s) for s in __import__("os").environ.get("MEMFLOW_SEEDS", "5,23,61").split(",")])
def test_a_value_of_one_kind_about_the_asked_subject_comes_newest_first_however_worded(seed):
    """Two statements about the asked subject, worded with no word in common but the subject
    ("We pinned X to 2.38.17" / "The lock file now has X at 3.26.0"), each stating a value of
    one kind: the newer block is shown first (only the order changes). Values of other kinds,
    the same value, a sentence about another thing, or no query keep rank order. Words are
    pseudo-words from vocabularies of hundreds a slot."""
    import random

    from test_change_rule import vocabulary

    from memflow.tasks.ground.tokenize import tokenize
    from memflow.tasks.recall.timeline import newest_first

    rng = random.Random(seed)
    words = vocabulary(rng, 1500)
    subjects, question_words, fillers = words[0::3], words[1::3], words[2::3]  # disjoint slots
    names = [w.capitalize() for w in vocabulary(rng, 300)]

    def value(kind):
        if kind == "version":
            return ".".join(str(rng.randint(0, 40)) for _ in range(3))
        return str(rng.randint(2, 65000)) if kind == "number" else rng.choice(names)

    def sentence(subject, v):
        a, b, c = rng.sample(fillers, 3)
        return rng.choice([f"We {a} {subject} to {v} in the {b} file.", f"The {a} {b} now has {subject} at {v}.",
                           f"{subject.capitalize()} {a} {v} {b} per {c}.", f"We {a} the {subject} {b} down to {v} {c}.",
                           f"Ownership of {subject} {a} to {v}."])

    def blocks(old_line, new_line, old_day="2026-03-02", new_day="2026-04-09"):
        filler = f"The {rng.choice(fillers)} {rng.choice(fillers)} {rng.choice(fillers)}s again."
        return [f"[daily/{old_day}/a.md:L5-L6] Facts\n- {old_line} {filler} #L5",
                f"[daily/2026-03-20/c.md:L3-L3] Facts\n- {filler} #L3",
                f"[daily/{new_day}/b.md:L7-L7] Facts\n- {new_line} #L7"]

    for _ in range(100):
        subject, other = rng.sample(subjects, 2)
        asked = set(tokenize(f"{subject} {rng.choice(question_words)}", "bigram"))
        kind = rng.choice(["version", "number", "name"])
        old, new = value(kind), value(kind)
        if old == new:
            continue
        changed = blocks(sentence(subject, old), sentence(subject, new))
        assert newest_first(changed, "bigram", asked=asked)[0] == 2, changed
        assert newest_first(changed, "bigram") == [0, 1, 2]  # no query: rank order
        again = blocks(sentence(subject, old), sentence(subject, old))
        assert newest_first(again, "bigram", asked=asked) == [0, 1, 2], again
        elsewhere = blocks(sentence(subject, old), sentence(other, new))
        assert newest_first(elsewhere, "bigram", asked=asked) == [0, 1, 2], elsewhere
        unlike = "number" if kind == "version" else "version"
        kinds = blocks(sentence(subject, old), sentence(subject, value(unlike)))
        assert newest_first(kinds, "bigram", asked=asked) == [0, 1, 2], kinds


@pytest.mark.parametrize("seed", [int(s) for s in __import__("os").environ.get("MEMFLOW_SEEDS", "7,19,43").split(",")])
def test_a_newer_line_about_another_subject_the_question_does_not_name_is_not_pulled_first(seed):
    """"My sister lives in Oslo" and, later, "My brother lives in Bergen": one word apart
    besides the value, but the question names the sister, so the newer line answers another
    question and rank order stands; asked about the brother, or with the same subject, the
    newer line comes first as before. Pseudo-words from vocabularies of hundreds a slot."""
    import random

    from test_change_rule import vocabulary

    from memflow.tasks.ground.tokenize import tokenize
    from memflow.tasks.recall.timeline import newest_first

    rng = random.Random(seed)
    words = vocabulary(rng, 1200)
    relations, verbs, places = words[0::3], words[1::3], [w.capitalize() for w in words[2::3]]
    for _ in range(100):
        one, two = rng.sample(relations, 2)
        verb = rng.choice(verbs)
        here, there = rng.sample(places, 2)
        frame = rng.choice(["[session/dialog/s{n}.jsonl:L1-L2] Session s{n}, {day}\nuser: My {who} {verb}s in {place}.",
                            "[daily/{day}/n{n}.md:L13-L13] Facts\n- My {who} still {verb}s in {place}. #L13"])
        old = frame.format(n=1, day="2026-03-04", who=one, verb=verb, place=here)
        new = frame.format(n=2, day="2026-04-12", who=two, verb=verb, place=there)
        moved = frame.format(n=2, day="2026-04-12", who=one, verb=verb, place=there)

        def asked(subject):
            return set(tokenize(f"Where does my {subject} {verb}?", "bigram"))
        assert newest_first([old, new], "bigram", asked=asked(one)) == [0, 1], (old, new)
        assert newest_first([new, old], "bigram", asked=asked(two)) == [0, 1], (new, old)
        assert newest_first([old, moved], "bigram", asked=asked(one)) == [1, 0], (old, moved)


def test_a_packed_block_shows_its_date_once_when_its_lines_do_not():
    from memflow.schemas.recall import SearchResult
    from memflow.tasks.recall.packing import block

    hit = SearchResult(id="x", path="resource/notes/plan.md", start_line=3, end_line=4, score=1.0,
                       text="# Plan\nThe launch moves to May.\nThe venue is Hall B.", date=date(2026, 4, 2))
    assert block(hit, [1, 2]).split("\n")[0] == "[resource/notes/plan.md:L3-L4] (2026-04-02)"
    daily = hit.model_copy(update={"path": "daily/2026-04-02/plan.md"})
    assert "(2026-04-02)" not in block(daily, [1, 2])  # its path says it already


def test_within_one_note_the_later_value_is_packed_first():
    from memflow.tasks.recall.timeline import newest_lines

    lines = ["- The p95 latency of the gateway is 800 ms. [[s.jsonl#L2]]",
             "- We cached the tokens. [[s.jsonl#L3]]",
             "- The p95 latency of the gateway is now 350 ms. [[s.jsonl#L9]]"]
    assert newest_lines(lines, date(2026, 5, 1), "bigram") == [2, 0, 1]
    history = ["- 2026-06-09: I live in Lisbon now. [[daily/2026-06-09/a.md#L3]]",
               "  - until 2026-06-09: I live in Berlin now. [[daily/2026-06-01/b.md#L4]]"]
    assert newest_lines(history, None, "bigram") == [0, 1]  # a digest's current line stays first


@pytest.mark.parametrize("seed", [int(s) for s in __import__("os").environ.get("MEMFLOW_SEEDS", "1,2,3").split(",")])
def test_same_question_pairs_are_same_question_on_every_pair(seed):
    """The pairs counted all at once (a packed context's lines) are exactly those `same_question`
    holds for, over random term sets drawn from a generated vocabulary, with and without asked terms."""
    import random

    from memflow.tasks.recall.timeline import same_question, same_question_pairs

    rng = random.Random(seed)
    vocabulary = [f"w{n}" for n in range(rng.randint(8, 60))]
    for _ in range(40):
        lines = [frozenset(rng.sample(vocabulary, rng.randint(0, min(9, len(vocabulary)))))
                 for _ in range(rng.randint(0, 30))]
        asked = frozenset(rng.sample(vocabulary, rng.randint(0, 4)))
        expected = [(i, j) for i in range(len(lines)) for j in range(i + 1, len(lines))
                    if same_question(lines[i], lines[j], asked)]
        assert same_question_pairs(lines, asked) == expected


@pytest.mark.parametrize("seed", [4, 19])
def test_a_date_with_its_year_names_that_day_month_or_year(seed):
    """Every written form of a dated day, month or year, drawn at random (any month, day,
    year), means those days whatever today is; an impossible date names none."""
    import calendar
    import random

    rng = random.Random(seed)
    today = date(2026, 12, 4)
    for _ in range(200):
        year, month = rng.randint(1990, 2040), rng.randint(1, 12)
        day = rng.randint(1, calendar.monthrange(year, month)[1])
        name = rng.choice([calendar.month_name[month], calendar.month_abbr[month]])
        suffix = rng.choice(["", "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")])
        the_day = date(year, month, day)
        for question in (f"What did Ana say on {day}{suffix} {name}, {year}?",
                         f"what happened on {name} {day}{suffix} {year}", f"notes from {the_day.isoformat()}",
                         f"我{year}年{month}月{day}日说了什么"):
            assert time_window(question, today) == (the_day, the_day), question
        month_span = (date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))
        for question in (f"What did Joanna finish in {name} {year}?", f"in {name.lower()}, {year} we met",
                         f"{year}年{month}月我去了哪里"):
            assert time_window(question, today) == month_span, question
        assert time_window(f"Where did we travel in {year}?", today) == (date(year, 1, 1), date(year, 12, 31))
    assert time_window("what did I say on 31 February, 2023", today) is None
    assert time_window("I may 2000 times have said it", today) is None  # a verb, not a month
    assert time_window("we paid 2000 dollars", today) is None


@pytest.mark.parametrize("seed", [int(s) for s in __import__("os").environ.get("MEMFLOW_SEEDS", "8,31,57").split(",")])
def test_an_update_that_leaves_the_subject_to_the_conversation_comes_first(seed):
    """"Our checkout API has a p95 latency of 420 ms", then "Update: p95 latency is now 180 ms":
    the update names less of what is asked (the subject is the conversation's), but what it
    names opens its clause and its value is a number in the same unit, so the newer block
    comes first. Not when another subject is named in the place of the asked one ("the search
    p95 latency is 90 ms"), the unit differs, or the value is the same. Pseudo-words from
    vocabularies of hundreds a slot."""
    import random

    from test_change_rule import vocabulary

    from memflow.tasks.ground.tokenize import tokenize
    from memflow.tasks.recall.timeline import newest_first

    rng = random.Random(seed)
    words = vocabulary(rng, 1500)
    subjects, metrics, units, fillers = words[0::4], words[1::4], words[2::4], words[3::4]

    def blocks(old_line, new_line):
        return [f"[daily/2026-03-02/a.md:L5-L5] Facts\n- {old_line} #L5",
                f"[daily/2026-03-20/c.md:L3-L3] Facts\n- The {rng.choice(fillers)} {rng.choice(fillers)} again. #L3",
                f"[session/dialog/s9.jsonl:L7-L7] Session s9, 2026-04-09\nuser: {new_line}"]

    pulled = 0
    for _ in range(100):
        qualifier, other, subject = rng.sample(subjects, 3)
        m1, m2 = rng.sample(metrics, 2)
        unit, unit2 = rng.sample(units, 2)
        v1, v2 = rng.sample(range(2, 9000), 2)
        asked = set(tokenize(f"What is the {m1} {m2} of the {qualifier} {subject}?", "bigram"))
        old = rng.choice([f"Our {qualifier} {subject} has a {m1} {m2} of {v1} {unit} and the {rng.choice(fillers)} is fine.",
                          f"The {m1} {m2} of the {qualifier} {subject} is {v1} {unit}."])
        filler = rng.choice(fillers)
        elided = rng.choice([f"{m1.capitalize()} {m2} is now {v2} {unit}.",
                             f"Update: after the {filler}, {m1} {m2} went to {v2} {unit}.",
                             f"Since the {filler} change, {m1} {m2} sits at {v2} {unit}."])
        assert newest_first(blocks(old, elided), "bigram", asked=asked)[0] == 2, (old, elided)
        pulled += 1
        substituted = f"The {other} {m1} {m2} is {v2} {unit}."  # (one asked term off: `same_question`'s)
        assert newest_first(blocks(old, substituted), "bigram", asked=asked) == [0, 1, 2], (old, substituted)
        other_unit = f"{m1.capitalize()} {m2} is now {v2} {unit2}."
        assert newest_first(blocks(old, other_unit), "bigram", asked=asked) == [0, 1, 2], (old, other_unit)
        same = f"{m1.capitalize()} {m2} is still {v1} {unit}."
        assert newest_first(blocks(old, same), "bigram", asked=asked) == [0, 1, 2], (old, same)
    assert pulled == 100


@pytest.mark.parametrize("seed", [int(s) for s in __import__("os").environ.get("MEMFLOW_SEEDS", "13,37,71").split(",")])
def test_a_decimal_with_no_unit_is_compared_as_a_version(seed):
    """"Our Postgres version is 13.4 and we plan to upgrade soon", then "We finished the
    upgrade, Postgres is on 16.2 now": no unit follows either number, so neither paired with the
    other and the old block came first; a decimal with no unit is compared as a version. A whole
    number with no unit is not ("the team is 12 and growing" after "our team was 9")."""
    import random

    from test_change_rule import vocabulary

    from memflow.tasks.ground.tokenize import tokenize
    from memflow.tasks.recall.timeline import newest_first

    rng = random.Random(seed)
    words = vocabulary(rng, 1200)
    names, nouns, verbs = words[0::3], words[1::3], words[2::3]
    for _ in range(100):
        name, noun = rng.choice(names).capitalize(), rng.choice(nouns)
        verb, verb2 = rng.sample(verbs, 2)
        a, b = rng.sample(range(2, 40), 2)
        x, y = rng.randint(0, 9), rng.randint(0, 9)
        asked = set(tokenize(f"Which {name} {noun} do we {verb2}?", "bigram"))
        old = f"Our {name} {noun} is {a}.{x} and we {verb} it soon."
        new = f"We finished the {verb}, {name} is on {b}.{y} now."
        blocks = [f"[daily/2026-03-02/a.md:L5-L5] Facts\n- {old} #L5",
                  f"[session/dialog/s9.jsonl:L7-L7] Session s9, 2026-04-09\nuser: {new}"]
        assert newest_first(blocks, "bigram", asked=asked)[0] == 1, (old, new)
        whole = [f"[daily/2026-03-02/a.md:L5-L5] Facts\n- Our {name} {noun} is {a} and we {verb} it soon. #L5",
                 f"[session/dialog/s9.jsonl:L7-L7] Session s9, 2026-04-09\n"
                 f"user: We finished the {verb}, {name} is on {b} now."]
        assert newest_first(whole, "bigram", asked=asked) == [0, 1], whole


def test_a_history_line_without_a_readable_date_labels_nothing_replaced(moved, lay, caplog):
    """A hand edit left a replaced value's `until` date unreadable: the daily line it cites is
    not labelled `(replaced 0001-01-01)` (a date nobody said); the index names the file."""
    import logging

    from memflow import api

    node = next(p for p in (lay.root / lay.digest).rglob("*.md") if "until 2026-06-09" in p.read_text())
    node.write_text(node.read_text().replace("until 2026-06-09", "until 2026-06-99"))
    with caplog.at_level(logging.WARNING, logger="memflow.index"):
        api.reindex(moved)
    found = "\n".join(r.text for r in search(moved, "where do I live Berlin", limit=10).results)
    assert "Berlin" in found and "0001-01-01" not in found
    assert any(node.relative_to(lay.root).as_posix() in record.getMessage() for record in caplog.records)
