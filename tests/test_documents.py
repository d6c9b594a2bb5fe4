"""PDF and Word resources read as a user drops them in: real files made with pypdf and
python-docx, the CLI as a subprocess; encrypted, scanned and hostile files are named with a
reason and never stop the job; the other common text types are read as their type."""

from __future__ import annotations

import io
import json
import random
import zipfile

import docx
import pytest
from helpers import run_cli
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from memflow.tasks.ground.documents import MAX_UNPACKED, read_document

SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(n))


def make_pdf(pages: list[list[str]], password: str | None = None) -> bytes:
    """A real PDF: one Helvetica text line per string of each page (no strings: a page with no text)."""
    writer = PdfWriter()
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
        ops = ["BT", "/F1 11 Tf", "14 TL", "72 740 Td"] + [f"({line}) Tj T*" for line in lines] + ["ET"]
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    if password:
        writer.encrypt(password, algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(sections: list[tuple[str, list[str]]]) -> bytes:
    doc = docx.Document()
    for heading, paragraphs in sections:
        doc.add_heading(heading, 1)
        for text in paragraphs:
            doc.add_paragraph(text)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def cli(ws, *args):
    result = run_cli("-w", str(ws), *args)
    assert result.returncode in (0, 1), result.stderr
    return result


def test_pdf_and_docx_resources_are_cards_and_searchable_by_page_and_heading(tmp_path):
    ws = tmp_path / "ws"
    assert run_cli("-w", str(ws), "init").returncode == 0
    rng = random.Random(7)
    pages = [[words(rng, 8) for _ in range(5)] for _ in range(6)]
    needle_page = rng.randrange(2, 6)
    needle = words(rng, 3)
    pages[needle_page - 1][2] = needle
    (ws / "resource" / "handbook.pdf").write_bytes(make_pdf(pages))
    heading, answer = words(rng, 2).title(), words(rng, 4)
    (ws / "resource" / "guide.docx").write_bytes(make_docx([
        (words(rng, 2).title(), [words(rng, 10) for _ in range(3)]), (heading, [answer])]))
    out = cli(ws, "resources", "--json")
    result = json.loads(out.stdout)
    assert len(result["created"]) == 2 and result["failed"] == {} and result["skipped"] == {}
    card = next((ws / "daily").rglob("resource-handbook-pdf.md")).read_text()
    assert f"[[resource/handbook.pdf]] (page {needle_page})" in card and "pages: 6" in card
    assert cli(ws, "index").returncode == 0
    hits = json.loads(cli(ws, "search", needle, "--layer", "resource", "--json").stdout)["results"]
    assert hits[0]["path"] == "resource/handbook.pdf"
    assert hits[0]["start_line"] <= needle_page <= hits[0]["end_line"] and needle in hits[0]["text"]
    assert "page" in hits[0]["heading_path"]
    hits = json.loads(cli(ws, "search", answer, "--layer", "resource", "--json").stdout)["results"]
    assert hits[0]["path"] == "resource/guide.docx" and heading in hits[0]["heading_path"]


@pytest.mark.slow  # >10 s here (pytest --durations)
def test_encrypted_scanned_and_hostile_documents_are_named_and_the_job_goes_on(tmp_path):
    ws = tmp_path / "ws"
    assert run_cli("-w", str(ws), "init").returncode == 0
    res = ws / "resource"
    (res / "locked.pdf").write_bytes(make_pdf([["secret plans"]], password="pw"))
    (res / "scan.pdf").write_bytes(make_pdf([[], []]))
    (res / "broken.pdf").write_bytes(b"%PDF-1.4\n" + bytes(random.Random(1).randrange(256) for _ in range(4000)))
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"<" * (MAX_UNPACKED + 1))
    (res / "bomb.docx").write_bytes(bomb.getvalue())
    (res / "fake.docx").write_bytes(b"not a zip at all")
    (res / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0")
    (res / "ok.pdf").write_bytes(make_pdf([["the job goes on"]]))
    out = cli(ws, "resources", "--json")
    result = json.loads(out.stdout)
    assert len(result["created"]) == 1
    assert "password" in result["refused"]["resource/locked.pdf"]
    assert "no text layer" in result["refused"]["resource/scan.pdf"]
    assert "zip bomb" in result["refused"]["resource/bomb.docx"]
    assert "not a Word .docx file" in result["refused"]["resource/fake.docx"]
    assert "resource/broken.pdf" in result["refused"] and result["failed"] == {}
    assert "a .png file is not read" in result["skipped"]["resource/photo.png"]
    status = json.loads(cli(ws, "status", "--json").stdout)
    assert set(status["resources"]["not_read"]) == {f"resource/{n}" for n in (
        "locked.pdf", "scan.pdf", "broken.pdf", "bomb.docx", "fake.docx", "photo.png")}
    inbox = cli(ws, "inbox").stdout
    assert "photo.png" in inbox and "locked.pdf" in inbox
    assert cli(ws, "index").returncode == 0
    hits = json.loads(cli(ws, "search", "job goes on", "--json").stdout)["results"]
    assert any(h["path"] == "resource/ok.pdf" for h in hits)


def test_a_pdf_past_the_page_limit_is_read_in_part(monkeypatch):
    from memflow.tasks.ground import documents

    monkeypatch.setattr(documents, "MAX_PAGES", 3)
    doc = read_document("big.pdf", make_pdf([[f"page text {n}"] for n in range(1, 6)]))
    assert [s.first for s in doc.sections] == [1, 2, 3] and "pages 4-5 not read" in doc.partial


def test_common_text_types_are_read_as_their_type(tmp_path):
    ws = tmp_path / "ws"
    assert run_cli("-w", str(ws), "init").returncode == 0
    res = ws / "resource"
    (res / "a.markdown").write_text("---\ndescription: release plan\n---\n# Plan\n\nShip it\n")
    (res / "b.yml").write_text("server:\n  port: 8080\n")
    (res / "c.htm").write_text("<html><body><nav>menu</nav><h1>Title</h1><p>Body text</p></body></html>")
    (res / "d.rst").write_text("Heading\n=======\n\nSome rst text\n")
    (res / "e.log").write_text("2026-01-01 ERROR disk full\n")
    (res / "f.tsv").write_text("name\tcity\nAda\tLondon\n")
    result = json.loads(cli(ws, "resources", "--json").stdout)
    assert len(result["created"]) == 6 and not result["skipped"] and not result["failed"]
    cards = {p.name: p.read_text() for p in (ws / "daily").rglob("resource-*.md")}
    assert "release plan" in cards["resource-a-markdown.md"]
    assert "server.port: 8080" in cards["resource-b-yml.md"]
    assert "menu" not in cards["resource-c-htm.md"] and "Body text" in cards["resource-c-htm.md"]
    assert "name: Ada; city: London" in cards["resource-f-tsv.md"]
