"""`memflow forget`: a forgotten session leaves no trace in search, files or index, a later
capture of its older messages does not bring it back, and `--dry-run` changes nothing."""

from __future__ import annotations

import hashlib
import json
from datetime import date

import pytest
from helpers import run_cli

import memflow
from memflow.tasks.capture.conversation import auto_memory
from memflow.tasks.dream import run_dream


def say(day, sid, *texts):
    return [{"id": f"{sid}-{n}", "role": "user", "timestamp": f"{day}T09:{n:02d}:00Z", "content": t}
            for n, t in enumerate(texts)]


def tree(root) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "metadata/index" not in p.as_posix()}


def everything(root, but=()) -> str:
    """Every byte of the workspace, index included, as text. (Search it for `4471-ZULU`, not
    `4471`: LanceDB names its data files by random hex, and a manifest holds those names.)"""
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*")
                     if p.is_file() and p.name not in but)


def workspace(settings):
    secret = say("2026-07-01", "secret", "My boat is moored at berth 4471-ZULU.", "I live in Berlin, near the park.")
    auto_memory(settings, secret, "secret")
    auto_memory(settings, say("2026-07-02", "other", "The boiler is serviced every March."), "other")
    run_dream(settings, date(2026, 7, 2))
    return secret


def test_forgetting_a_session_leaves_no_trace(settings, lay):
    secret = workspace(settings)
    assert memflow.search("4471-ZULU", settings).results
    before = tree(lay.root)
    res = run_cli("-w", str(lay.root), "forget", "--session", "secret", "--dry-run")
    assert res.returncode == 0 and "would delete daily/2026-07-01/" in res.stdout, res.stderr
    assert tree(lay.root) == before  # a dry run changes nothing
    res = run_cli("-w", str(lay.root), "forget", "--session", "secret")
    assert res.returncode == 0, res.stderr
    assert "4471-zulu" not in everything(lay.root).casefold() and "Berlin" not in everything(lay.root)
    assert not memflow.search("4471-ZULU", settings).results
    assert not memflow.search("Berlin park", settings).results
    assert memflow.search("boiler serviced", settings).results  # the rest stays
    memflow.capture(secret, "secret", settings)  # the older messages arrive again
    assert "4471-zulu" not in everything(lay.root).casefold()
    assert not memflow.search("4471-ZULU", settings).results
    later = say("2026-07-03", "secret", "The garage door code changed.")
    later[0]["id"] = "secret-new"
    assert memflow.capture(later, "secret", settings).new_messages == 1  # new messages are welcome
    assert "tombstones.json" in " ".join(tree(lay.root))


def test_forgetting_a_text_removes_every_mention_and_keeps_the_rest(settings, lay):
    workspace(settings)
    (lay.root / "resource/codes.txt").write_text("wifi: guest\nsafe: 4471-ZULU\n")
    lines = memflow.forget(settings, match="4471-zulu")
    assert any(line.startswith("edit resource/codes.txt") for line in lines)
    # the tombstone keeps a salted hash of the text, not the text
    assert "zulu" not in everything(lay.root).casefold()
    assert "4471" not in (lay.root / "resource/codes.txt").read_text()
    assert "wifi: guest" in (lay.root / "resource/codes.txt").read_text()
    assert "Berlin" in everything(lay.root)  # the rest of that conversation stays
    log = (lay.root / "session/dialog/secret.jsonl").read_text().splitlines()
    assert json.loads(log[0]) == {"forgotten": True} and "Berlin" in log[1]  # line numbers kept


def test_forgetting_a_note_keeps_it_from_coming_back(settings, lay):
    workspace(settings)
    note = next(p.relative_to(lay.root).as_posix() for p in (lay.root / "daily/2026-07-02").glob("*.md"))
    memflow.forget(settings, note=note)
    assert not (lay.root / note).exists() and "boiler" not in everything(lay.root)
    auto_memory(settings, say("2026-07-02", "other", "The boiler is serviced every March.",
                              "The boiler is in the basement."), "other")
    assert not list((lay.root / "daily/2026-07-02").glob("*.md"))  # not recreated


def test_a_forgotten_current_value_gives_the_older_one_back(settings, lay):
    auto_memory(settings, say("2026-07-01", "a", "I live in Berlin, near the Tiergarten park."), "a")
    run_dream(settings, date(2026, 7, 1))
    auto_memory(settings, say("2026-07-05", "b", "I moved from Berlin to Lisbon last week."), "b")
    run_dream(settings, date(2026, 7, 5))
    memflow.forget(settings, session="b")
    node = next((lay.root / "digest").rglob("the-user.md")).read_text()
    assert "Lisbon" not in node and "until" not in node
    assert "\n- 2026-07-01: I live in Berlin, near the Tiergarten park. [[daily/2026-07-01/" in node


def test_forgetting_purges_the_forgotten_texts_vectors_from_the_embedding_cache(settings, lay, fake_model):
    """The embedding cache outlives reindexes and holds no text, but a vector can be inverted to
    approximate its text: after a forget, no vector of a forgotten text is kept anywhere."""
    from fakemodel import DIMS

    from memflow.tasks.index import embedding_cache_dir, run_index
    from memflow.tasks.stores.lance import EmbeddingCache, IndexStore

    model = "openai/test-embed"
    settings = settings.model_copy(update={"embedding_model": model, "model_api_key": "x",
                                           "model_api_base": fake_model.api_base})
    workspace(settings)
    run_index(settings)
    store = IndexStore(lay.index_dir / "lance")
    paths = set(store.chunk_columns(["path"]).column("path").to_pylist())
    secret = store.text_shas(sorted(p for p in paths if p.startswith("daily/2026-07-01/")
                                    or p.startswith("session/") and "secret" in p))
    assert any(p.startswith("session/") and "secret" in p for p in paths)  # its transcript too
    other = store.text_shas(sorted(p for p in paths if p.startswith("daily/2026-07-02/")))
    cache = EmbeddingCache(embedding_cache_dir(settings))
    assert secret and other and set(cache.get(model, DIMS, sorted(secret | other))) == secret | other
    memflow.forget(settings, session="secret")
    assert cache.get(model, DIMS, sorted(secret)) == {}
    assert set(cache.get(model, DIMS, sorted(other))) == other  # the rest is kept
    assert "4471-zulu" not in everything(lay.root).casefold()


def test_a_forgotten_note_written_after_the_index_leaves_no_vector(settings, lay, fake_model):
    """With vectors on, a write's vectors ride in its delta segment until the tables are brought
    level: a forget of that note leaves its vector in no table, cache or snapshot."""
    import numpy as np
    import pyarrow.compute as pc
    from fakemodel import DIMS

    from memflow.tasks.index import embedding_cache_dir, index_paths, indexing, run_index
    from memflow.tasks.index.vectors import embedding_input, text_sha
    from memflow.tasks.stores import keyword
    from memflow.tasks.stores.lance import EmbeddingCache, IndexStore

    model = "openai/test-embed"
    settings = settings.model_copy(update={"embedding_model": model, "model_api_key": "x",
                                           "model_api_base": fake_model.api_base})
    workspace(settings)
    run_index(settings)
    rel = "daily/2026-07-03/locker.md"
    (lay.root / rel).parent.mkdir(parents=True, exist_ok=True)
    (lay.root / rel).write_text("# Locker\n\nThe gym locker code is 8812-kilo.\n", encoding="utf-8")
    index_paths(settings, [rel])
    index = keyword.current(indexing.keyword_dir(lay, settings))
    assert index.delta_vectors is not None  # the write's vector is in the delta only
    rows = index.docs.filter(pc.equal(index.docs.column("path"), rel)).to_pylist()
    shas = {text_sha(embedding_input(row)) for row in rows}
    assert shas
    memflow.forget(settings, note=rel)
    assert EmbeddingCache(embedding_cache_dir(settings)).get(model, DIMS, sorted(shas)) == {}
    assert not shas & IndexStore(lay.index_dir / "lance").text_shas()
    folder = indexing.keyword_dir(lay, settings)
    assert [p.name for p in folder.glob("gen-*")] == [keyword.current(folder).generation]  # no older one
    current = keyword.current(folder)
    assert current.main is None and rel not in set(current.docs.column("path").to_pylist())
    assert np.asarray(current.has_vector).all()


def test_a_tombstone_holds_salted_hashes_and_stops_the_phrase_inside_any_later_message(settings, lay):
    from memflow.tasks.ground import tombstones

    tombstones.add(lay, keys=["id:m1"], said=["I live in Berlin, near the park."], phrases=["4471-ZULU"],
                   notes=[("s", "2026-07-01")])
    stored = (lay.state_dir / "tombstones.json").read_text()
    assert "id:m1" not in stored and "berlin" not in stored.casefold()
    assert "4471-zulu" not in stored.casefold()
    salt = (lay.state_dir / "forget_salt").read_text().strip()
    assert len(bytes.fromhex(salt)) == 32
    tomb = tombstones.load(lay)
    assert tomb.stops("id:m1", "anything")  # the same message again
    assert tomb.stops("id:other", "i live in BERLIN -- near the park!")  # its words, normalised
    assert tomb.stops("id:x", "the code was 4471 zulu, or 4471_Zulu")  # the phrase inside a message
    assert tomb.stops("id:x", "ＳＡＦＥ: 4471-zulu7")  # width, case and a longer word
    assert not tomb.stops("id:x", "the code was 4471 and zulu")  # not that phrase
    assert not tomb.stops("id:x", "ok")
    assert tomb.stops_note("s", "2026-07-01") and not tomb.stops_note("s", "2026-07-02")
    (lay.state_dir / "forget_salt").unlink()  # without its salt a tombstone matches nothing...
    with pytest.raises(ValueError, match="forget_salt"):
        (lay.state_dir / "forget_salt").write_text("not hex")
        tombstones.load(lay).stops("id:m1", "")  # ...and a damaged salt is one clear error


def test_an_old_tombstone_file_with_plain_texts_is_converted_to_hashes(settings, lay):
    from memflow.tasks.ground import tombstones

    (lay.state_dir / "tombstones.json").write_text(json.dumps(
        {"messages": ["id:m1"], "texts": ["4471-zulu"], "notes": ["s|2026-07-01"]}))
    tomb = tombstones.load(lay)
    assert "4471-zulu" not in (lay.state_dir / "tombstones.json").read_text()
    assert tomb.stops("id:m1", "") and tomb.stops("id:y", "safe 4471-ZULU")
    assert tomb.stops_note("s", "2026-07-01")


def test_forget_match_reaches_a_users_note_and_renames_what_carries_the_text(settings, lay):
    auto_memory(settings, say("2026-07-01", "a", "My Quokka Marmalade needs jars from Perth.",
                              "I live in Lisbon near the river."), "a")
    note = next((lay.root / "daily/2026-07-01").glob("*.md"))
    assert "quokka-marmalade" in note.name
    (lay.root / "digest/personal/jam.md").write_text(
        "# Jam\n\nMy quokka marmalade is in the cellar.\nBread too.\n")
    item = note.read_text().split("\n").index(next(x for x in note.read_text().split("\n")
                                                  if x.startswith("- I live in Lisbon"))) + 1
    link = f"[[{note.relative_to(lay.root).as_posix()}#L{item}]]"
    (lay.root / "digest/wiki/pantry.md").write_text(f"# Pantry\n\nsee {link}\n")
    lines = memflow.forget(settings, match="QUOKKA marmalade", dry_run=True)
    assert "edit digest/personal/jam.md: remove 1 line(s)" in lines
    assert any(line.startswith(f"rename daily/2026-07-01/{note.name} -> daily/2026-07-01/") for line in lines)
    memflow.forget(settings, match="QUOKKA marmalade")
    assert "quokka" not in everything(lay.root).casefold()
    assert (lay.root / "digest/personal/jam.md").read_text() == "# Jam\n\nBread too.\n"
    renamed = next((lay.root / "daily/2026-07-01").glob("*.md"))
    text = renamed.read_text()
    assert "Lisbon" in text and "quokka" not in renamed.name
    cited = 1 + next(n for n, x in enumerate(text.split("\n")) if x.startswith("- I live in Lisbon"))
    assert f"[[daily/2026-07-01/{renamed.name}#L{cited}]]" in (lay.root / "digest/wiki/pantry.md").read_text()


# --- issue 57: a sentence goes, not its neighbours; a killed forget is finished by the next ---

def _names(seed: int, n: int) -> list[str]:
    import random

    rng = random.Random(seed)
    return ["".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3)).title()
            for _ in range(n)]


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_forget_match_removes_the_sentence_that_states_it_not_its_neighbours(settings, lay, seed):
    doctor, sister, city, pet, town = _names(seed, 5)
    kept = [f"My sister {sister} lives in {city}.", f"We adopted a beagle named {pet}."]
    said = f"My dentist is Dr. {doctor}, he works in {town}. {kept[0]}"
    auto_memory(settings, say("2026-07-01", "a", said, f"I met Dr. {doctor} again! {kept[1]}"), "a")
    run_dream(settings, date(2026, 7, 1))
    memflow.forget(settings, match=f"dr. {doctor}")
    assert doctor.casefold() not in everything(lay.root).casefold()
    log = [json.loads(x) for x in (lay.root / "session/dialog/a.jsonl").read_text().splitlines()]
    assert [m["content"] for m in log] == kept  # each message keeps its other sentence, same line
    notes = "\n".join(p.read_text() for p in (lay.root / "daily/2026-07-01").glob("*.md"))
    digest = "\n".join(p.read_text() for p in (lay.root / "digest").rglob("*.md"))
    for sentence in kept:
        assert sentence in notes
    assert city in digest and pet in digest
    assert memflow.search(f"{sister} {city}", settings).results  # and the index has it


def test_forget_dry_run_prints_the_exact_texts_that_would_go_per_file(settings, lay):
    auto_memory(settings, say("2026-07-01", "a", "My dentist is Dr. Patel, he works downtown. "
                              "My sister Ana lives in Porto."), "a")
    (lay.root / "resource/contacts.txt").write_text("Plumber: Joe. Dentist: Dr. Patel, on Main St.\nGym: 7am.\n")
    res = run_cli("-w", str(lay.root), "forget", "--match", "Dr. Patel", "--dry-run")
    assert res.returncode == 0, res.stderr
    out = res.stdout.split("\n")
    log = out.index("would forget 0 message(s), cut sentences from 1 in session/dialog/a.jsonl")
    assert out[log + 1] == "    - My dentist is Dr. Patel, he works downtown."
    resource = next(n for n, x in enumerate(out) if x.startswith("would edit resource/contacts.txt"))
    assert out[resource + 1] == "    - Dentist: Dr. Patel, on Main St."
    assert not any("Porto" in x or "Plumber" in x or "Gym" in x for x in out if x.startswith("    - "))
    assert "Patel" in (lay.root / "resource/contacts.txt").read_text()  # nothing changed
    memflow.forget(settings, match="Dr. Patel")
    assert (lay.root / "resource/contacts.txt").read_text() == "Plumber: Joe.\nGym: 7am.\n"


def test_a_tombstone_cuts_the_forgotten_sentence_from_a_later_message_and_keeps_the_rest(settings, lay):
    auto_memory(settings, say("2026-07-01", "a", "Dr. Patel said my knee is fine."), "a")
    memflow.forget(settings, match="Dr. Patel")
    later = [{"role": "user", "timestamp": "2026-07-03T10:00:00Z",
              "content": "Dr. Patel called again. Yesterday we adopted a beagle named Tofu."}]
    result = memflow.capture(later, "b", settings)
    assert (result.new_messages, result.stopped, result.trimmed) == (1, 0, 1)
    log = (lay.root / "session/dialog/b.jsonl").read_text()
    assert "Tofu" in log and "patel" not in log.casefold()
    assert memflow.capture(later, "b", settings).new_messages == 0  # sent again: known, not logged twice
    assert len((lay.root / "session/dialog/b.jsonl").read_text().splitlines()) == 1


def _links(root) -> list[str]:
    import re

    return [t for p in list((root / "daily").rglob("*.md")) + list((root / "digest").rglob("*.md"))
            for t in re.findall(r"\[\[([^\]|#]+)", p.read_text())]


def test_no_related_link_dangles_after_forget_removes_a_node(settings, lay):
    auto_memory(settings, say("2026-07-01", "a", "Snabror runs on three hosts.",
                              "The snabror container restarts every night."), "a")
    run_dream(settings, date(2026, 7, 1))  # the container's node links to the node Snabror
    assert any("Related: " in p.read_text() for p in (lay.root / "digest").rglob("*.md"))
    memflow.forget(settings, match="runs on three hosts")
    assert all((lay.root / t).exists() for t in _links(lay.root))
    from memflow.tasks.check import check_workspace

    assert [f for f in check_workspace(settings).findings if f.area == "links"] == []


def test_check_repair_removes_a_related_link_to_a_node_that_is_gone(settings, lay):
    (lay.root / "digest/wiki/a.md").write_text("# A\n\n- x\n\nRelated: [[digest/wiki/gone.md]], [[digest/wiki/b.md]]\n")
    (lay.root / "digest/wiki/b.md").write_text("# B\n\n- y\n\nRelated: [[digest/wiki/gone.md]]\n")
    from memflow.tasks.check import check_workspace

    found = [f for f in check_workspace(settings).findings if f.area == "links"]
    assert len(found) == 2 and all(f.repair for f in found)
    check_workspace(settings, fix=True)
    assert (lay.root / "digest/wiki/a.md").read_text() == "# A\n\n- x\n\nRelated: [[digest/wiki/b.md]]\n"
    assert (lay.root / "digest/wiki/b.md").read_text() == "# B\n\n- y\n\n"
    assert [f for f in check_workspace(settings).findings if f.area == "links"] == []


def _killed_half_way(settings, lay, match: str):
    """A forget killed after saving its plan and writing its files, before its renames and
    deletions (what a SIGKILL there leaves), with a temp file of a write it was doing."""
    from memflow.tasks.forget import plan_forget
    from memflow.tasks.forget.forgetting import journal_of
    from memflow.tasks.forget.journal import carry_out, save

    plan = plan_forget(settings, match=match)
    journal = journal_of(lay, plan, set())
    save(lay, journal)
    carry_out(lay, type(journal)(writes=journal.writes, sources=journal.sources, before=journal.before))
    (lay.root / "daily/2026-07-01/.x.md.k2j3.tmp").write_text("half")
    return plan


def _quokka_workspace(settings, lay):
    auto_memory(settings, say("2026-07-01", "a", "My Quokka Marmalade needs jars from Perth.",
                              "I live in Lisbon near the river."), "a")
    run_dream(settings, date(2026, 7, 1))
    note = next((lay.root / "daily/2026-07-01").glob("*quokka*.md")).relative_to(lay.root).as_posix()
    (lay.root / "digest/wiki/pantry.md").write_text(f"# Pantry\n\nsee [[{note}]]\n")


def test_a_forget_killed_after_saving_its_plan_is_finished_by_the_next_forget(settings, lay):
    from memflow.tasks.check import check_workspace

    _quokka_workspace(settings, lay)
    plan = _killed_half_way(settings, lay, "quokka marmalade")
    # the renamed note is written at its new name (links point there), its old one not yet gone
    assert plan.renames and all((lay.root / old).exists() and (lay.root / new).exists()
                                for old, new in plan.renames.items())
    assert any(f.area == "state" and "forget" in f.detail for f in check_workspace(settings).findings)
    lines = memflow.forget(settings, match="quokka marmalade")  # the same command again
    assert "finished the forget a kill interrupted" in lines
    assert all((lay.root / t).exists() for t in _links(lay.root))
    assert not list(lay.root.rglob(".*.tmp")) and not (lay.state_dir / "forget_plan.json").exists()
    assert all((lay.root / new).exists() and not (lay.root / old).exists() for old, new in plan.renames.items())
    assert "quokka" not in everything(lay.root).casefold()
    assert check_workspace(settings).findings == []


def test_check_repair_finishes_a_killed_forget(settings, lay):
    from memflow.tasks.check import check_workspace

    _quokka_workspace(settings, lay)
    _killed_half_way(settings, lay, "quokka marmalade")
    check_workspace(settings, fix=True)
    assert all((lay.root / t).exists() for t in _links(lay.root))
    assert not (lay.state_dir / "forget_plan.json").exists() and not list(lay.root.rglob(".*.tmp"))
    assert check_workspace(settings).findings == []


@pytest.mark.parametrize(("text", "phrase", "kept", "gone"), [
    ("I saw Dr. Patel today! Then lunch.", "dr patel", "Then lunch.", ["I saw Dr. Patel today!"]),
    ("我住在北京。我的医生是王医生。周末去爬山。", "王医生", "我住在北京。周末去爬山。", ["我的医生是王医生。"]),
    ("Version 3.5 is out. Call 555-1234 now.", "555 1234", "Version 3.5 is out.", ["Call 555-1234 now."]),
    # found only across a split: both parts go, the rest stays
    ("We met at St. Ives. Patel came too. Ana lives in Porto.", "ives patel", "Ana lives in Porto.",
     ["We met at St. Ives.", "Patel came too."]),
])
def test_a_cut_takes_the_sentences_that_state_the_text_and_nothing_else(text, phrase, kept, gone):
    from memflow.tasks.forget.matching import carries
    from memflow.tasks.ground.sentences import cut

    assert cut(text, lambda s: carries(s, phrase)) == (kept, gone)
