"""memflow import reme, on a workspace ReMe 0.4.2 wrote itself (tests/data/reme/make_fixture.py,
embeddings from the loopback fake model): vectors reused so the index embeds nothing ReMe had,
search agrees with ReMe's recorded results, resources and dreamt notes are not done again."""

from __future__ import annotations

import json
import os
import shutil
from datetime import date
from pathlib import Path

import pytest

from memflow import api
from memflow.commands import import_lines
from memflow.tasks.imports import NotReme

FIXTURE = Path(__file__).parent / "data" / "reme"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))


def reme_copy(tmp_path: Path) -> Path:
    """The fixture as ReMe left it on disk: git keeps no mtimes, ReMe's catalogs key on them."""
    dst = tmp_path / "reme"
    shutil.copytree(FIXTURE / "workspace", dst)
    for rel, ns in EXPECTED["mtime_ns"].items():
        os.utime(dst / rel, ns=(ns, ns))
    return dst


def embed_texts(fake_model) -> int:
    return sum(len(r["body"]["input"]) if isinstance(r["body"]["input"], list) else 1
               for r in fake_model.requests if r["path"].endswith("/embeddings"))


def model(fake_model, name: str = "openai/fake-embed") -> dict:
    return {"embedding_model": name, "model_api_base": fake_model.api_base, "model_api_key": "x",
            "model_timeout": 5.0}


def test_imported_reme_workspace_embeds_nothing_reme_had_and_redoes_no_work(tmp_path, fake_model):
    src = reme_copy(tmp_path)
    before = {p: p.read_bytes() for p in src.rglob("*") if p.is_file()}
    report = api.import_reme(src, tmp_path / "mf", reme_model="fake-embed", **model(fake_model))
    assert {p: p.read_bytes() for p in src.rglob("*") if p.is_file()} == before  # source untouched
    assert report.layout.flavour == "qwenpaw" and report.layout.daily == "memory"
    assert report.reme_chunks == report.reme_vectors > 0 and not report.unreadable
    reused = report.reused_exact + report.reused_same_chunk + report.reused_composed
    # ReMe indexes memory/ and digest/ only: the two resource originals are the only chunks left
    assert report.skipped == {"ReMe did not index this file": 2}
    assert reused == report.chunks - 2
    assert report.resources_adopted == 2 and report.resources_pending == {}
    assert report.dreamt_adopted == 6 and report.dream_pending == {}
    assert report.typed_links == 1  # coffee's `rel:: [[memory/2026-11-20/bike]]`
    assert fake_model.requests == []  # the import itself calls no model
    lines = import_lines(report)
    assert "vectors skipped: 2 (ReMe did not index this file)" in lines

    mf = api.settings_for(tmp_path / "mf", model_api_key="x")  # the key is never written to memflow.toml
    summary = api.index(mf)
    # only the two resource originals, plus the health check's "ping" before embedding them
    assert summary.vectors == 2 and embed_texts(fake_model) == 3
    for case in EXPECTED["searches"]:  # ReMe searched notes (no resource originals, no day pages)
        theirs = [r["path"] for r in case["results"] if r["path"].count("/") == 2]
        ours = [h.path for h in api.search(case["query"], mf, limit=3, layer="daily").results]
        assert ours[0] == theirs[0], case

    fake_model.requests.clear()
    assert not api.capture_resources(mf).created
    offline = mf.model_copy(update={"chat_model": ""})
    dreamt = api.dream(offline, date=date(2026, 11, 22))
    # the one note ReMe never dreamt (written after its dream): memory/2026-11-22/dentist.md
    assert dreamt.notes_read == dreamt.notes_consumed == 1 and dreamt.notes_left == 0


def test_a_different_model_skips_every_vector_with_the_reason_and_the_index_embeds_them(tmp_path, fake_model):
    src = reme_copy(tmp_path)
    report = api.import_reme(src, reme_model="fake-embed", **model(fake_model, "openai/other-embed"))
    assert report.mode == "adopted in place" and (src / "memflow.toml").is_file()
    reason = "model mismatch: ReMe used fake-embed, memory-flows is configured with openai/other-embed"
    assert report.skipped[reason] == report.chunks - 2
    assert report.reused_exact + report.reused_same_chunk + report.reused_composed == 0
    summary = api.index(api.settings_for(src, model_api_key="x"))
    assert summary.vectors == embed_texts(fake_model) - 1 == report.chunks  # plus one health check


def test_dimension_mismatch_and_unknown_model_are_reasons_too(tmp_path, fake_model):
    src = reme_copy(tmp_path)
    report = api.import_reme(src, tmp_path / "a", reme_model="fake-embed",
                             embedding_dimensions=128, **model(fake_model))
    assert any(why.startswith("dimension mismatch: ReMe's vectors have 64") for why in report.skipped)
    report = api.import_reme(src, tmp_path / "b", **model(fake_model))
    assert any("ReMe's embedding model is unknown" in why for why in report.skipped)


def test_model_found_by_remes_cache_name_when_the_endpoint_is_the_same(tmp_path, fake_model):
    settings = {**model(fake_model), "model_api_base": EXPECTED["api_base"]}
    report = api.import_reme(reme_copy(tmp_path), tmp_path / "mf", **settings)
    assert report.reme_model == "openai/fake-embed"
    assert report.reused_exact + report.reused_same_chunk + report.reused_composed == report.chunks - 2


def test_dry_run_writes_nothing_and_an_edited_note_stays_pending(tmp_path, fake_model):
    src = reme_copy(tmp_path)
    note = src / "memory/2026-11-21/garden.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nAlso onions.\n", encoding="utf-8")
    listing = sorted(p for p in src.rglob("*"))
    report = api.import_reme(src, dry_run=True)
    assert sorted(p for p in src.rglob("*")) == listing
    assert report.dream_pending == {"memory/2026-11-21/garden.md": "changed since ReMe dreamt it"}
    assert report.dreamt_adopted == 5 and report.reme_vectors > 0


def test_bad_input_gets_a_clear_error(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(NotReme, match="not a ReMe or QwenPaw workspace"):
        api.import_reme(tmp_path / "plain")
    src = reme_copy(tmp_path)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(ValueError, match="new or empty folder"):
        api.import_reme(src, tmp_path / "full")


def test_a_damaged_store_is_named_in_the_report(tmp_path, fake_model):
    src = reme_copy(tmp_path)
    graph = src / "mem_metadata/file_graph/default.jsonl.zst"
    graph.write_bytes(graph.read_bytes()[:40])
    report = api.import_reme(src, tmp_path / "mf", reme_model="fake-embed", **model(fake_model))
    assert any(p.startswith("mem_metadata/file_graph/default.jsonl.zst") for p in report.unreadable)
