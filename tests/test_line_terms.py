"""Per-line search terms made at index time (issue #27 item 4): every row of the search snapshot
stores each line's terms, and they are exactly what packing would compute for that line, for
notes, digest nodes, session transcripts (long messages in pieces) and resources; a packed
context built from the stored terms equals one built by tokenizing the lines again, on
generated workspaces and queries (seeds: MEMFLOW_SEEDS)."""

from __future__ import annotations

import json
import os
import random
import string

import pytest

from memflow import api
from memflow.tasks.index import indexing, run_index
from memflow.tasks.recall import packing
from memflow.tasks.stores import keyword

SEEDS = [int(s) for s in os.environ.get("MEMFLOW_SEEDS", "5,31").split(",")]
HAN = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严"


def word(rng: random.Random) -> str:
    """A pseudo-word; now and then an identifier (camelCase, snake_case, letters with digits)."""
    base = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
    shape = rng.random()
    if shape < 0.08:
        return base + base[:3].capitalize() + str(rng.randint(1, 99))
    if shape < 0.14:
        return f"{base}_{rng.choice(string.ascii_lowercase) * 2}"
    return base


def sentence(rng: random.Random, vocab: list[str]) -> str:
    words = [rng.choice(vocab) for _ in range(rng.randint(3, 14))]
    if rng.random() < 0.2:
        words.insert(rng.randint(0, len(words)), "".join(rng.choice(HAN) for _ in range(rng.randint(2, 6))))
    if rng.random() < 0.15:
        words.append(f"[[digest/wiki/{rng.choice(vocab)}-{rng.choice(vocab)}.md|{rng.choice(vocab)}]]")
    if rng.random() < 0.1:
        words.append(f"[[digest/personal/{rng.choice(vocab)}_{rng.choice(vocab)}.md]]")
    return " ".join(words).capitalize() + rng.choice([".", "!", "?", ":", ""])


def write_workspace(lay, rng: random.Random, vocab: list[str], names: list[str]) -> None:
    for n in range(4):  # session logs: short turns and long assistant messages (pieces)
        lines = []
        for turn in range(rng.randint(3, 9)):
            role = "user" if turn % 2 == 0 else "assistant"
            long = role == "assistant" and rng.random() < 0.5
            parts = [sentence(rng, vocab) for _ in range(rng.randint(12, 30) if long else rng.randint(1, 2))]
            if long and rng.random() < 0.6:
                parts.insert(3, "```python\n" + "\n".join(f"{rng.choice(vocab)} = {rng.randint(0, 999)}"
                                                           for _ in range(8)) + "\n```")
            lines.append(json.dumps({"role": role, "timestamp": f"2026-03-0{1 + n}T09:{turn:02d}:00Z",
                                     "content": "\n\n".join(parts)}))
        log = lay.root / f"session/dialog/s{n}.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for n in range(8):  # daily notes: speakers, provenance links, headings
        body = [f"---\nname: {rng.choice(vocab)} {rng.choice(vocab)}\ndescription: {json.dumps(sentence(rng, vocab))}\n---",
                f"# {rng.choice(vocab).capitalize()}"]
        for _ in range(rng.randint(1, 3)):
            body.append(f"## Said by {rng.choice(names)}" if rng.random() < 0.3 else f"## {rng.choice(vocab)}")
            for _ in range(rng.randint(2, 8)):
                who = f"{rng.choice(names)}: " if rng.random() < 0.5 else ""
                body.append(f"- {who}{sentence(rng, vocab)} [[session/dialog/s{rng.randint(0, 3)}.jsonl"
                            f"#L{rng.randint(1, 5)}]]")
        if rng.random() < 0.3:  # one line longer than a chunk: indexed in parts
            body.append("- " + " ".join(sentence(rng, vocab) for _ in range(80)))
        path = lay.root / f"daily/2026-03-0{1 + n % 4}/note-{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(body) + "\n", encoding="utf-8")
    for n in range(3):  # digest nodes: dated facts with their history
        facts = []
        for k in range(rng.randint(2, 6)):
            facts.append(f"- 2026-03-0{1 + k % 4}: {sentence(rng, vocab)} [[daily/2026-03-01/note-0.md#L{3 + k}]]")
            if rng.random() < 0.4:
                facts.append(f"  - until 2026-03-0{1 + k % 4}: {sentence(rng, vocab)} "
                             f"[[daily/2026-03-02/note-1.md#L{4 + k}]]")
        path = lay.root / f"digest/wiki/{rng.choice(vocab)}-{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rng.choice(vocab)}\n\n" + "\n".join(facts) + "\n", encoding="utf-8")
    resource = lay.root / "resource/docs/manual.md"
    resource.parent.mkdir(parents=True, exist_ok=True)
    resource.write_text("# Manual\n\n" + "\n".join(f"- {rng.choice(names)}: {sentence(rng, vocab)}"
                                                   for _ in range(30)) + "\n", encoding="utf-8")
    (lay.root / "resource/docs/notes.txt").write_text(
        "\n".join(sentence(rng, vocab) for _ in range(60)) + "\n", encoding="utf-8")


@pytest.mark.parametrize("seed", SEEDS)
def test_stored_line_terms_are_what_packing_computes(settings, lay, seed):
    rng = random.Random(seed)
    vocab = sorted({word(rng) for _ in range(1500)})
    names = sorted({w.capitalize() for w in vocab if w.isalpha()})[:300]
    write_workspace(lay, rng, vocab, names)
    run_index(settings)
    index = keyword.current(indexing.keyword_dir(lay, settings))
    rows = index.docs.to_pylist()
    assert {r["layer"] for r in rows} >= {"daily", "digest", "session", "resource"}
    assert any(" part " in r["text"] for r in rows if r["layer"] == "session")  # pieces were made
    checked = 0
    for row in rows:
        lines, stored = row["text"].split("\n"), row["line_terms"].split("\n")
        assert len(lines) == len(stored), row["path"]
        transcript = row["path"].endswith(".jsonl")
        for line, terms in zip(lines, stored):
            if packing._content(line):
                assert set(terms.split()) == set(packing._terms(line, settings.keyword_tokenizer, transcript).split()), line
                checked += 1
    assert checked > 200

    queries = [" ".join(rng.sample(vocab, rng.randint(1, 3))) for _ in range(15)]
    said = [line for row in rows for line in row["text"].split("\n") if packing._content(line)]
    queries += [line[:60] for line in rng.sample(said, 10)]
    with_stored = []
    for query in queries:
        packing._LINES.clear()
        with_stored.append(api.search(query, settings, limit=5, budget_tokens=600).packed)
    tokenized = packing._indexed_lines
    packing._indexed_lines = lambda result: {}
    try:
        for query, packed in zip(queries, with_stored):
            packing._LINES.clear()
            assert api.search(query, settings, limit=5, budget_tokens=600).packed == packed, query
    finally:
        packing._indexed_lines = tokenized
        packing._LINES.clear()
    assert sum(map(len, with_stored)) > len(queries)  # most queries packed something


def test_line_text_equals_its_one_pattern_definition_on_random_lines():
    """`line_text` looks for trailing links only in a line ending with `]]` (speed); it must say
    what the single pattern it replaced said, for any mix of bullets, dates, speakers, links and
    stray brackets."""
    import re

    from memflow.tasks.ground.markdown import line_text

    frame = re.compile(r"^\s*(?:[-*+]\s+)?(?:(?:until )?\d{4}-\d{2}-\d{2}: )?|(\s*\[\[[^\]]+\]\])+\s*$")
    speaker = re.compile(r"^[A-Z][a-z]+(?: [A-Z][a-z]+)?: ")
    rng = random.Random(SEEDS[0])
    pieces = ["- ", "  - ", "* ", "until ", "2026-03-04: ", "Ana: ", "Mary Ann: ", "[[a.md#L3]]", "[[b|x]]",
              " ", "\t", "[", "]", "]]", "[[", "\n", "[[[c]]", "ok.", *(word(rng) for _ in range(20))]
    for _ in range(50_000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 9)))
        assert line_text(line) == " ".join(speaker.sub("", frame.sub("", line).strip()).split()), repr(line)


def test_a_lines_tail_link_is_what_a_pattern_search_finds_on_random_lines():
    from memflow.tasks.recall import answers, packing

    rng = random.Random(SEEDS[-1])
    pieces = ["- ", "[[a.md#L3]]", "[[b.jsonl#L2-L4,L9]]", "[[c|x]]", "[[[d.md#L1]]", "[", "]]", "#L5", " ",
              "\n", "[[e.md#L1", "\t", "\u00a0", "[[f.jsonl#L7|x]]", *(word(rng) for _ in range(10))]
    for _ in range(50_000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        want, got = packing._TAIL_LINK_RE.search(line), packing._tail_link(line)
        assert (want and (want.span(), want.groups())) == (got and (got.span(), got.groups())), repr(line)
        want, got = answers._TAIL_LINK_RE.search(line), answers._tail_link(line)  # spaces before it too
        assert (want and (want.span(), want.groups())) == (got and (got.span(), got.groups())), repr(line)


def test_a_text_resource_of_many_short_lines_is_tokenized_in_one_pass_not_per_line(monkeypatch):
    """Issue 57: a 6 MB text of 3 million short lines stalled the index (a Python call per
    line to split a speaker off and find its words). Same terms as line by line, no call per
    line: indexing costs the text's words, not its lines."""
    import random

    from memflow.schemas.settings import Settings
    from memflow.tasks.ground import speakers
    from memflow.tasks.index.rows import resource_rows

    rng = random.Random(57)
    text = "".join(rng.choice("bcdfghjkl") + "\n" for _ in range(20_000))
    calls = []
    real = speakers.split_line
    monkeypatch.setattr(speakers, "split_line", lambda *a, **k: calls.append(1) or real(*a, **k))
    _, chunks, _ = resource_rows(Settings(), "resource/values.txt", text.encode(), "p", "resource", None)
    assert calls == []
    assert sum(c["line_terms"].count("\n") + 1 for c in chunks) >= 20_000
    for chunk in chunks:
        assert chunk["line_terms"] == speakers.joined_words(speakers.text_line_words(chunk["text"]))
        assert sorted(chunk["terms"]) == sorted(speakers.tokenize(chunk["text"]) + (
            speakers.tokenize("values.txt") if chunk["name"] else []))


def test_line_terms_in_one_pass_are_the_terms_line_by_line():
    """`text_line_terms` (one scan) == `joined_words(text_line_words(...))` (a pass per line) on
    generated text: words, stopwords, identifiers, links, speaker lines, Han, blank lines."""
    import random

    from memflow.tasks.ground.speakers import joined_words, text_line_terms, text_line_words

    rng = random.Random(7)
    parts = list("abXY_-\n\n \t.,:[]#*é9") + ["the", "Running", "VMs", "handleWebSocket", "[[a/b-c.md]]",
                                             "[[x#L3]]", "- Ana: hi", "## Said by Bob", "中文", "snake_case"]
    for _ in range(2000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 40)))
        assert text_line_terms(text) == joined_words(text_line_words(text)), text


def test_a_note_lines_answer_terms_read_off_its_stored_terms_are_the_ones_tokenizing_gives():
    """`answers.said_terms` takes what a note line says off the terms the index stored for the
    whole line (without tokenizing it again); on random lines of bullets, dates, speakers
    (capitalised, lower-case, two words), names said to the listener, colons, links with and
    without labels, Han text and odd spacing, what it gives is what tokenizing the line's words
    gives, or None; and lines are read off."""
    from types import SimpleNamespace

    from memflow.tasks.ground.speakers import line_words, text_line_terms
    from memflow.tasks.recall.answers import _read, _unaddressed, said_terms
    from memflow.tasks.recall.replaced import unlabelled

    rng = random.Random(SEEDS[0])
    vocab = [word(rng) for _ in range(200)]
    heads = ["- ", "- ", "* ", "  - ", "- 2026-03-04: ", "  - until 2026-03-01: ", "-  ", "+ "]
    speakers = ["", "", "Ana: ", "Mary Ann: ", "user: ", "Émile: ", "Jo Jo Jo: ", "x: "]
    tails = ["", " [[session/dialog/s1.jsonl#L3]]", " [[daily/2026-03-01/a.md#L2-L4]]", "[[a.md#L3|said]]",
             " [[b.md]]", "  ", " [[c.jsonl#L2]] ", " [[d.md#L5]] [[e.md#L6]]"]
    extras = ["", "", "Hey Melanie, ", "Thanks, Jo! ", "note: ", "part ", "(replaced 2026-03-02) ",
              "我们的 ", "我们。", "a_b ", "x2 ", "“Ana,” ", "\u00a0"]
    read_off = plain = 0
    for _ in range(20_000):
        text = rng.choice(extras) + sentence(rng, vocab) + rng.choice(["", " " + rng.choice(extras)])
        line = rng.choice(heads) + rng.choice(speakers) + text + rng.choice(tails)
        read = _read(SimpleNamespace(path="daily/2026-03-01/a.md", date=None), line, 3)
        if read is None:
            continue
        _, who, said_text, _, _ = read
        said = f"{who}: {_unaddressed(said_text)}" if who else _unaddressed(said_text)
        got = said_terms(line, said, text_line_terms(line))
        plain += 1
        if got is not None:
            read_off += 1
            assert got == line_words(unlabelled(said), "bigram", True), repr(line)
    assert read_off > plain / 20, (read_off, plain)  # (most of its lines hold a link or Han text)


def test_the_turns_notes_cite_are_read_for_many_logs_at_once_as_for_each_alone(settings, lay):
    """`hybrid.noted_logs` reads the turns note lines cite of many session logs in one lookup
    of the link table; it gives what a lookup per log gives (`noted_turns`), which is what the
    notes' provenance links say, and None for a log no note cites."""
    import re

    from memflow.tasks.recall.hybrid import noted_logs, noted_turns

    rng = random.Random(SEEDS[0])
    vocab = sorted({word(rng) for _ in range(400)})
    write_workspace(lay, rng, vocab, sorted({w.capitalize() for w in vocab if w.isalpha()})[:50])
    run_index(settings)
    cited: dict[str, set[int]] = {}
    for note in (lay.root / "daily").rglob("*.md"):
        for log, n in re.findall(r"\[\[(session/dialog/s\d\.jsonl)#L(\d+)\]\]", note.read_text()):
            cited.setdefault(log, set()).add(int(n))
    logs = [f"session/dialog/s{n}.jsonl" for n in range(4)] + ["session/dialog/never.jsonl"]
    many = noted_logs(settings)(logs + logs[:2])
    keyword.current(indexing.keyword_dir(lay, settings)).masks.pop("noted-turns")
    one = noted_turns(settings)
    assert many == {log: one(log) for log in logs}
    assert many == {log: frozenset(cited[log]) if log in cited else None for log in logs}
    assert sum(value is not None for value in many.values()) >= 2
