"""Forget means gone (issue 26, item 1), black-box: a workspace is built through the real CLI
(capture of conversations that state a distinctive phrase, one of them in the message a daily
note is titled from; a note the user wrote under digest/; a resource with the phrase in its text
and its file name; resources, index with vectors from the loopback model, dream, index, search),
then each kind of `memflow forget` the CLI offers (`--match`, `--session`, `--note`) runs on a
copy, and every byte of the workspace (LanceDB data files, old versions and transaction files,
the keyword snapshot, the embedding cache, state) is searched for the phrase in any case, joined
by `-`, `_` or nothing, and for each of its words as the keyword vocabulary holds them (lowercase
and stemmed): 0 survivors. A later capture of a message with the phrase is stopped and says so.

Default: one trial per kind; `MEMFLOW_RELIABILITY=full`: `FORGET_TRIALS` phrases per kind.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ENV, FULL, copy_workspace, start, timed

from memflow.tasks.ground.tokenize import tokenize

pytestmark = pytest.mark.slow  # builds a workspace through the CLI as subprocesses

FORGET_TRIALS = int(os.environ.get("MEMFLOW_FORGET_TRIALS", "10" if FULL else "1"))
FORGET_KILLS = 20 if FULL else 2
SYLLABLES = ["zan", "quo", "mar", "vel", "dri", "pex", "lun", "tor", "bix", "fen", "yor", "kam"]


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3))


def run(ws: Path, *args: str, env: dict, input: str | None = None) -> subprocess.CompletedProcess:
    res = subprocess.run([sys.executable, "-m", "memflow.cli", "-w", str(ws), *args], input=input,
                         capture_output=True, text=True, timeout=600, env=env)
    assert "Traceback" not in res.stderr, res.stderr
    return res


def ok(ws: Path, *args: str, env: dict) -> str:
    res = run(ws, *args, env=env)
    assert res.returncode == 0, f"memflow {' '.join(args)}: {res.stdout}\n{res.stderr}"
    return res.stdout


def forms(phrase: str) -> list[str]:
    """Every form the phrase or one of its words could survive in, lowercase."""
    words = phrase.lower().split()
    out = {phrase.lower(), "-".join(words), "_".join(words), "".join(words), *words}
    out |= {t for t in tokenize(phrase) if len(t) >= 4}  # the vocabulary's stemmed tokens
    return sorted(out)


def survivors(ws: Path, phrase: str) -> list[str]:
    """`path: form` for each file (name or bytes) that still holds a form of the phrase."""
    found = []
    for path in sorted(ws.rglob("*")):
        rel = path.relative_to(ws).as_posix().lower()
        data = path.read_bytes().lower() if path.is_file() and not path.is_symlink() else b""
        found += [f"{rel}: {f}" for f in forms(phrase) if f in rel or f.encode() in data]
    return found


def tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def say(sid: str, day: str, *texts: str) -> str:
    return json.dumps([{"id": f"{sid}-{n}", "role": "user" if n % 3 != 1 else "assistant",
                        "timestamp": f"{day}T09:{n:02d}:00Z", "content": t} for n, t in enumerate(texts)])


def build(root: Path, rng: random.Random, env: dict) -> tuple[Path, dict[str, str]]:
    """A workspace stating three phrases: one everywhere (for --match), one only in the session
    `vault` (--session), one only in the daily note of session `garden` (--note)."""
    phrases = {kind: f"{word(rng).title()} {word(rng).title()}" for kind in ("match", "session", "note")}
    m, s, n = phrases["match"], phrases["session"], phrases["note"]
    ws = root / "ws"
    ok(ws, "init", env=env)
    (ws / "memflow.toml").write_text(f'[memflow]\nembedding_model = "openai/test-embed"\n'
                                     f'model_api_base = "{env["FAKE_API_BASE"]}"\nmodel_api_key = "x"\n')
    talks = {
        "daily": say("daily", "2026-07-01", f"My {m} recipe needs {m} jars from Perth.",
                     f"Noted: you make {m}.", "I live in Lisbon near the river and I work as a nurse.",
                     "We decided to paint the kitchen blue next month."),
        "later": say("later", "2026-07-03", "The boiler is serviced every March by Anton.",
                     "Noted.", f"My sister also loves {m.lower()} on toast."),
        "vault": say("vault", "2026-07-04", f"My safe word is {s}, keep it secret.",
                     f"Understood, {s} it is.", f"Tell nobody about {s} please."),
        "garden": say("garden", "2026-07-05", f"The garden gnome is called {n} by the children.",
                      "Nice.", f"We repainted {n} green this spring."),
    }
    for sid, talk in talks.items():
        (root / f"{sid}.json").write_text(talk)
        ok(ws, "capture", "--session", sid, str(root / f"{sid}.json"), env=env)
    (ws / "digest/personal/pantry.md").write_text(
        f"---\nname: Pantry\n---\n# Pantry\n\nThe {m} jars sit on the top shelf.\n"
        "Rice and beans are in the bin.\n")
    slug = "-".join(m.lower().split())
    (ws / f"resource/{slug}-order.txt").write_text(f"order list\n2 x {m}\nbread\n")
    ok(ws, "resources", env=env)
    ok(ws, "index", env=env)
    ok(ws, "dream", "--date", "2026-07-05", env=env)  # consumes every note up to that day
    ok(ws, "index", env=env)
    return ws, phrases


@pytest.fixture(scope="module")
def built(tmp_path_factory, fake_model_server) -> list[tuple[Path, dict[str, str], dict]]:
    env = {**ENV, "FAKE_API_BASE": fake_model_server.api_base,
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    out = []
    for trial in range(FORGET_TRIALS):
        root = tmp_path_factory.mktemp(f"forget-{trial}")
        ws, phrases = build(root, random.Random(trial), env)
        for kind, phrase in phrases.items():  # the grep sees every form before the forget
            assert survivors(ws, phrase), f"{kind}: {phrase} not in the workspace before forgetting"
        assert any(".lance" in s for s in survivors(ws, phrases["match"]))
        assert "no results" not in ok(ws, "search", phrases["match"], env=env)
        out.append((ws, phrases, env))
    return out


def note_of(ws: Path, phrase: str) -> str:
    return next(p.relative_to(ws).as_posix() for p in sorted((ws / "daily").rglob("*.md"))
                if phrase.lower() in p.read_text().lower() and "session_id: garden" in p.read_text())


@pytest.mark.parametrize("kind", ["match", "session", "note"])
def test_forget_leaves_no_byte_of_the_text_anywhere(built, kind, tmp_path):
    total = 0
    for trial, (base, phrases, env) in enumerate(built):
        ws = copy_workspace(base, tmp_path / f"{kind}-{trial}")
        phrase = phrases[kind]
        what = {"match": lambda: ["--match", phrase.lower()], "session": lambda: ["--session", "vault"],
                "note": lambda: ["--note", note_of(ws, phrase)]}[kind]()
        before = tree(ws)
        dry = ok(ws, "forget", *what, "--dry-run", env=env)
        assert tree(ws) == before, "a dry run changed the workspace"
        done = ok(ws, "forget", *what, env=env)
        # the dry run lists what the run does, and under each file the exact texts that would go
        assert [line.removeprefix("would ") for line in dry.splitlines() if not line.startswith(" ")] == \
            done.splitlines()
        assert phrase.lower() in "\n".join(line for line in dry.splitlines() if line.startswith(" ")).lower()
        if kind == "match":  # the user's note, the resource and its renamed file are listed
            assert "edit digest/personal/pantry.md: remove 1 line(s)" in dry
            slug = "-".join(phrase.lower().split())
            assert f"rename resource/{slug}-order.txt -> resource/order.txt" in dry
        left = survivors(ws, phrase)
        assert left == [], f"{kind} {phrase}: {left}"
        for other_kind, other in phrases.items():  # the rest stays
            if other_kind != kind:
                assert survivors(ws, other), f"forgetting {kind} removed {other_kind} too"
        found = ok(ws, "search", f"{phrase} Lisbon nurse", env=env)
        assert phrase.lower() not in found.lower() and "Lisbon" in found
        if kind == "match":
            assert "Rice and beans" in (ws / "digest/personal/pantry.md").read_text()
            assert "bread" in (ws / "resource/order.txt").read_text()
        total += len(left)
    print(f"forget --{kind}: {len(built)} trial(s), {total} survivor(s)")


def test_a_later_message_the_tombstone_stops_is_counted_with_its_reason(built, tmp_path):
    base, phrases, env = built[0]
    ws = copy_workspace(base, tmp_path / "ws")
    phrase = phrases["match"]
    ok(ws, "forget", "--match", phrase, env=env)
    talk = tmp_path / "again.json"
    talk.write_text(say("again", "2026-07-09", f"Did I tell you about {phrase.upper()}?",
                        "No.", "I bought a new bicycle today."))
    out = ok(ws, "capture", "--session", "again", str(talk), env=env)
    assert "(+2 message(s), 1 stopped by forget tombstones)" in out, out
    data = json.loads(ok(ws, "capture", "--session", "again2", str(talk), "--json", env=env))
    assert (data["new_messages"], data["stopped"]) == (2, 1)
    assert survivors(ws, phrase) == []  # the stopped message was never written
    resent = tmp_path / "resent.json"  # the forgotten messages sent again, same ids
    resent.write_text((base.parent / "daily.json").read_text())
    out = ok(ws, "capture", "--session", "daily", str(resent), env=env)
    assert "(+0 message(s), 2 stopped by forget tombstones)" in out, out
    assert survivors(ws, phrase) == []


@pytest.mark.parametrize("kind", ["match", "session"])
def test_a_killed_forget_run_again_leaves_no_byte(built, kind, tmp_path):
    """SIGKILL just before or after a random atomic write of the forget, then the same forget
    again: nothing of the text is left (the index rebuild the killed run owed included)."""
    base, phrases, env = built[0]
    what = ["--match", phrases["match"]] if kind == "match" else ["--session", "vault"]
    _, writes = timed(copy_workspace(base, tmp_path / "timed"), "forget", *what)
    rng = random.Random(26)
    left = []
    for n, kill_at in enumerate(sorted(rng.sample(range(2 * writes), min(FORGET_KILLS, 2 * writes)))):
        ws = copy_workspace(base, tmp_path / f"kill-{n}")
        proc = start(ws, "forget", *what, kill_at=kill_at)
        proc.communicate(timeout=600)
        assert proc.returncode == -9, f"kill at {kill_at} of {writes} writes did not land"
        ok(ws, "forget", *what, env=env)
        left += survivors(ws, phrases[kind])
        if kind == "session":  # its messages sent again are stopped (tombstones written first)
            out = ok(ws, "capture", "--session", "vault", str(base.parent / "vault.json"), env=env)
            assert "(+0 message(s), 3 stopped by forget tombstones)" in out, out
    assert left == []
    print(f"forget --{kind} killed at {min(FORGET_KILLS, 2 * writes)} of {2 * writes} points: 0 survivors")
