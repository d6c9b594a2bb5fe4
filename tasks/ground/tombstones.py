"""Tombstones: what `memflow forget` removed, kept as salted hashes, so a later capture does not
bring it back and the workspace does not keep the text it was asked to forget.

`metadata/state/tombstones.json` (format 2) holds only hashes, each a keyed BLAKE2b (128 bits)
of a tagged string under the workspace's salt, `metadata/state/forget_salt` (32 random bytes as
hex, written by the first forget; it cannot be derived, so it is state and goes into backups):

- `messages`: `key:` + the session log's de-duplication key of a forgotten message (`id:...`,
  or `sha:...` of role, timestamp and content): the same message arriving again.
- `said`: `said:` + the normalised text of a forgotten message of at least `SAID_MIN` characters:
  the same words arriving again under another id or in another session. Shorter texts ("ok",
  "thanks!") are not kept: they would stop every later "ok".
- `phrases`: for `forget --match X`, `phrase:` + normalise(X), grouped by its length n. A whole-
  message hash cannot find X inside a longer message, so a later text T is tested window by
  window: every n-character slice of normalise(T) is hashed and looked up in the group of
  length n. That is exactly the test `forget --match` applies to files (`normalise(X) in
  normalise(line)`), so a tombstone stops precisely what the forget removed, a part of a word
  included. Cost: one keyed hash per character of T per distinct phrase length (~1 µs each).
- `notes`: `note:` + `session|date` of a forgotten daily note (capture does not recreate it).

A later message that holds a forgotten phrase, or a forgotten message's or sentence's words as
one of its sentences, is logged without those sentences (`cut`); only the same message (its
key or all its words) or one with nothing else left is kept out whole.

`normalise`: Unicode NFKC, casefold, every run of characters that are not letters or digits
becomes one space, trimmed; so `4471-ZULU`, `4471 zulu` and `4471_Zulu.` are the same text.

Without the salt the hashes match nothing: losing `forget_salt` (and only it) lets forgotten
messages be captured again. A file of the old format (plain texts) is converted on load.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata
from dataclasses import dataclass, field

from memflow.tasks.ground import sentences
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores.files import atomic_write_json, atomic_write_text, read_json, read_text

FILE, SALT_FILE = "tombstones.json", "forget_salt"
SAID_MIN = 16
_NON_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _salt(lay: Layout, create: bool) -> bytes | None:
    path = lay.state_dir / SALT_FILE
    if path.exists():
        value = read_text(path).strip()
        try:
            salt = bytes.fromhex(value)
        except ValueError:
            salt = b""
        if len(salt) != 32:
            raise ValueError(f"{path} is not 64 hex digits: restore it from a backup, or delete it "
                             f"and {FILE} (forgotten messages could then be captured again)")
        return salt
    if not create:
        return None
    salt = secrets.token_bytes(32)
    atomic_write_text(path, salt.hex() + "\n")
    return salt


@dataclass
class Tombstones:
    salt: bytes | None
    messages: set[str] = field(default_factory=set)
    said: set[str] = field(default_factory=set)
    phrases: dict[int, set[str]] = field(default_factory=dict)
    notes: set[str] = field(default_factory=set)

    def hash(self, tag: str, value: str) -> str:
        assert self.salt is not None
        return hashlib.blake2b(f"{tag}:{value}".encode(), key=self.salt, digest_size=16).hexdigest()

    def carries_phrase(self, text: str) -> bool:
        """Some forgotten `--match` phrase occurs in `text` (normalised)."""
        if not self.phrases or self.salt is None:
            return False
        norm = normalise(text)
        keyed = hashlib.blake2b(b"phrase:", key=self.salt, digest_size=16)  # copied per window
        for n, wanted in self.phrases.items():
            digests = {bytes.fromhex(h) for h in wanted}
            for i in range(len(norm) - n + 1):
                window = keyed.copy()
                window.update(norm[i:i + n].encode())
                if window.digest() in digests:
                    return True
        return False

    def stops(self, key: str, text: str) -> bool:
        """A message (its log key and text) was forgotten, or states a forgotten phrase."""
        if self.salt is None:
            return False
        norm = normalise(text)
        return (self.hash("key", key) in self.messages
                or (len(norm) >= SAID_MIN and self.hash("said", norm) in self.said)
                or self.carries_phrase(text))

    def holds(self, key: str, text: str) -> bool:
        """The message itself was forgotten: its log key, or all its words."""
        norm = normalise(text)
        return self.salt is not None and (self.hash("key", key) in self.messages
                                          or (len(norm) >= SAID_MIN and self.hash("said", norm) in self.said))

    def cut(self, text: str) -> tuple[str, list[str]]:
        """(`text` without its sentences that state a forgotten phrase or are a forgotten
        sentence, the sentences removed): a later message keeps what else it says."""
        if self.salt is None or not (self.phrases or self.said):
            return text, []
        phrase = self.carries_phrase(text)

        def hit(sentence: str) -> bool:
            norm = normalise(sentence)
            return (phrase and self.carries_phrase(sentence)) or (
                len(norm) >= SAID_MIN and self.hash("said", norm) in self.said)

        return sentences.cut(text, hit)

    def stops_note(self, session_id: str, day: str) -> bool:
        return self.salt is not None and self.hash("note", f"{session_id}|{day}") in self.notes

    def to_json(self) -> dict:
        return {"format": 2, "messages": sorted(self.messages), "said": sorted(self.said),
                "phrases": {str(n): sorted(h) for n, h in sorted(self.phrases.items())},
                "notes": sorted(self.notes)}


def _read(lay: Layout) -> dict:
    path = lay.state_dir / FILE
    try:
        data = read_json(path, {}) or {}
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"{path} does not parse ({exc}): restore it from a backup") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a JSON object: restore it from a backup")
    return data


def load(lay: Layout) -> Tombstones:
    """The workspace's tombstones; an old-format file (plain texts) is converted and rewritten
    (the caller holds the workspace lock)."""
    data = _read(lay)
    if data and data.get("format") != 2:
        tomb = Tombstones(_salt(lay, create=True))
        _put(tomb, data.get("messages", []), [], data.get("texts", []),
             [n.split("|", 1) for n in data.get("notes", []) if "|" in n])
        atomic_write_json(lay.state_dir / FILE, tomb.to_json())
        return tomb
    return Tombstones(_salt(lay, create=False), set(data.get("messages", [])), set(data.get("said", [])),
                      {int(n): set(h) for n, h in (data.get("phrases") or {}).items()},
                      set(data.get("notes", [])))


def _put(tomb: Tombstones, keys, said, phrases, notes) -> None:
    tomb.messages |= {tomb.hash("key", k) for k in keys}
    tomb.said |= {tomb.hash("said", n) for n in map(normalise, said) if len(n) >= SAID_MIN}
    for phrase in filter(None, map(normalise, phrases)):
        tomb.phrases.setdefault(len(phrase), set()).add(tomb.hash("phrase", phrase))
    tomb.notes |= {tomb.hash("note", f"{session}|{day}") for session, day in notes}


def add(lay: Layout, keys: list[str] = (), said: list[str] = (), phrases: list[str] = (),
        notes: list[tuple[str, str]] = ()) -> None:
    """Record forgotten message keys, message texts, `--match` phrases and (session, date)
    notes: only their salted hashes are written."""
    tomb = load(lay)
    if tomb.salt is None:
        tomb.salt = _salt(lay, create=True)
    _put(tomb, keys, said, phrases, notes)
    atomic_write_json(lay.state_dir / FILE, tomb.to_json())
