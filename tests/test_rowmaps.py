"""Reading snapshot rows by number (stores.rowmaps): the vectorised reads give exactly the rows
the scalar reads give, whatever the chunking of the table and the order of the numbers."""

from __future__ import annotations

import datetime as dt
import random

import numpy as np
import pyarrow as pa

from memflow.tasks.stores import rowmaps


def test_column_and_row_reads_equal_scalar_reads_over_random_chunkings():
    rng = random.Random(20261204)
    schema = pa.schema([("id", pa.string()), ("line", pa.int32()), ("date", pa.date32()),
                        ("tags", pa.list_(pa.string())), ("text", pa.string())])
    for _ in range(60):
        rows = [{"id": f"r{n}", "line": rng.choice([None, rng.randint(0, 500)]),
                 "date": rng.choice([None, dt.date(2026, 1, 1) + dt.timedelta(days=rng.randint(0, 300))]),
                 "tags": [rng.choice("abcxyz") for _ in range(rng.randint(0, 3))],
                 "text": "\n".join("w" * rng.randint(0, 9) for _ in range(rng.randint(1, 4)))}
                for n in range(rng.randint(1, 40))]
        cuts = sorted(rng.sample(range(1, len(rows)), min(len(rows) - 1, rng.randint(0, 4)))) if len(rows) > 1 else []
        parts = [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)])]
        table = pa.Table.from_batches([pa.RecordBatch.from_pylist(p, schema=schema) for p in parts], schema)
        assert table.column("id").num_chunks == len(parts)
        numbers = [rng.randrange(len(rows)) for _ in range(rng.randint(1, 30))]  # repeats, any order
        expected = [rows[n] for n in numbers]
        assert rowmaps.row_dicts(table, numbers) == expected
        assert rowmaps.take_column(table.column("text"), np.array(numbers)) == [r["text"] for r in expected]


def test_row_reads_hold_when_columns_are_chunked_differently():
    """A chunk plan made from the first column is not used for a column chunked otherwise."""
    rng = random.Random(7)
    for _ in range(40):
        n = rng.randint(2, 60)
        ids, lines = [f"r{k}" for k in range(n)], [rng.randint(0, 99) for _ in range(n)]

        def chunked(values, kind):
            cuts = sorted(rng.sample(range(1, n), min(n - 1, rng.randint(1, 4))))
            return pa.chunked_array([pa.array(values[a:b], kind) for a, b in zip([0, *cuts], [*cuts, n])], kind)
        table = pa.table({"id": chunked(ids, pa.string()), "line": chunked(lines, pa.int32())})
        numbers = [rng.randrange(n) for _ in range(rng.randint(8, 40))]
        assert rowmaps.row_dicts(table, numbers) == [{"id": ids[k], "line": lines[k]} for k in numbers]


def test_rows_found_by_a_pass_equal_rows_found_grouped():
    """Inside `one_pass` a lookup scans the column and groups nothing (a one-shot index run);
    outside, the first lookup groups the rows: the same rows either way, whatever the chunking,
    nulls and repeated values."""
    from types import SimpleNamespace

    rng = random.Random(61)
    for _ in range(40):
        values = [rng.choice([None, *(f"p{k}" for k in range(rng.randint(1, 12)))]) for _ in range(rng.randint(0, 50))]
        cuts = sorted(rng.sample(range(1, len(values)), min(len(values) - 1, 3))) if len(values) > 1 else []
        column = pa.chunked_array([values[a:b] for a, b in zip([0, *cuts], [*cuts, len(values)])], pa.string())
        segment = SimpleNamespace(links=pa.table({"source": column}), masks={})
        for lookup in range(6):
            wanted = rng.sample([f"p{k}" for k in range(14)], rng.randint(0, 4))
            expected = [n for n, v in enumerate(values) if v in wanted]
            if lookup < 3:
                with rowmaps.one_pass():
                    found = rowmaps.rows_of(segment, "links", "source", wanted)
                assert ("rows", "links", "source") not in segment.masks  # nothing grouped
            else:
                found = rowmaps.rows_of(segment, "links", "source", wanted)
                assert ("rows", "links", "source") in segment.masks
            assert found.dtype == np.int64 and found.tolist() == expected
