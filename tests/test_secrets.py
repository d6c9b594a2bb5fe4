"""Secrets stay out: generated secrets of every shape are masked before capture writes
anything (session log, daily note, digest, index), and generated near-misses (order numbers,
commit hashes, UUIDs, versions, dates, phone numbers, identifiers, sentences about a password
without one) stay as they are. Sentences are built from pseudo-word vocabularies per seed, so a
rule that works because a list covers the test's words fails on another seed."""

from __future__ import annotations

import base64
import json
import os
import random
import string
import uuid

import pytest
from helpers import run_cli

from memflow.tasks.capture.secrets import MARK, mask_secrets

# MEMFLOW_SEEDS=1,2,3 runs other seeds
SEEDS = [int(x) for x in os.environ.get("MEMFLOW_SEEDS", "7,19,43,71,97").split(",")]
_ONSETS = "b c d f g h j k l m n p r s t v z br dr gr kl pl st tr sk".split()
_VOWELS = "a e i o u ai ou".split()
CASES = 60


def vocabulary(rng: random.Random, n: int) -> list[str]:
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 3))))
    return sorted(words)


@pytest.fixture(params=SEEDS)
def gen(request):
    rng = random.Random(request.param)
    words = vocabulary(rng, 600)
    return rng, words


def rand(rng, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


B62 = string.ascii_letters + string.digits

NOUNS = ["password", "passphrase", "passcode", "PIN", "PIN code", "pin number", "door code",
         "alarm code", "gate code", "security code", "wifi password", "WiFi key", "network key",
         "API key", "access token", "client secret", "safe combination", "recovery code"]
SEPARATORS = [" is ", " was ", " is now ", ": ", " = ", " was changed to ", " is still ",
              " has been set to ", " is actually "]


def prose_value(rng, words) -> tuple[str, list[str]]:
    """(value as written, the parts that must not survive)."""
    kind = rng.randrange(5)
    if kind == 0:
        v = rand(rng, string.digits, rng.randint(4, 8))
    elif kind == 1:
        v = rng.choice(words) + rand(rng, string.digits, rng.randint(1, 4))
    elif kind == 2:
        v = rand(rng, B62 + "!@#$%&*", rng.randint(8, 16))
        v = v[0] + "x" + v[1:] if not any(c.isalnum() for c in v) else v
    elif kind == 3:
        phrase = rng.sample(words, rng.randint(3, 4))
        return f'"{" ".join(phrase)}"', [" ".join(phrase[1:])]
    else:
        v = rng.choice(words).capitalize() + rand(rng, string.digits, 2) + rng.choice("!?#")
    return v, [v]


def test_passwords_and_pins_stated_in_prose_are_masked(gen):
    rng, words = gen
    for _ in range(CASES):
        owner = rng.choice(["my", "our", "the", f"{rng.choice(words).capitalize()}'s"])
        qualifier = rng.choice(["", rng.choice(words) + " "])
        bridge = rng.choice(["", f" for the {rng.choice(words)}", f" to my {rng.choice(words)} {rng.choice(words)}",
                             f" of the {rng.choice(words)}"])
        value, parts = prose_value(rng, words)
        after = rng.choice(words)
        tail = rng.choice([".", f", so you can {after}.", f" and the {after} is upstairs.", f"; {after} knows."])
        lead = rng.choice(["", f"{rng.choice(words).capitalize()} said that ", "Remember: "])
        text = f"{lead}{owner} {qualifier}{rng.choice(NOUNS)}{bridge}{rng.choice(SEPARATORS)}{value}{tail}"
        masked, count = mask_secrets(text)
        assert count >= 1 and MARK in masked, text
        for part in parts:
            assert part not in masked, (text, masked)
        assert after in masked or tail == ".", (text, masked)  # the words after the value stay


def test_value_before_the_noun_and_chinese_are_masked(gen):
    rng, words = gen
    for _ in range(CASES // 3):
        v = rand(rng, string.digits, rng.randint(4, 6))
        assert v not in mask_secrets(f"Use {rng.choice(['PIN', 'passcode', 'door code'])} {v} for the {rng.choice(words)}.")[0]
        v = rand(rng, string.ascii_lowercase + string.digits, rng.randint(6, 12))
        assert v not in mask_secrets(f"{rng.choice(['WiFi', '门禁', '银行卡'])}密码{rng.choice(['是', '为', '：', ''])}{v}，别告诉别人")[0]


def key_shapes(rng, words) -> list[str]:
    body = base64.b64encode(rng.randbytes(rng.randint(300, 600))).decode()
    pem = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", ""])
    return [
        "AKIA" + rand(rng, string.ascii_uppercase + string.digits, 16),
        "ghp_" + rand(rng, B62, 36),
        "glpat-" + rand(rng, B62, 20),
        f"xoxb-{rand(rng, string.digits, 11)}-{rand(rng, string.digits, 12)}-{rand(rng, string.ascii_lowercase + string.digits, 24)}",
        "sk_live_" + rand(rng, B62, 24),
        "sk-" + rand(rng, B62, rng.randint(32, 48)),
        rand(rng, B62, rng.randint(24, 48)),
        "eyJ" + rand(rng, B62, 30) + "." + rand(rng, B62, 40) + "." + rand(rng, B62 + "-_", 43),
        f"-----BEGIN {kind}PRIVATE KEY-----\n{pem}\n-----END {kind}PRIVATE KEY-----",
    ]


def test_keys_tokens_and_private_keys_are_masked(gen):
    rng, words = gen
    for _ in range(CASES // 6):
        for secret in key_shapes(rng, words):
            text = f"{rng.choice(words).capitalize()} {rng.choice(words)} {secret} {rng.choice(words)}"
            masked, count = mask_secrets(text)
            assert count >= 1, text
            assert secret not in masked and secret[-12:] not in masked, (text, masked)


def near_misses(rng, words) -> list[str]:
    w = lambda: rng.choice(words)  # noqa: E731
    camel = "".join([w()] + [w().capitalize() for _ in range(rng.randint(2, 4))]) + str(rng.randint(1, 9))
    return [
        rng.randbytes(20).hex(),                                   # a commit hash
        rng.randbytes(20).hex()[:7],                               # a short one
        rng.randbytes(32).hex(),                                   # a sha256
        str(uuid.UUID(int=rng.getrandbits(128), version=4)),       # a UUID
        f"ORD-{rng.randint(2020, 2030)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}-{rng.randint(1000, 999999)}",
        f"#{rng.randint(10000, 99999999)}",
        f"v{rng.randint(0, 20)}.{rng.randint(0, 40)}.{rng.randint(0, 99)}-rc{rng.randint(1, 9)}",
        f"{rng.randint(2000, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}",
        f"+{rng.randint(1, 99)} {rng.randint(100, 999)}-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
        camel,
        "_".join(rng.sample(words, 3)) + f"_{rng.randint(1, 99)}",
        f"src/{w()}/{w().capitalize()}{w().capitalize()}{rng.randint(1, 9)}.py",
        f"https://{w()}.example.com/{w()}/{w()}?page={rng.randint(1, 99)}",
        rand(rng, string.ascii_uppercase + string.digits, rng.randint(12, 22)),  # a tracking number
    ]


def test_near_misses_stay(gen):
    rng, words = gen
    for _ in range(CASES // 6):
        for item in near_misses(rng, words):
            text = f"The {rng.choice(words)} {rng.choice(['is', 'was', 'shows', 'has'])} {item} {rng.choice(words)}."
            assert mask_secrets(text) == (text, 0), text
            order = f"My order number is {item}." if not item.startswith("http") else None
            if order:
                assert mask_secrets(order) == (order, 0)


def test_sentences_about_a_secret_without_one_stay(gen):
    rng, words = gen
    for _ in range(CASES):
        noun = rng.choice(NOUNS)
        w = rng.choice(words)
        text = rng.choice([
            f"I forgot my {noun} for the {w}.", f"Please reset the {noun} of {w.capitalize()}.",
            f"The {noun} expired {rng.choice(['yesterday', 'last week', 'on Monday'])}.",
            f"{w.capitalize()}'s {noun} was changed yesterday.", f"The {noun} is the same as before.",
            f"My {noun} is too short for the {w}.", f"Where do I keep the {noun}?",
            f"The zip code is {rng.randint(10000, 99999)} and the {w} is open.",
            f"The tracking code is {rand(rng, string.ascii_uppercase + string.digits, 14)}.",
        ])
        assert mask_secrets(text) == (text, 0), text


def test_settings_widen_or_turn_off():
    text = "the locker is BX-4471 and the PIN is 9090"
    assert mask_secrets(text, extra=[r"locker is (\S+)"])[0] == f"the locker is {MARK} and the PIN is {MARK}"
    assert mask_secrets(text, enabled=False) == (text, 0)


def test_capture_writes_no_secret_anywhere(tmp_path):
    """The CLI as a user runs it: capture, index, dream, search; the values are nowhere on disk
    (session log, daily note, digest, index), the log and note say a secret was given."""
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    pin, wifi = "73914", "Qz7!mango-Lake"
    key = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    messages = [{"role": "user", "content": f"Our wifi password is {wifi} and my bank PIN is {pin}. "
                 "I live in Porto with my dog Brisa."},
                {"role": "assistant", "content": "Noted, I will remember where you live."},
                {"role": "user", "content": f"My GitHub token is {key} for the deploy job."}]
    conv = tmp_path / "c.json"
    conv.write_text(json.dumps(messages))
    done = run_cli("-w", str(ws), "capture", str(conv), "--session", "s1")
    assert done.returncode == 0, done.stderr
    assert "3 secret(s) masked" in done.stdout
    for args in (["index"], ["dream"], ["index"]):
        assert run_cli("-w", str(ws), *args).returncode == 0
    for path in ws.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in (pin, wifi, key, key[4:20]):
                assert secret.encode() not in data, path
    log = (ws / "session/dialog/s1.jsonl").read_text()
    assert log.count(MARK) == 3
    note = next((ws / "daily").rglob("*.md")).read_text()
    assert f"password is {MARK}" in note and "Porto" in note
    found = run_cli("-w", str(ws), "search", "wifi password")
    assert found.returncode == 0 and MARK in found.stdout and wifi not in found.stdout


def test_turned_off_in_memflow_toml_keeps_the_text(tmp_path):
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    (ws / "memflow.toml").write_text("mask_secrets = false\n")
    conv = tmp_path / "c.json"
    conv.write_text(json.dumps([{"role": "user", "content": "The door code is 4455 for the shed."}]))
    assert run_cli("-w", str(ws), "capture", str(conv), "--session", "s2").returncode == 0
    assert "4455" in (ws / "session/dialog/s2.jsonl").read_text()
