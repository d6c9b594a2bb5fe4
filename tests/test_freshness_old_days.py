"""A one-shot search's freshness check on a workspace kept daily for years (issue #58): it stats
the layer roots, the folders changed last and the hits, never every day folder, and it still
says stale for what another program did to an old day folder where the answer lies: a hit
edited in place or deleted, a file added beside a hit, a folder memory-flows wrote since the
index run. What it cannot see (an add in an old folder away from every hit) it says, and
`status` (every file stat'ed) and the next `memflow index` see."""

from __future__ import annotations

import os
import random
import string
from datetime import date, timedelta

from memflow import api
from memflow.tasks.index import freshness

DAYS = freshness.WATCHED + 40  # more day folders than the check watches


def word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(5, 9)))


def dated(path, day: date) -> None:
    """Give a file and its folder the mtime of its day, as if written then."""
    ns = int((day - date(1970, 1, 1)).total_seconds() + 9 * 3600) * 10**9
    os.utime(path, ns=(ns, ns))
    os.utime(path.parent, ns=(ns, ns))


def years_of_days(ws) -> tuple[list[date], dict[date, str]]:
    """A note per day over DAYS days ending 2026-11-30, each dated on disk; day -> its note."""
    rng = random.Random(58)
    days = [date(2026, 11, 30) - timedelta(days=7 * n) for n in range(DAYS)]
    notes = {}
    for day in days:
        rel = f"daily/{day.isoformat()}/{word(rng)}.md"
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {word(rng)}\n\n- {' '.join(word(rng) for _ in range(10))}\n", encoding="utf-8")
        dated(path, day)
        notes[day] = rel
    return days, notes


def outside_write(ws, rel: str, text: str) -> None:
    (ws / rel).write_text(text, encoding="utf-8")  # another program: no journal, no index


def test_a_search_checks_the_roots_recent_folders_and_hits_not_every_day_folder(settings, lay, monkeypatch):
    ws = lay.root
    years_of_days(ws)
    api.index(ws)
    assert api.status(ws)["index"]["stale"] is False
    stats: list[str] = []
    real = freshness.mtime_ns
    monkeypatch.setattr(freshness, "mtime_ns", lambda p: stats.append(str(p)) or real(p))
    response = api.search("anything at all", ws)
    assert response.watermark["checked"] == "journal and folders"
    hits = {r.path for r in response.results}
    assert len(stats) <= freshness.WATCHED + 4 + 2 * len(hits) < DAYS


def test_another_programs_edits_in_an_old_day_folder_where_a_hit_lies_make_the_search_stale(settings, lay):
    ws = lay.root
    days, notes = years_of_days(ws)
    old = days[-1]  # far older than the folders the check watches
    outside_write(ws, notes[old], "# Old\n\n- the osprey nest by the pier\n")
    dated(ws / notes[old], old)
    api.index(ws)
    assert [r.path for r in api.search("osprey nest", ws).results] == [notes[old]]
    assert api.search("osprey nest", ws).watermark["stale"] is False
    # a file added beside the hit
    outside_write(ws, f"daily/{old.isoformat()}/added.md", "# Added\n\n- plain words\n")
    assert api.search("osprey nest", ws).watermark["stale"] is True
    api.index(ws)
    assert api.search("osprey nest", ws).watermark["stale"] is False
    # the hit itself edited in place (its folder's mtime does not change)
    outside_write(ws, notes[old], "# Old\n\n- the osprey nest moved to the mast\n")
    assert api.search("osprey nest", ws).watermark["stale"] is True
    api.index(ws)
    hits = api.search("osprey mast", ws)
    assert hits.results[0].path == notes[old] and hits.watermark["stale"] is False
    # the hit deleted
    (ws / notes[old]).unlink()
    assert api.search("osprey nest", ws).watermark["stale"] is True


def test_an_add_in_an_old_folder_away_from_the_hits_is_said_unseen_and_status_finds_it(settings, lay):
    ws = lay.root
    days, notes = years_of_days(ws)
    old = days[-2]
    api.index(ws)
    outside_write(ws, f"daily/{old.isoformat()}/backfill.md", "# Backfill\n\n- the kittiwake colony count\n")
    response = api.search("kittiwake", ws)
    assert response.results == [] and response.watermark["stale"] is False
    assert "outside the" in response.watermark["unseen"]  # says what it did not look at
    assert api.status(ws)["index"]["stale"] is True
    api.index(ws)
    assert [r.path for r in api.search("kittiwake", ws).results] == [f"daily/{old.isoformat()}/backfill.md"]


def test_a_folder_memory_flows_wrote_is_watched_until_the_next_index_run(settings, lay):
    ws = lay.root
    days, notes = years_of_days(ws)
    old = days[-3].isoformat()
    api.index(ws)
    api.write(f"daily/{old}/ours.md", "# Ours\n\n- the gannet returns\n", None, None, None, ws)
    assert api.search("gannet", ws).watermark["stale"] is False  # our write, indexed on return
    outside_write(ws, f"daily/{old}/theirs.md", "# Theirs\n\n- plain words\n")
    assert api.search("plain", ws).watermark["stale"] is True  # the folder is watched now
    api.index(ws)
    assert api.search("plain", ws).watermark["stale"] is False
