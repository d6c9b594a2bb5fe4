"""Resources read as clean text (#13 part 2): HTML without its scripts and navigation, Markdown
frontmatter as card fields, JSON and CSV as key paths and rows, binary content refused."""

from __future__ import annotations

import json

from memflow.tasks.capture import auto_resource
from memflow.tasks.ground.convert import convert, looks_binary
from memflow.tasks.index import run_index
from memflow.tasks.recall import search

PAGE = """<html><head><title>Runbook</title><style>.x{color:red}</style>
<script>var trackingId = "UA-SECRET-4242"; sendBeacon();</script></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<h1>Billing runbook</h1><p>Restart the <b>billing worker</b> with <code>make restart-billing</code>.</p>
<table><tr><th>host</th><th>port</th></tr><tr><td>bill-01</td><td>9090</td></tr></table>
<footer>Copyright 2026</footer></body></html>"""


def test_html_becomes_markdown_without_scripts_styles_or_navigation():
    text = convert("resource/page.html", PAGE).text
    assert "# Billing runbook" in text and "**billing worker**" in text
    assert "| host | port |" in text and "| bill-01 | 9090 |" in text
    assert "UA-SECRET" not in text and "color:red" not in text and "About" not in text
    assert "Copyright" not in text


def test_structured_files_read_as_key_paths_and_rows():
    data = json.dumps({"service": {"name": "billing", "ports": [9090, 9091]}})
    assert convert("resource/c.json", data).text.split("\n") == [
        "service.name: billing", "service.ports[0]: 9090", "service.ports[1]: 9091"]
    rows = convert("resource/t.csv", "host,port\nbill-01,9090\n").text.split("\n")
    assert rows[:2] == ["host, port", "host: bill-01; port: 9090"]
    assert looks_binary(b"\x89PNG\r\n\x1a\n\0\0\0IHDR") and not looks_binary("héllo 你好\n".encode())


def test_resource_cards_are_clean_and_binary_files_are_refused(settings, lay):
    (lay.root / "resource/page.html").write_text(PAGE)
    (lay.root / "resource/plan.md").write_text(
        "---\ntitle: Migration plan\ntags: [db, q3]\n---\n\n# Plan\n\nMove billing to Postgres 16 in Q3.\n")
    (lay.root / "resource/photo.txt").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0IHDR" + bytes(range(256)) * 4)
    result = auto_resource(settings)
    assert "binary content" in result.refused["resource/photo.txt"] and result.failed == {}
    cards = {p.name: p.read_text() for p in (lay.root / "daily").rglob("resource-*.md")}
    assert len(cards) == 2 and not any("photo" in name for name in cards)
    html_card = next(t for n, t in cards.items() if "page" in n)
    assert "UA-SECRET" not in html_card and "Billing runbook" in html_card
    assert "[[resource/page.html]]" in html_card and "#L" not in html_card.split("---", 2)[2]
    md_card = next(t for n, t in cards.items() if "plan" in n)
    assert "description: 'plan.md: Migration plan'" in md_card or "plan.md: Migration plan" in md_card
    assert "resource_meta:" in md_card and "title: Migration plan" in md_card
    assert "[[resource/plan.md#L8]]" in md_card  # line 8 of the file itself, frontmatter counted
    body = md_card.split("---", 2)[2]
    assert "tags" not in body and "Move billing to Postgres 16 in Q3." in body
    events = [json.loads(line) for line in (lay.state_dir / "inbox.jsonl").read_text().splitlines()]
    assert any(e["job"] == "auto_resource" and "refused" in e["summary"] for e in events)
    assert auto_resource(settings).refused == {}  # refused once, not on every run until it changes
    run_index(settings)
    assert search(settings, "UA-SECRET-4242").results == []


def test_random_control_bytes_saved_as_text_are_refused_as_binary_not_carded(settings, lay):
    """Issue 57: control bytes without a NUL are valid UTF-8, so a file of them became a card of
    garbage. Generated (seeded) files of control bytes, alone or mixed with some printable
    ones, with or without a UTF-8 byte-order mark: refused as binary, no card, no chunk; a
    text with tabs and form feeds is still read."""
    import random

    from memflow.tasks.stores.lance import IndexStore

    rng = random.Random(57)
    controls = [b for b in range(1, 32) if b not in (9, 10, 12, 13)] + [127]
    for n in range(6):
        share = rng.uniform(0.5, 1.0)
        data = bytes(rng.choice(controls) if rng.random() < share else rng.randrange(32, 127)
                     for _ in range(rng.randint(200, 5000)))
        (lay.root / f"resource/noise-{n}.txt").write_bytes((b"\xef\xbb\xbf" if n % 2 else b"") + data)
    (lay.root / "resource/table.txt").write_text("name\tvalue\nport\t5432\n\fpage two\n")
    result = auto_resource(settings)
    assert sorted(result.refused) == [f"resource/noise-{n}.txt" for n in range(6)]
    assert all("binary content" in why for why in result.refused.values())
    assert len(result.created) == 1 and "table" in result.created[0] and result.failed == {}
    run_index(settings)
    paths = set(IndexStore(lay.index_dir / "lance").chunk_columns(["path"]).column("path").to_pylist())
    assert paths.isdisjoint(result.refused) and "resource/table.txt" in paths
