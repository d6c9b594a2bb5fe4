"""Read-only analytics for the notebooks: tables of a workspace and of evaluation runs, as polars
DataFrames. Nothing here writes into a workspace it reads; flows never depend on it.

With no workspace or evaluation of their own, the notebooks use `sample_evaluations` (two small
evaluations of the shipped LoCoMo-format sample, in a folder of their own) and the demo.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow as pa

from memflow.schemas.settings import load_settings
from memflow.tasks.ground.events import read_events
from memflow.tasks.ground.workspace import Layout, date_of, file_stats, layer_of, layout
from memflow.tasks.stores import keyword


def open_layout(workspace: str | Path) -> Layout:
    return layout(load_settings(workspace))


def notes_per_layer_and_day(lay: Layout) -> pl.DataFrame:
    rows = [{"path": rel, "layer": layer_of(lay, rel), "date": date_of(rel), "bytes": size}
            for rel, (size, _mtime) in file_stats(lay, [lay.daily, lay.digest]).items()]
    return pl.DataFrame(rows, schema={"path": pl.Utf8, "layer": pl.Utf8, "date": pl.Date, "bytes": pl.Int64})


def _snapshot(lay: Layout) -> keyword.KeywordIndex:
    """The workspace's search snapshot (what search reads: a write indexed by name is in it
    before the LanceDB tables take it)."""
    from memflow.tasks.index import keyword_dir

    index = keyword.current(keyword_dir(lay, load_settings(lay.root)))
    if index is None:
        raise LookupError(f"{lay.root} has no index yet: run memflow index")
    return index


def chunk_table(lay: Layout) -> pl.DataFrame:
    """Per chunk: path, layer, kind, lines and its size in cl100k tokens (counted here: the index
    does not keep a count nothing it serves reads)."""
    from memflow.tasks.ground.tokens import count_tokens

    index = _snapshot(lay)
    docs = index.docs if index.alive is None else index.docs.filter(pa.array(index.alive))
    chunks = pl.from_arrow(docs.select(["path", "layer", "kind", "start_line", "end_line", "text"]))
    counts = pl.Series("n_tokens", [count_tokens(t) for t in chunks["text"].to_list()], dtype=pl.Int32)
    return chunks.drop("text").with_columns(counts, (pl.col("end_line") - pl.col("start_line") + 1).alias("lines"))


def link_degrees(lay: Layout) -> pl.DataFrame:
    """Per indexed note: out-degree, in-degree; orphans have neither."""
    index = _snapshot(lay)
    links = pl.from_arrow(index.live_links().select(["source", "target"]))
    files = pl.from_arrow(index.live_files().select(["path", "layer", "kind"]))
    out_deg = links.group_by("source").len().rename({"source": "path", "len": "out_degree"})
    in_deg = links.group_by("target").len().rename({"target": "path", "len": "in_degree"})
    return (files.join(out_deg, on="path", how="left").join(in_deg, on="path", how="left")
            .with_columns(pl.col("out_degree").fill_null(0), pl.col("in_degree").fill_null(0))
            .with_columns(((pl.col("out_degree") == 0) & (pl.col("in_degree") == 0)).alias("orphan")))


def dream_actions(lay: Layout) -> pl.DataFrame:
    rows = []
    for folder in sorted((lay.state_dir / "dream_runs").glob("*/manifest.json")):
        manifest = json.loads(folder.read_text(encoding="utf-8"))
        for action in manifest["actions"]:
            rows.append({"run_id": manifest["run_id"], "started": manifest["started"][:19],
                         "status": manifest["status"], "action": action["action"], "path": action["path"]})
    return pl.DataFrame(rows, schema={"run_id": pl.Utf8, "started": pl.Utf8, "status": pl.Utf8,
                                      "action": pl.Utf8, "path": pl.Utf8})


def inbox(lay: Layout) -> pl.DataFrame:
    rows = [{"time": e["time"], "job": e["job"], "files": len(e["paths"]), "summary": e["summary"]}
            for e in read_events(lay)]
    return pl.DataFrame(rows, schema={"time": pl.Utf8, "job": pl.Utf8, "files": pl.Int64, "summary": pl.Utf8})


def load_eval(folder: str | Path) -> tuple[dict, pl.DataFrame]:
    folder = Path(folder)
    return (json.loads((folder / "summary.json").read_text(encoding="utf-8")),
            pl.read_parquet(folder / "questions.parquet"))


def curves(summary: dict, key: str) -> pl.DataFrame:
    """One metric map (e.g. budget_recall_any) as rows per x, overall and per category, with the
    baseline beside it."""
    rows = []
    for who, block in (("memflow", summary), ("baseline", summary["baseline"])):
        for x, value in block[key].items():
            rows.append({"system": who, "category": "all", "x": int(x), "value": value})
        for category, sub in block.get("per_category", {}).items():
            for x, value in sub[key].items():
                rows.append({"system": who, "category": category, "x": int(x), "value": value})
    return pl.DataFrame(rows)


def sample_data() -> Path:
    """The shipped LoCoMo-format sample (one conversation written for the demo, 12 questions)."""
    from importlib import resources

    return Path(str(resources.files("memflow.samples").joinpath("locomo_sample.json")))


def sample_evaluations(folder: str | Path) -> list[str]:
    """Two small evaluations of the sample under `folder` (BM25, then with a dream), for the
    retrieval notebook when it is given none. Returns their folders."""
    from memflow.tasks.evaluate.locomo_eval import run_evaluation

    runs = []
    for name, dream in (("sample-bm25", False), ("sample-dream", True)):
        out = Path(folder) / name
        settings = load_settings(out, chat_model="", embedding_model="")
        run_evaluation(sample_data(), out, settings, [1, 5, 10], [250, 500, 1000, 2000], dream=dream)
        runs.append(str(out))
    return runs


# One colour per category in every plot of every notebook (memflow and the baseline share a
# category's colour and differ by line style): matplotlib's tab10, in a fixed order.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
KNOWN = ("all", "multi-hop", "temporal", "open-domain", "single-hop", "adversarial",
         "daily", "digest", "session", "resource")


def colour(category: str) -> str:
    """The colour of `category` (an evaluation category, a layer, a dream action, a run name):
    fixed for the known names, stable per name (its sha256) for any other."""
    if category in KNOWN:
        return PALETTE[KNOWN.index(category) % len(PALETTE)]
    import hashlib

    return PALETTE[int(hashlib.sha256(category.encode()).hexdigest(), 16) % len(PALETTE)]
