"""A cold index's rows take cheaper roads (issue #58): chunk terms cross from a parsing worker as
one string each and are split in Arrow, chunk and link rows cross as columns, the superseded columns are made in Arrow, the cyclic
garbage collector runs rarely. The rows that reach the tables are the ones the plain rows make."""

from __future__ import annotations

import gc
import pickle
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from memflow.schemas.tables import CHUNKS, LINKS
from memflow.tasks.ground.memory import FEW_COLLECTIONS, few_collections
from memflow.tasks.index.indexing import indexed_files, pipeline_version
from memflow.tasks.index.rows import file_rows_of, joined_terms, parse_part
from memflow.tasks.stores.lance import rows_batch, split_terms

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from realistic import build  # noqa: E402


def test_parsed_parts_make_the_chunk_batches_of_their_plain_rows(settings, lay):
    build(lay.root, 400)  # notes (some Chinese), session logs, resources, digest nodes
    odd = lay.root / "daily" / "2026-12-01"
    odd.mkdir(parents=True, exist_ok=True)
    (odd / "long-word.md").write_text("# T\n\nA " + "x" * 100 + " word.\n", encoding="utf-8")  # a term cut
    (odd / "no-words.md").write_text("- !!\n- ...\n", encoding="utf-8")  # a chunk without terms
    (odd / "only-frontmatter.md").write_text("---\ndescription: d\n---\n", encoding="utf-8")
    pipeline = pipeline_version(settings)
    paths = sorted(indexed_files(lay))
    plain = []
    for rel in paths:
        rows = file_rows_of(lay, settings, rel, pipeline, {}, {})
        plain.extend(rows[1] if rows else [])
    parts = [parse_part(lay, settings, pipeline, paths[i:i + 64]) for i in range(0, len(paths), 64)]
    cold = pa.Table.from_batches([rows_batch(part.chunks, CHUNKS) for part in parts], schema=CHUNKS)
    assert cold.equals(pa.Table.from_pylist(plain, schema=CHUNKS))
    assert all(isinstance(row["terms"], str) for part in parts for row in part.chunks)
    for part in parts:  # as a worker sends it: columns
        sent = pickle.loads(pickle.dumps(part, pickle.HIGHEST_PROTOCOL))
        assert isinstance(sent.chunks, dict) and sent.files == part.files
        assert rows_batch(sent.chunks, CHUNKS).equals(rows_batch(part.chunks, CHUNKS))
        assert rows_batch(sent.links, LINKS).equals(pa.RecordBatch.from_pylist(part.links, schema=LINKS))
    terms = [row["terms"] for row in plain]
    assert [] in terms and any("x" * 64 in t for t in terms)  # the edge cases were there
    assert any(any("\u4e00" <= c <= "\u9fff" for term in t for c in term) for t in terms)


@pytest.mark.parametrize("lists", [
    [["a"], [], ["b", "c"], []],
    [[], []],
    [["said:user", "hi", "中文", "文字"]],
    [],
])
def test_joined_terms_split_back_into_the_same_lists(lists):
    texts = pa.array([joined_terms(t) for t in lists], pa.string())
    assert split_terms(texts).to_pylist() == lists
    assert split_terms(texts).type == pa.list_(pa.string())


def test_a_null_terms_text_stays_null_beside_empty_ones():
    assert split_terms(pa.array(["", None, "a b"], pa.string())).to_pylist() == [[], None, ["a", "b"]]


def test_few_collections_puts_the_thresholds_back_even_on_an_error():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError):
        with few_collections():
            assert gc.get_threshold()[0] >= FEW_COLLECTIONS
            raise RuntimeError("stop")
    assert gc.get_threshold() == before


def per_row_superseded(docs, links, lay):
    """The superseded columns as they were made before (a loop over every row): the oracle."""
    from memflow.tasks.index.superseded import _replaced, _said_pieces

    replaced, said, still_said = _replaced(docs, links, lay.daily, lay.digest, lay.session)
    numbers, days, parts = [], [], []
    columns = (docs.column(c).to_pylist() for c in ("path", "start_line", "end_line"))
    for row, (path, start, end) in enumerate(zip(*columns)):
        held = sorted((n, d) for n, d in replaced.get(path, {}).items() if start <= n <= end)
        pieces = _said_pieces(docs.column("text")[row].as_py(), end, said[path]) if held and path in said else {}
        got = [(n, day, part) for n, day in held
               for part in sorted(pieces.get(n, set() if (path, n) in still_said else {0}))]
        numbers.append([g[0] for g in got])
        days.append([g[1] for g in got])
        parts.append([g[2] for g in got])
    return numbers, days, parts


def test_superseded_columns_are_the_per_row_ones(settings, lay):
    from memflow.tasks.index import run_index
    from memflow.tasks.index.indexing import open_store
    from memflow.tasks.index.superseded import superseded_lines
    from memflow.tasks.stores import keyword

    build(lay.root, 1200)  # digest history lines citing replaced daily lines and their turns
    run_index(settings)
    store = open_store(lay, settings)
    docs, links = store.chunk_columns(keyword.CHUNK_COLUMNS).combine_chunks(), store.link_table()
    made = [column.to_pylist() for column in superseded_lines(docs, links, lay.daily, lay.digest, lay.session)]
    assert made == list(per_row_superseded(docs, links, lay))
    assert sum(map(bool, made[0])) > 0  # some rows hold replaced lines


def test_a_chunks_table_stored_compressed_before_is_opened_and_indexed_into(settings, lay, monkeypatch):
    import lancedb

    from memflow.tasks.index import indexing, run_index
    from memflow.tasks.index.indexing import LANCE
    from memflow.tasks.stores.lance import IndexStore

    build(lay.root, 300)
    lancedb.connect(str(lay.index_dir / LANCE)).create_table("chunks", schema=CHUNKS)  # as before
    first = run_index(settings)
    assert first.added == 300 and first.chunks > 0
    assert IndexStore(lay.index_dir / LANCE).chunks.schema.field("text").metadata is None  # kept as it was
    edited = sorted((lay.root / "daily").rglob("*.md"))[:40]
    for path in edited:
        path.write_text(path.read_text(encoding="utf-8") + "\nzanzibarquokka\n", encoding="utf-8")
    monkeypatch.setattr(indexing, "SMALL_CHANGE", 0)  # no delta: the tables are opened and written
    second = run_index(settings)
    assert second.modified == len(edited) and second.total_chunks == IndexStore(lay.index_dir / LANCE).count_chunks()
