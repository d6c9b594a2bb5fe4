"""`memflow profile`: the user's current facts, newest first, dated and sourced, in a budget."""

import json
import os
import random

import anyio
import pytest
from helpers import run_cli
from mcp import Client
from mcp.client.stdio import stdio_client
from test_mcp import stdio_params, text
from test_tags import words

from memflow import api
from memflow.tasks.ground.tokens import count_tokens

SEEDS = [int(x) for x in os.environ.get("MEMFLOW_SEEDS", "1,2,3").split(",")]  # MEMFLOW_SEEDS=...: others


def said(day: str, content: str) -> list[dict]:
    return [{"role": "user", "timestamp": f"{day}T09:00:00Z", "content": content}]


def lived(settings, seed: int, dream_between: bool = False) -> tuple[str, str, str]:
    """Two conversations a week apart: a city replaced, a pet kept, a named sister."""
    rng = random.Random(seed)
    old, new, pet, sister, job = (w.title() for w in words(rng, 5))
    api.capture(said("2026-03-02", f"I live in {old}. My cat {pet} is three years old."), "s1", settings)
    if dream_between:  # the old value in the digest, the new one only in a daily note
        api.dream(settings, date="2026-03-03")
    api.capture(said("2026-03-09", f"I live in {new} now. My sister {sister} works as a {job.lower()}."),
                "s2", settings)
    return old, new, pet


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dreamt", ["none", "first", "both"])
def test_profile_shows_the_current_value_newest_first_with_dates_and_sources(settings, seed, dreamt):
    old, new, pet = lived(settings, seed, dream_between=dreamt == "first")
    if dreamt == "both":
        api.dream(settings, date="2026-03-10")
    found = api.profile(settings)
    shown = found["text"]
    assert f"I live in {new}" in shown and old not in shown and pet in shown
    assert count_tokens(shown) <= 300
    dates = [f["date"] for f in found["facts"]]
    assert dates == sorted(dates, reverse=True)
    assert all(f["source"].startswith("daily/") and f"[[{f['source']}]]" in shown for f in found["facts"])


@pytest.mark.parametrize("seed", SEEDS)
def test_profile_keeps_to_its_token_budget(settings, seed):
    rng = random.Random(seed)
    vocab = words(rng, 120)
    for day in range(1, 21):
        api.capture(said(f"2026-04-{day:02d}", f"My friend {vocab[day].title()} plays the "
                         f"{vocab[day + 40]} and I keep {vocab[day + 80]} plants."), f"s{day}", settings)
    for budget in (60, 120, 300):
        found = api.profile(settings, budget)
        assert count_tokens(found["text"]) <= budget and found["facts"]
    assert found["facts"][0]["date"] == "2026-04-20"


def test_profile_cli_and_mcp_tool_and_resource(settings, lay):
    _, new, _ = lived(settings, 7)
    out = run_cli("-w", str(lay.root), "profile", "--json")
    assert out.returncode == 0, out.stderr
    assert f"I live in {new}" in json.loads(out.stdout)["text"]
    small = run_cli("-w", str(lay.root), "profile", "--budget", "40")
    assert small.returncode == 0 and count_tokens(small.stdout.strip()) <= 40

    async def session():
        async with Client(stdio_client(stdio_params(lay.root), errlog=open(os.devnull, "w"))) as client:
            assert "profile" in {t.name for t in (await client.list_tools()).tools}
            got = await client.call_tool("profile", {"budget_tokens": 200})
            assert not got.is_error and f"I live in {new}" in text(got)
            assert got.structured_content["facts"][0]["date"] == "2026-03-09"
            resource = await client.read_resource("memory://profile")
            assert f"I live in {new}" in resource.contents[0].text

    anyio.run(session)


@pytest.mark.parametrize("seed", SEEDS)
def test_profile_names_the_people_who_said_their_facts(settings, seed):
    rng = random.Random(seed)
    first, second, place, craft = (w.title() for w in words(rng, 4))
    api.capture([{"role": "user", "name": first, "timestamp": "2026-05-02T09:00:00Z",
                  "content": f"I moved to {place} last month."},
                 {"role": "assistant", "name": second, "timestamp": "2026-05-02T09:01:00Z",
                  "content": f"My kids love {craft.lower()} classes."}], "s1", settings)
    shown = api.profile(settings)["text"]
    assert f"{first}: I moved to {place}" in shown
    assert f"{second}: My kids love {craft.lower()}" in shown


def test_with_a_chat_model_the_model_words_the_profile_from_the_current_facts(model_settings, fake_model):
    """The model is given the current facts, numbered; a line it writes is kept when it cites
    given facts and every number and name in it is in them; an invented value or a citation of
    a fact it was not given leaves the line out."""
    rng = random.Random(11)
    old, new, pet = (w.title() for w in words(rng, 3))
    offline_settings = model_settings.model_copy(update={"chat_model": ""})  # notes by the offline writer
    api.capture(said("2026-03-02", f"I live in {old}. My cat {pet} is three years old."), "s1", offline_settings)
    api.capture(said("2026-03-09", f"I live in {new} now."), "s2", offline_settings)
    offline = api.profile(offline_settings)
    assert f"I live in {new}" in offline["text"] and old not in offline["text"]

    def reply(messages):
        given = messages[-1]["content"]
        number = {line.split(" ", 1)[0][1:]: line for line in given.split("\n")}
        lives = next(n for n, line in number.items() if new in line)
        cat = next(n for n, line in number.items() if pet in line)
        return json.dumps({"lines": [
            {"text": f"Lives in {new}.", "facts": [int(lives)]},
            {"text": f"Has a cat, {pet}, aged three.", "facts": [int(cat)]},
            {"text": f"Works at {words(rng, 1)[0].title()} Labs.", "facts": [int(lives)]},  # invented
            {"text": f"Lives in {new}.", "facts": [99]}]})  # cites nothing it was given
    fake_model.default_chat = reply
    found = api.profile(model_settings)
    lines = found["text"].split("\n")[1:]
    assert [line.split(": ", 1)[1].split(" [[")[0] for line in lines] == [f"Lives in {new}.",
                                                                          f"Has a cat, {pet}, aged three."]
    assert all(f["source"].startswith("daily/") for f in found["facts"])
    assert found["facts"][0]["date"] == "2026-03-09" and found["facts"][1]["date"] == "2026-03-02"
    assert count_tokens(found["text"]) <= 300


def two_workspaces(tmp_path, sessions: list[tuple[str, str]]) -> tuple[dict, dict]:
    """The same conversations captured into two workspaces, the second dreamt: (profile without
    the dream, profile with it)."""
    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import init_workspace, layout

    found = []
    for name in ("plain", "dreamt"):
        settings = load_settings(tmp_path / name)
        init_workspace(layout(settings))
        for n, (day, content) in enumerate(sessions):
            api.capture(said(day, content), f"s{n}", settings)
        if name == "dreamt":
            api.dream(settings, date=sessions[-1][0])
        found.append(api.profile(settings))
    return found[0], found[1]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_line_split_between_a_person_node_and_a_topic_still_replaces_what_it_replaced(tmp_path, seed):
    """A daily line the user's node takes one sentence of and a topic's node another: the
    other sentence still stands for the older statement sharing its words, so the dream shows
    no value the same profile without it does not ("Karen's running the show now" stayed in
    the profile after "Karen pushed for it before the new manager arrives")."""
    rng = random.Random(seed)
    boss, show, place, role = (w for w in words(rng, 4))
    boss = boss.title()
    plain, dreamt = two_workspaces(tmp_path, [
        ("2026-05-04", f"{boss} is running the {show} at {place.title()} now, so she asked me to cover."),
        ("2026-05-11", f"Good news: I got a raise at {place.title()}! I'm at $24.50 an hour now. "
                       f"{boss} pushed for it before the new {role} arrives."),
    ])
    assert f"running the {show}" not in plain["text"]
    assert f"running the {show}" not in dreamt["text"]
    assert [f["text"] for f in dreamt["facts"]] == [f["text"] for f in plain["facts"]]


@pytest.mark.parametrize("seed", SEEDS)
def test_an_interjection_shared_by_two_statements_replaces_neither(settings, seed):
    """A later statement stands for an earlier one sharing a content word; an interjection of
    the closed class (`ground.tokenize.INTERJECTIONS`) is none: "haha" in both says nothing of
    one thing."""
    rng = random.Random(seed)
    city, friend, thing = (w.title() for w in words(rng, 3))
    api.capture(said("2026-05-02", f"Haha my sister moved to {city} last month."), "s1", settings)
    api.capture(said("2026-05-09", f"Haha {friend} would enjoy the {thing.lower()} festival."), "s2", settings)
    shown = api.profile(settings)["text"]
    assert city in shown and friend in shown


@pytest.mark.parametrize("seed", SEEDS)
def test_statements_said_in_one_message_do_not_replace_each_other(settings, seed):
    """Two statements of one message sharing a word were said at once: both stand, whatever
    the daily note's sections they went to; a later message's statement still replaces."""
    rng = random.Random(seed)
    drink, city, other = (w.lower() for w in words(rng, 3))
    api.capture(said("2026-06-01", f"This month I gave up {drink} for good. {drink.title()} "
                     f"always ruined my mornings in {city.title()}."), "s1", settings)
    shown = api.profile(settings)["text"]
    assert f"gave up {drink}" in shown and f"ruined my mornings in {city.title()}" in shown
    api.capture(said("2026-06-08", f"Back on {drink} since the {other} trip."), "s2", settings)
    shown = api.profile(settings)["text"]
    assert f"gave up {drink}" not in shown and f"Back on {drink}" in shown
