"""Which chunks make the BM25 statistics (document count, document frequencies, average
length): the evidence and everything a person wrote, not the digest nodes the dream derived
from it. A consolidated node restates daily lines; counting its words again makes what was
consolidated look common, so a dream would reorder what was said (LoCoMo dev: with the digest
counted, `--dream` moved evidence windows up or down on ~40 questions per budget with no
change to them). Derived chunks are scored with the evidence's statistics, like every other."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memflow.tasks.ground.workspace import Layout, layer_of

EVIDENCE = ("session", "resource", "daily")


def counted_rows(lay: Layout, paths: pa.Array | pa.ChunkedArray, layers: pa.Array | pa.ChunkedArray,
                 links: pa.Table) -> np.ndarray:
    """Per chunk: True when its terms count in the statistics. A chunk of a digest note that
    cites evidence (a link into session/, resource/ or daily/: what the dream writes) does not;
    a digest note citing none (written by hand, or linking only other nodes) counts."""
    digest = pc.fill_null(pc.equal(layers, "digest"), False).to_numpy(zero_copy_only=False)
    if not digest.any():
        return np.ones(len(digest), dtype=bool)
    prefix = lay.digest.rstrip("/") + "/"
    from_digest = links.filter(pc.starts_with(links.column("source"), prefix))
    targets = pc.unique(from_digest.column("target")).to_pylist()
    evidence = pa.array([t for t in targets if t and layer_of(lay, t) in EVIDENCE], pa.string())
    citing = pc.unique(from_digest.filter(pc.is_in(from_digest.column("target"), value_set=evidence))
                       .column("source"))
    derived = digest & pc.is_in(paths, value_set=citing).to_numpy(zero_copy_only=False)
    return ~derived
