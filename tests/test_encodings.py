"""Text resources saved in other encodings are detected, read correctly and the encoding is
recorded on the card (the CLI as a user runs it); generated texts over many seeds."""

from __future__ import annotations

import json
import random

import pytest
from helpers import run_cli

from memflow.tasks.ground.encoding import NotText, decoded

SAMPLES = {
    "latin-1": "Café São João abre às nove; a reunião é na praça.",
    "cp1252": "“Smart quotes” cost 5€ — a naïve café owner’s œuvre.",
    "utf-16": "Ünïcödé notes: 東京 and Zürich, saved by Notepad.",
    "shift_jis": "東京都の会議は明日の午前十時に始まります。",
}


def test_resources_in_other_encodings_are_read_and_the_encoding_is_on_the_card(tmp_path):
    ws = tmp_path / "ws"
    assert run_cli("-w", str(ws), "init").returncode == 0
    for n, (encoding, text) in enumerate(SAMPLES.items()):
        (ws / "resource" / f"note{n}.txt").write_bytes(text.encode(encoding))
    result = run_cli("-w", str(ws), "resources", "--json")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["created"]) == len(SAMPLES)
    for n, (encoding, text) in enumerate(SAMPLES.items()):
        card = next((ws / "daily").rglob(f"resource-note{n}-txt.md")).read_text(encoding="utf-8")
        assert text in card and "\ufffd" not in card
        assert "encoding: " in card
    assert run_cli("-w", str(ws), "index").returncode == 0
    hits = json.loads(run_cli("-w", str(ws), "search", "São João", "--layer", "resource", "--json").stdout)
    assert hits["results"][0]["path"] == "resource/note0.txt" and "São João" in hits["results"][0]["text"]


@pytest.mark.parametrize("seed", range(40))
def test_generated_texts_decode_as_they_were_written(seed):
    rng = random.Random(seed)
    kana = [chr(c) for c in range(0x3042, 0x3093)]
    words = [rng.choice(["Café", "São", "João", "crème", "Größe", "über", "niño", "façade"])
             if rng.random() < 0.15 else "".join(rng.choice("abcdefghilmnoprstuv") for _ in range(rng.randint(2, 8)))
             for _ in range(rng.randint(20, 200))]
    western = " ".join(words) + "."
    japanese = "".join(rng.choice(kana) for _ in range(rng.randint(30, 300))) + "。"
    for encoding, text in (("cp1252", western), ("utf-16", western), ("utf-8", western), ("shift_jis", japanese)):
        assert decoded(text.encode(encoding))[0] == text, encoding


def test_binary_bytes_are_not_text():
    for seed in range(10):
        rng = random.Random(seed)
        with pytest.raises(NotText):
            decoded(bytes(rng.randrange(1, 256) for _ in range(rng.randrange(2000, 6000))))
