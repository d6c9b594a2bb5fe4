import json
import logging
from datetime import date

import pytest
from helpers import run_cli

from memflow.schemas.recall import Filters
from memflow.tasks.capture.dayindex import refresh_day_index
from memflow.tasks.ground.fileops import write_file
from memflow.tasks.ground.tokenize import query_tokens
from memflow.tasks.index import run_index
from memflow.tasks.recall.hybrid import search

DISTRACTORS = [
    "The quarterly budget review is scheduled for Thursday afternoon.",
    "Tomatoes in the garden need watering twice a week in July.",
    "The pasta sauce recipe uses fresh basil, garlic and a pinch of sugar.",
    "Guitar lessons moved to Saturday mornings at the music school.",
    "The database migration added an index on the orders table.",
    "Flights to Lisbon were cheaper on Tuesdays than on Fridays.",
    "The team agreed to ship the login page redesign next sprint.",
    "Our user survey showed that most people want a dark mode.",
    "The server restart fixed the memory leak, but only for a day.",
    "A new hire starts work in the support team on Monday.",
    "The work laptop needs a firmware update before the audit.",
    "Each user account gets two factor authentication by default.",
    "We picked a blue paint for the kitchen walls.",
    "The dog prefers the long walk through the park in the evening.",
    "The book club is reading a novel about a lighthouse keeper.",
    "The socket connection retries three times before giving up.",
    "Invoices are due at the end of every month.",
    "The meeting notes were shared in the project channel.",
    "The user asked for a refund because the order arrived late.",
    "The hotel near the station had a small but quiet room.",
    "Work on the kernel patch stalled while waiting for review.",
    "The apartment lease renews automatically in September.",
    "The chess tournament starts at nine in the community hall.",
    "Backups run every night and are kept for thirty days.",
    "The recipe for banana bread needs very ripe bananas.",
    "Our load test peaked at two thousand requests per second.",
    "The user interface labels were translated into German.",
    "The dentist appointment was moved to next Wednesday.",
    "The marathon training plan adds one long run per week.",
    "The printer on the third floor is out of toner again.",
    "The photo album from the wedding is finally finished.",
    "The contract work for the client ends in December.",
]
ZH = ["今天和同事开会讨论项目进度", "周末去公园散步看花", "公司的服务器晚上重启了", "晚饭做了番茄炒蛋"]


def build_corpus(lay):
    for i, sentence in enumerate(DISTRACTORS):
        zh = ZH[i % len(ZH)] if i % 6 == 0 else ""
        write_file(lay, f"daily/2026-02-{i % 9 + 1:02d}/d{i}.md",
                   f"# Log {i}\n\n{sentence}\n\n{zh}\n", name=f"Log {i}",
                   description=sentence.split(" ")[1] + " notes")
    write_file(lay, "digest/procedure/websocket.md",
               "# Reconnect\n\nWhen the socket drops, call the handler:\n\n```js\n"
               "handleWebSocketReconnect(conn, {retry: 3})\n```\n", name="Socket reconnects",
               description="how the client recovers")
    write_file(lay, "daily/2026-02-03/server.md",
               "# Outage\n\nThe API failed with ECONNREFUSED on port 5432 after the restart.\n",
               name="Outage", description="database refused connections")
    write_file(lay, "daily/2026-02-05/travel.md", "# Plans\n\nBooked flights and a hotel.\n",
               name="Travel plans", description="Trip to Zanzibar in June")
    write_file(lay, "daily/2026-02-04/commute.md",
               "# Habits\n\nMy preferred commute is a light bicycle.\n", name="Habits",
               description="daily routine")
    write_file(lay, "daily/2026-02-06/zh.md", "# 通勤\n\n我每天早上骑自行车去公司上班，路上大约二十分钟。\n",
               name="通勤习惯", description="上班方式")
    write_file(lay, "digest/personal/cycling.md",
               "# Cycling\n\nRides a light bicycle.\n\nderived_from:: [[daily/2026-02-04/commute.md#L8]]\n",
               name="Cycling", description="bicycle facts")


@pytest.fixture
def corpus(settings, lay):
    build_corpus(lay)
    run_index(settings)
    return settings


def top(settings, query, **kw):
    return [r.path for r in search(settings, query, **kw).results]


@pytest.mark.parametrize("query,path", [
    ("handleWebSocketReconnect", "digest/procedure/websocket.md"),
    ("ECONNREFUSED", "daily/2026-02-03/server.md"),
    ("Zanzibar", "daily/2026-02-05/travel.md"),
    ("每天骑自行车上班", "daily/2026-02-06/zh.md"),
])
def test_exact_identifier_description_and_chinese_rank_first(corpus, query, path):
    assert top(corpus, query)[0] == path


def test_bm25_alone_misses_the_paraphrase(corpus):
    assert "daily/2026-02-04/commute.md" not in top(corpus, "How does the user get to work?", limit=3)


def test_filters_apply_before_top_k(settings, lay):
    for i in range(60):
        write_file(lay, f"daily/2026-03-{i % 28 + 1:02d}/a{i}.md", "apples " * 20, name=f"A{i}")
    write_file(lay, "digest/wiki/fruit.md", "one apples mention among many other words here",
               name="Fruit")
    run_index(settings)
    assert top(settings, "apples", limit=1, filters=Filters(layer="digest")) == ["digest/wiki/fruit.md"]
    assert top(settings, "apples", limit=1, filters=Filters(prefix="digest/")) == ["digest/wiki/fruit.md"]
    dated = top(settings, "apples", limit=50, filters=Filters(since=date(2026, 3, 5), until=date(2026, 3, 6)))
    assert dated and all(p.startswith(("daily/2026-03-05/", "daily/2026-03-06/")) for p in dated)


def test_links_expand_with_anchor_lines_both_ways(corpus):
    response = search(corpus, "rides", limit=1)
    result = response.results[0]
    assert result.path == "digest/personal/cycling.md"
    [out] = [l for l in result.links if l.direction == "out"]
    assert (out.path, out.anchor, out.kind) == ("daily/2026-02-04/commute.md", "L8", "derived_from")
    assert out.lines == "My preferred commute is a light bicycle."
    assert out.name == "Habits" and out.description == "daily routine"
    daily = search(corpus, "bicycle", limit=1, filters=Filters(layer="daily")).results[0]
    assert any(l.direction == "in" and l.path == "digest/personal/cycling.md" for l in daily.links)


def test_day_index_pages_do_not_take_the_places_of_notes(settings, lay):
    build_corpus(lay)
    for i in range(5):
        write_file(lay, f"daily/2026-04-01/k{i}.md", f"paddle trip {i}", name=f"Trip {i}",
                   description=f"kayak outing number {i}")
    refresh_day_index(lay, date(2026, 4, 1))
    run_index(settings)
    default = top(settings, "kayak outing", limit=3)
    assert default and all("/2026-04-01/" in p for p in default)
    # Searched too, the page that lists all five competes with them for the places.
    assert "daily/2026-04-01.md" in top(settings, "kayak outing", limit=6,
                                        filters=Filters(kinds=("note", "day_index")))


def test_min_score_and_explain(corpus):
    response = search(corpus, "ECONNREFUSED", limit=5, explain=True)
    first = response.results[0]
    assert first.score == pytest.approx(1 / 61)
    assert first.explain["ranks"] == {"keyword": 1}
    assert first.vector is None and first.keyword > 0
    assert search(corpus, "socket retry", min_score=1 / 62).results[-1].score >= 1 / 62


def test_search_logs_hit_counts(corpus, caplog):
    with caplog.at_level(logging.INFO, logger="memflow.recall"):
        search(corpus, "socket")
    assert "vector_hits=0 keyword_hits=" in caplog.text


def test_watermark_reports_changes_since_the_index(corpus, lay):
    assert search(corpus, "socket").watermark["stale"] is False
    write_file(lay, "daily/2026-02-07/new.md", "fresh")
    mark = search(corpus, "socket").watermark
    assert mark["stale"] is True and mark["changed_since"] == 1


def test_cli_json_shape(corpus, lay):
    res = run_cli("-w", str(lay.root), "search", "ECONNREFUSED", "--json", "--limit", "2")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert set(data) >= {"results", "watermark", "vector_hits", "keyword_hits"}
    assert set(data["results"][0]) >= {"path", "start_line", "end_line", "text", "score", "vector",
                                       "keyword", "links"}
    assert "vector_hits=0 keyword_hits=" in res.stderr


def test_cli_text_output_header(corpus, lay):
    res = run_cli("-w", str(lay.root), "search", "Zanzibar", "--explain")
    assert res.returncode == 0, res.stderr
    first = res.stdout.splitlines()[0]
    assert first.startswith("========== daily/2026-02-05/travel.md:6-8 [score=0.0164 vector=- keyword=")
    assert "explain: keyword rank 1" in res.stdout


def test_search_without_index_is_a_clear_error(settings, lay):
    res = run_cli("-w", str(lay.root), "search", "x")
    assert res.returncode == 1 and "run `memflow" in res.stderr and "index" in res.stderr


def test_links_follow_edits_and_an_older_snapshot_is_rebuilt(corpus, lay):
    write_file(lay, "daily/2026-02-07/ride.md", "# Ride\n\nSee [[digest/personal/cycling.md]].\n",
               name="Ride", description="weekend ride")
    run_index(corpus)
    cycling = search(corpus, "rides", limit=1, filters=Filters(layer="digest")).results[0]
    assert cycling.path == "digest/personal/cycling.md"
    assert ("in", "daily/2026-02-07/ride.md", "Ride") in [(l.direction, l.path, l.name) for l in cycling.links]
    folder = next((lay.index_dir / "keyword").iterdir())
    gen = folder / (folder / "CURRENT").read_text().strip()
    meta = json.loads((gen / "meta.json").read_text())
    (gen / "meta.json").write_text(json.dumps({**meta, "format": 1}))
    res = run_cli("-w", str(lay.root), "search", "rides")
    assert res.returncode == 1 and "format 1" in res.stderr and "memflow -w" in res.stderr
    assert run_index(corpus).keyword_rebuilt  # no file changed, the old snapshot is replaced
    assert search(corpus, "rides", limit=1, filters=Filters(layer="digest")).results[0].links


def test_demo_query_for_rolling_back_a_deploy_finds_the_rollback_procedure(tmp_path):
    """The demo's own query: "roll back" in the question meets `rollback` in the note; before,
    the team-size node (which says "deploy" four times) came first."""
    import memflow

    root = memflow.demo(tmp_path / "demo", out=lambda *a: None)
    response = memflow.search("how to roll back a deploy", root, limit=3)
    assert "deploy/rollback.sh" in response.results[0].text
    assert "engineers" not in response.results[0].text


def say(day, sid, *texts):
    return [{"id": f"{sid}-{n}", "role": "user", "timestamp": f"{day}T09:{n:02d}:00Z", "content": t}
            for n, t in enumerate(texts)]


def test_a_digest_fact_and_the_daily_line_it_came_from_are_one_hit(settings, lay):
    from memflow.tasks.capture.conversation import auto_memory
    from memflow.tasks.dream import run_dream

    auto_memory(settings, say("2026-06-01", "p", "The office printer on floor 3 jams on A3 paper."), "p")
    run_dream(settings, date(2026, 6, 1))
    both = search(settings, "printer floor 3 jams", limit=5, filters=Filters(superseded=True))
    layers = [r.path.split("/")[0] for r in both.results]
    assert layers.count("digest") + layers.count("daily") == 1, layers  # one of the two, not both
    daily_only = search(settings, "printer floor 3 jams", limit=5, filters=Filters(layer="daily"))
    assert [r.path.split("/")[0] for r in daily_only.results] == ["daily"]


def test_a_replaced_fact_never_outranks_the_current_one(settings, lay):
    from memflow.tasks.capture.conversation import auto_memory
    from memflow.tasks.dream import run_dream

    auto_memory(settings, say("2026-06-01", "h1", "I live in Berlin, near the Tiergarten."), "h1")
    run_dream(settings, date(2026, 6, 1))
    auto_memory(settings, say("2026-06-09", "h2", "I moved from Berlin to Lisbon last week."), "h2")
    run_dream(settings, date(2026, 6, 9))
    top = search(settings, "where do I live Berlin", limit=5).results
    assert "Lisbon" in top[0].text and "(replaced" not in top[0].text  # the turn or the node
    node = next(r.text for r in top if r.path.startswith("digest/"))  # below the turn it restates
    assert node.index("Lisbon") < node.index("near the Tiergarten")
    # the old line is history: still searchable, labelled, and below the hit stating the new value
    assert any("(replaced 2026-06-09) I live in Berlin" in r.text for r in top)
    first_new = next(i for i, r in enumerate(top) if "Lisbon" in r.text)
    assert all(i > first_new for i, r in enumerate(top) if "(replaced 2026-06-09)" in r.text)
    history = search(settings, "Tiergarten", limit=3, filters=Filters(layer="daily")).results
    assert history[0].path.startswith("daily/2026-06-01/")  # found when nothing current matches
    assert "(replaced 2026-06-09)" in history[0].text
    as_then = search(settings, "Tiergarten", limit=3, filters=Filters(as_of=date(2026, 6, 5))).results
    assert as_then and not any("(replaced" in r.text for r in as_then)  # current as of then
    flat = search(settings, "where do I live Berlin", limit=5, filters=Filters(superseded=True)).results
    assert any("I live in Berlin" in r.text for r in flat)


def test_a_replaced_line_is_labelled_and_ranks_just_below_what_replaced_it(settings, lay):
    """A hit whose only query matches are replaced lines goes just below the hit stating the
    new value, not below every weaker match: the old statement stays findable in the top results,
    labelled; the other lines of its note stay current."""
    from datetime import date as day

    from memflow.tasks.capture.conversation import auto_memory
    from memflow.tasks.dream import run_dream
    from memflow.tasks.recall.replaced import is_replaced, label

    text = "# Note > ## Facts\n- I live in Berlin. [[s.jsonl#L1]]\n- My bike lock tip. [[s.jsonl#L2]]"
    shown = label(text, 6, {5: day(2026, 6, 9)}).split("\n")
    assert shown[1] == "- (replaced 2026-06-09) I live in Berlin. [[s.jsonl#L1]]" and is_replaced(shown[1])
    assert not is_replaced(shown[2])
    auto_memory(settings, say("2026-06-01", "h1", "I live in Berlin.",
                              "My bike lock tip: a U-lock through the back wheel."), "h1")
    run_dream(settings, date(2026, 6, 1))
    auto_memory(settings, say("2026-06-09", "h2", "I moved from Berlin to Lisbon."), "h2")  # the old value named
    weak = [f"The {w} fair in Berlin had {n} stands." for n, w in
            enumerate("book car art food toy game wine film boat bike tea jazz".split(), 3)]
    for n, said in enumerate(weak):  # more current hits on "Berlin" than the results hold
        auto_memory(settings, say(f"2026-06-{10 + n}", f"f{n}", said), f"f{n}")
    run_dream(settings, date(2026, 6, 30))
    hits = search(settings, "I live in Berlin", limit=10).results
    shown = [(i, r.text.find(mark)) for i, r in enumerate(hits) for mark in (
        "(replaced 2026-06-09) I live in Berlin", "until 2026-06-09: I live in Berlin") if mark in r.text]
    assert shown, [r.text[:90] for r in hits]  # the old value, labelled, among the first ten
    new = next((i, r.text.find("Lisbon")) for i, r in enumerate(hits) if "Lisbon" in r.text)
    assert new < shown[0], [r.text[:60] for r in hits]  # below the new value
    bike = search(settings, "bike lock U-lock back wheel", limit=3).results[0]
    assert "bike lock tip" in bike.text and "(replaced" not in bike.text.split("bike lock")[0].split("\n")[-1]


def test_provenance_links_are_not_searched(settings, lay):
    write_file(lay, "daily/2026-06-01/note.md",
               "# Note\n\n- The boiler was serviced. [[session/dialog/zorblax-7.jsonl#L3]]\n"
               "- See [[digest/wiki/heating-plan.md]].\n", name="Note")
    run_index(settings)
    assert search(settings, "zorblax", limit=3).results == []
    assert search(settings, "heating plan", limit=3).results[0].path == "daily/2026-06-01/note.md"


def test_repeated_fact_lines_are_cut_from_later_results():
    from memflow.tasks.recall.hybrid import elide_repeats

    shown = {"i went to a pottery class on friday."}
    text = ("# Notes > ## Facts\n- Melanie: I went to a pottery class on Friday. [[session/dialog/s.jsonl#L2]]\n"
            "- Melanie: The kids painted a sunset. [[session/dialog/s.jsonl#L3]]")
    out, fresh, dropped = elide_repeats(text, shown)
    assert dropped == 1 and "pottery" not in out and "painted a sunset" in out
    assert fresh == {"the kids painted a sunset."}
    digest_line = "- 2026-05-01: I went to a pottery class on Friday. [[daily/2026-05-01/n.md#L12]]"
    assert elide_repeats(digest_line, shown) == ("", set(), 1)
    history = "  - until 2026-05-01: I went to a pottery class on Friday. [[daily/x.md#L3]]"
    assert elide_repeats(history, shown)[2] == 0  # history lines are context, never cut


def test_feedback_terms_come_from_what_the_top_hits_share_and_reach_a_note_without_the_query_words(settings, lay):
    """Pseudo-relevance feedback (prf_terms > 0): terms shared by the top keyword hits join a
    second BM25 pass, so a note that says the same thing in other words is found; off by default."""
    from memflow.tasks.recall.hybrid import feedback_terms, open_index
    from memflow.tasks.stores import keyword

    for n in range(3):
        write_file(lay, f"daily/2026-04-0{n + 1}/garden{n}.md",
                   f"# Garden\n\nThe tomato seedlings in the greenhouse need watering, day {n}.\n", name=f"G{n}")
    write_file(lay, "daily/2026-04-09/greenhouse.md",
               "# Chores\n\nOpened the greenhouse vents; seedlings looked healthy.\n", name="Chores")
    for n in range(8):
        write_file(lay, f"daily/2026-05-0{n + 1}/other{n}.md", f"# Other\n\nA meeting about budgets {n}.\n",
                   name=f"O{n}")
    run_index(settings)
    index = open_index(lay, settings)
    tokens = query_tokens("tomato watering", settings.keyword_tokenizer)
    hits = keyword.top_k(index, tokens, 10)
    extra = feedback_terms(index, tokens, hits[:3], 5, settings.keyword_tokenizer)
    assert set(extra) >= {query_tokens("greenhouse", settings.keyword_tokenizer)[0]}
    assert max(extra.values()) == 1.0 and not set(extra) & set(tokens)
    assert "daily/2026-04-09/greenhouse.md" not in top(settings, "tomato watering", limit=5)
    with_prf = settings.model_copy(update={"prf_terms": 5, "prf_docs": 3})
    assert "daily/2026-04-09/greenhouse.md" in top(with_prf, "tomato watering", limit=5)


def test_note_weight_lifts_a_note_with_several_matching_chunks_over_a_lone_line(settings, lay):
    from memflow.tasks.recall.hybrid import note_scores, open_index

    write_file(lay, "daily/2026-04-01/lone.md", "# Lone\n\nkayak kayak trip\n", name="Lone")
    body = "\n\n".join(f"## Part {n}\n\nkayak trip notes {n}. " + "filler words here " * 60 for n in range(4))
    write_file(lay, "daily/2026-04-02/many.md", "# Many\n\n" + body + "\n", name="Many")
    run_index(settings)
    index = open_index(lay, settings)
    paths = index.docs.column("path").to_pylist()
    from memflow.tasks.stores import keyword

    hits = keyword.top_k(index, query_tokens("kayak trip", settings.keyword_tokenizer), 20)
    assert paths[hits[0][0]] == "daily/2026-04-01/lone.md"
    assert sum(paths[row] == "daily/2026-04-02/many.md" for row, _ in hits) > 1
    lifted = note_scores(index, hits, 0.5)
    assert paths[lifted[0][0]] == "daily/2026-04-02/many.md"
    assert sorted(row for row, _ in lifted) == sorted(row for row, _ in hits)  # nothing dropped
    assert note_scores(index, hits, 0.0) == hits
