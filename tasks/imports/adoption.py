"""Adopt a ReMe / QwenPaw workspace (stage: import): copy its layers or keep them in place, index
the files, put ReMe's vectors into the embedding cache under the hashes of the texts the index
embeds, and take over its resource and dream catalogs, so nothing ReMe paid for is paid again.

A file counts as the one ReMe processed when its mtime is the one ReMe recorded or, when mtimes
were lost (`cp -r`, a git clone), when it still holds what ReMe indexed: each ReMe chunk's text at
its lines and no other body line (`same_content`); a dreamt note also needs ReMe to have indexed
the version it dreamt (the graph's and the dream catalog's mtimes agree).

ReMe chunks files differently, so a memory-flows chunk gets, in order: the vector ReMe cached
for exactly its embedding text (by sha256); ReMe's vector of the same chunk text (memory-flows
prefixes a note's first chunk with its name and description); or the mean of the vectors of the
ReMe chunks covering its lines, weighted by the lines shared. The report counts each kind and
every chunk left to embed, with the reason. Nothing in the source is modified.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from memflow.schemas.imports import ImportReport, RemeLayout
from memflow.schemas.settings import CONFIG_FILE, Settings
from memflow.tasks.capture import adopt_resource_notes
from memflow.tasks.dream import adopt_consolidated
from memflow.tasks.ground.notes import parse_note
from memflow.tasks.ground.workspace import date_of, layout
from memflow.tasks.imports import reme_store, vector_reuse
from memflow.tasks.index import chunk_embedding_keys, link_kinds, run_index, seed_embedding_cache
from memflow.tasks.stores.files import atomic_write_text

MTIME_SLACK = 1e-5  # ReMe stores st_mtime as a float


def import_workspace(src: Path, reme: RemeLayout, settings: Settings, copy: bool, reme_model: str = "",
                     dry_run: bool = False) -> ImportReport:
    """Import `src` into the workspace of `settings` (the same folder unless `copy`)."""
    lay = layout(settings)
    meta = src / reme.metadata
    report = ImportReport(source=str(src), workspace=str(lay.root), layout=reme,
                          mode="dry run" if dry_run else "copied" if copy else "adopted in place")
    problems = report.unreadable
    graph_mtimes, report.graph_links = reme_store.graph(meta, problems)
    fresh = fresh_files(src, meta, graph_mtimes)
    resources, report.resources_pending, stale = converted_resources(
        src, meta, reme, problems, mtimes_lost(src, graph_mtimes, fresh))
    dreamt, report.dream_pending = dreamt_notes(src, meta, reme, problems, graph_mtimes, fresh)
    if dry_run:
        report.files = count_files(src, reme)
        _, report.reme_chunks, report.reme_vectors = reme_store.chunks_by_path(meta, set(), problems)
        report.reme_model = reme_model
        report.resources_adopted, report.dreamt_adopted = len(resources), len(dreamt)
        return report
    report.files = copy_layers(src, lay.root, reme) if copy else count_files(src, reme)
    write_config(lay.root, settings)
    run_index(settings, embed=False)
    reuse_vectors(report, settings, meta, graph_mtimes, fresh, reme_model)
    report.resources_adopted = adopt_resource_notes(settings, resources)
    adopt_resource_notes(settings, stale, current=False)  # converted again into ReMe's note, not beside it
    report.dreamt_adopted = adopt_consolidated(settings, dreamt)
    kinds = link_kinds(settings)
    report.index_links, report.typed_links = sum(kinds.values()), kinds.get("rel", 0)
    return report


def layer_folders(reme: RemeLayout) -> list[str]:
    return [reme.daily, reme.digest, reme.resource, reme.session]


def count_files(root: Path, reme: RemeLayout) -> int:
    return sum(1 for folder in layer_folders(reme) if (root / folder).is_dir()
               for path in (root / folder).rglob("*") if path.is_file())


def copy_layers(src: Path, dst: Path, reme: RemeLayout) -> int:
    """Copy the Markdown, resource and session layers (names kept, so links stay valid; mtimes
    kept, as ReMe's catalogs key on them). ReMe's metadata is read, not copied."""
    for folder in layer_folders(reme):
        if (src / folder).is_dir():
            shutil.copytree(src / folder, dst / folder, symlinks=True, copy_function=shutil.copy2)
    return count_files(dst, reme)


def write_config(root: Path, settings: Settings) -> None:
    """memflow.toml with the folder names and the model settings (never the API key); an
    existing one is the user's and is kept."""
    if (root / CONFIG_FILE).exists():
        return
    keys = ["session_dir", "resource_dir", "daily_dir", "digest_dir", "metadata_dir", "embedding_model",
            "embedding_dimensions", "model_api_base", "chat_model"]
    values = settings.model_dump(include=set(keys))
    lines = ["# written by `memflow import reme`", "[memflow]"]
    lines += [f"{key} = {values[key]!r}" if isinstance(values[key], int) else f'{key} = "{values[key]}"'
              for key in keys if values[key]]
    atomic_write_text(root / CONFIG_FILE, "\n".join(lines) + "\n")


def unchanged(src: Path, rel: str, recorded: float) -> bool:
    try:
        return abs(os.stat(src / rel).st_mtime - recorded) < MTIME_SLACK
    except OSError:
        return False


def body_start(lines: list[str]) -> int:
    """The index of the first line after a leading frontmatter block (0 when there is none)."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                return i + 1
    return 0


def solid(lines: list[str]) -> list[str]:
    """Non-blank lines, stripped: ReMe's chunk text may add or drop blank lines around blocks."""
    return [line.strip() for line in lines if line.strip()]


def same_content(src: Path, rel: str, spans: list[tuple[int, int, str]]) -> bool:
    """Whether `rel` still holds what ReMe indexed: each chunk's text at its (1-based) lines (up
    to blank lines) and
    no non-blank body line outside them (an appended line is a change; frontmatter is not
    chunked by ReMe)."""
    if not spans:
        return False
    try:
        lines = (src / rel).read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return False
    covered: set[int] = set()
    for start, end, text in spans:
        if start < 1 or solid(lines[start - 1:end]) != solid(text.split("\n")):
            return False
        covered.update(range(start - 1, end))
    return all(i in covered or not lines[i].strip() for i in range(body_start(lines), len(lines)))


def fresh_files(src: Path, meta: Path, graph_mtimes: dict[str, float]) -> set[str]:
    """The files ReMe indexed that are as it indexed them: by mtime, else by content."""
    by_time = {rel for rel, mtime in graph_mtimes.items() if unchanged(src, rel, mtime)}
    spans = reme_store.chunk_spans(meta, set(graph_mtimes) - by_time, [])
    return by_time | {rel for rel, parts in spans.items() if same_content(src, rel, parts)}


def mtimes_lost(src: Path, graph_mtimes: dict[str, float], fresh: set[str]) -> bool:
    """Whether the copy lost every mtime (`cp -r`, a git clone): no file ReMe indexed has the
    mtime it recorded, yet some still hold what it indexed."""
    return bool(fresh) and not any(unchanged(src, rel, mtime) for rel, mtime in graph_mtimes.items())


def converted_resources(src: Path, meta: Path, reme: RemeLayout, problems: list[str], lost: bool = False
                        ) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """({resource: its note} ReMe converted and left unchanged since, {resource: why it will be
    converted again}, {resource: ReMe's note} of those changed since, which their new card
    replaces). A resource counts as converted when a daily note's `source_resource` names it;
    unchanged when its mtime is the one ReMe recorded, or, when the copy lost every mtime
    (`lost`; ReMe keeps no hash of a resource), when its note is there: a second card of it
    would be a duplicate, and a later change is found by the catalog's hash."""
    notes = {}
    for path in sorted((src / reme.daily).rglob("*.md")) if (src / reme.daily).is_dir() else []:
        rel = path.relative_to(src).as_posix()
        try:
            source = parse_note(rel, path.read_text(encoding="utf-8")).metadata.get("source_resource")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            problems.append(f"{rel}: frontmatter not read ({exc})")
            continue
        if isinstance(source, str) and source.startswith("[[") and source.endswith("]]"):
            notes[source[2:-2]] = rel
    adopted, pending, stale = {}, {}, {}
    for rel, mtime in reme_store.catalog(meta, "resource", problems).items():
        if not (src / rel).is_file():
            continue
        if rel not in notes:
            pending[rel] = "ReMe wrote no note for it"
        elif not lost and not unchanged(src, rel, mtime):
            pending[rel] = "changed since ReMe converted it"
            stale[rel] = notes[rel]
        else:
            adopted[rel] = notes[rel]
    return adopted, pending, stale


def dreamt_notes(src: Path, meta: Path, reme: RemeLayout, problems: list[str],
                 graph_mtimes: dict[str, float], fresh: set[str]) -> tuple[list[str], dict[str, str]]:
    """(daily notes ReMe's dream consumed and unchanged since, {note: why it stays pending}):
    unchanged by mtime, or (mtimes lost) holding what ReMe indexed of the version it dreamt.
    Day-index pages (`daily/<date>.md`), which ReMe also checkpoints, are not notes here."""
    adopted, pending = [], {}
    for rel, mtime in reme_store.catalog(meta, "dream", problems).items():
        is_note = rel.startswith(f"{reme.daily}/") and rel.count("/") == 2 and date_of(rel)
        if not is_note or not (src / rel).is_file():
            continue
        indexed_as_dreamt = rel in fresh and abs(graph_mtimes.get(rel, -1.0) - mtime) < MTIME_SLACK
        if unchanged(src, rel, mtime) or indexed_as_dreamt:
            adopted.append(rel)
        else:
            pending[rel] = "changed since ReMe dreamt it"
    return adopted, pending


def reuse_vectors(report: ImportReport, settings: Settings, meta: Path, graph_mtimes: dict[str, float],
                  fresh: set[str], reme_model: str) -> None:
    """Seed the embedding cache with a vector for each chunk ReMe covered; count the rest."""
    keys = chunk_embedding_keys(settings)
    report.chunks = len(keys)
    theirs, report.reme_chunks, report.reme_vectors = reme_store.chunks_by_path(
        meta, {k["path"] for k in keys} & fresh, report.unreadable)
    dims = next((len(c["vector"]) for chunks in theirs.values() for c in chunks), 0)
    spaces = reme_store.cached_spaces(meta)
    model = settings.embedding_model
    report.reme_model = reme_model or (vector_reuse.identify_model(model, settings.model_api_base, dims, spaces)
                                       if model and dims else "")
    reason = vector_reuse.mismatch(model, known_dims(settings), report.reme_model, dims) if dims else ""
    provider, name = vector_reuse.split_model(report.reme_model or model)
    space = reme_store.vector_space_id(provider, name, dims, settings.model_api_base)
    cached = (reme_store.cached_vectors(meta, space, {k["text_sha"] for k in keys}, report.unreadable)
              if not reason and space in spaces else {})
    seeds: dict[str, list[float]] = {}
    for key in keys:
        if key["path"] not in graph_mtimes:
            why = "ReMe did not index this file"
        elif key["path"] not in fresh:
            why = "file changed since ReMe indexed it"
        elif reason or not dims:
            why = reason or "ReMe's chunks of this file have no vectors"
        else:
            kind, vector = vector_reuse.match(key, theirs.get(key["path"], []), cached)
            if vector is not None:
                seeds[key["text_sha"]] = vector
                setattr(report, f"reused_{kind}", getattr(report, f"reused_{kind}") + 1)
                continue
            why = "no ReMe chunk covers its lines"
        report.skipped[why] = report.skipped.get(why, 0) + 1
    if seeds:
        seed_embedding_cache(settings, model, dims, seeds)


def known_dims(settings: Settings) -> int | None:
    return settings.embedding_dimensions or None
