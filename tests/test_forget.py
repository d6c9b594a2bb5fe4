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
