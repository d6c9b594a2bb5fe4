"""Resources are indexed whole (#13 part 1): every planted needle, in any supported format and
at the end of a 20 MB file, is found with `layer=resource` and the right file and lines."""

from __future__ import annotations

import json

from memflow.schemas.recall import Filters
from memflow.tasks.ground.events import read_events
from memflow.tasks.index import run_index
from memflow.tasks.recall import search


def plant(lay) -> None:
    res = lay.root / "resource"
    (res / "notes.md").write_text("---\ntitle: Notes\n---\n\n# Notes\n\n" +
                                  "".join(f"Line {n} is filler text about nothing.\n\n" for n in range(60)) +
                                  "The vault code is FACT_40_QUOKKA.\n")
    (res / "log.txt").write_text("".join(f"{n:06d} routine heartbeat ok\n" for n in range(200)) +
                                 "needle: the backup key is TXT_NEEDLE_77\n")
    (res / "hosts.csv").write_text("host,port,owner\n" + "".join(f"h{n},{8000 + n},team{n}\n" for n in range(100)) +
                                   "vault-99,9999,CSV_NEEDLE_OWNER\n")
    (res / "config.json").write_text(json.dumps({"db": {"host": "db1", "secret_name": "JSON_NEEDLE_KEY"}}))
    (res / "page.html").write_text("<html><script>var t='SCRIPT_ONLY_TOKEN';</script><body><h1>Runbook</h1>"
                                   "<p>Page needle HTML_NEEDLE_SEVEN.</p></body></html>")
    big = res / "big.txt"
    line = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod\n"
    with big.open("w") as handle:
        for _ in range(20 * 1024 * 1024 // len(line)):
            handle.write(line)
        handle.write("at the very end: BIG_NEEDLE_END\n")
    (res / "photo.txt").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0" + bytes(range(256)) * 8)


def test_every_needle_is_found_in_its_file_and_lines(settings, lay):
    plant(lay)
    summary = run_index(settings)
    assert summary.added == 7
    wanted = {"FACT_40_QUOKKA": ("resource/notes.md", 127), "TXT_NEEDLE_77": ("resource/log.txt", 201),
              "CSV_NEEDLE_OWNER": ("resource/hosts.csv", 102), "JSON_NEEDLE_KEY": ("resource/config.json", 1),
              "HTML_NEEDLE_SEVEN": ("resource/page.html", 1), "BIG_NEEDLE_END": ("resource/big.txt", None)}
    for needle, (path, line) in wanted.items():
        results = search(settings, needle, limit=3, filters=Filters(layer="resource")).results
        hit = next((r for r in results if r.path == path), None)
        assert hit is not None and needle in hit.text, (needle, [r.path for r in results])
        if line is not None:
            assert hit.start_line <= line <= hit.end_line, (needle, hit.start_line, hit.end_line)
        else:
            total = (lay.root / path).read_text().count("\n")
            assert hit.end_line >= total - 1
    assert search(settings, "SCRIPT_ONLY_TOKEN", limit=3).results == []
    assert not [r for r in search(settings, "PNG IHDR", limit=5).results if r.path.endswith("photo.txt")]


def test_a_resource_over_the_size_limit_is_left_out_and_said(settings, lay, caplog):
    (lay.root / "resource/huge.txt").write_text("x " * 5000 + "HUGE_NEEDLE\n")
    small = settings.model_copy(update={"resource_index_max_bytes": 1000})
    summary = run_index(small)
    assert "resource_index_max_bytes" in summary.skipped["resource/huge.txt"]
    assert "resource/huge.txt" in " ".join(e["summary"] for e in read_events(lay))
    assert search(small, "HUGE_NEEDLE", limit=3).results == []
