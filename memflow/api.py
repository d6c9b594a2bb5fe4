"""The public Python API: the same plain stage functions the CLI calls.

Every function takes `workspace`: a folder path, or a `Settings` for full control. Nothing here
starts Prefect; flows in `memflow.flows` wrap these stages for deployments.
"""

from __future__ import annotations

import logging

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memflow.schemas.settings import Settings, load_settings

WorkspaceArg = str | Path | Settings | None
# candidates a packed search reads at the least, whatever the budget: the lines that open the
# context (`recall.answers`) are picked among theirs, so a small budget still weighs the newest
ANSWER_POOL = 40


def settings_for(workspace: WorkspaceArg = None, **overrides: Any) -> Settings:
    if isinstance(workspace, Settings):
        return workspace.model_copy(update=overrides) if overrides else workspace
    return load_settings(workspace, **overrides)


def _layout(workspace: WorkspaceArg):
    from memflow.tasks.ground.workspace import layout

    return layout(settings_for(workspace))


def _locked(workspace: WorkspaceArg, job: str):
    """(layout, the workspace lock for `job`): file operations write under the lock like every
    other writing job, waiting `lock_wait` seconds before WorkspaceBusy."""
    from memflow.tasks.ground.lock import workspace_lock
    from memflow.tasks.ground.workspace import layout

    settings = settings_for(workspace)
    lay = layout(settings)
    return lay, workspace_lock(lay.state_dir, job, wait=settings.lock_wait)


@contextmanager
def _writing(workspace: WorkspaceArg, job: str) -> Iterator[Any]:
    """The workspace lock for `job` around a write (yields the layout): the files the write
    names in its events are indexed before the lock is released, so a write is searchable when
    the call returns (index.incremental: a delta segment, not a rebuild)."""
    from memflow.tasks.ground.events import recording_changes
    from memflow.tasks.ground.lock import workspace_lock
    from memflow.tasks.ground.workspace import layout
    from memflow.tasks.index import EmbeddingHealthError, index_paths

    settings = settings_for(workspace)
    lay = layout(settings)
    with workspace_lock(lay.state_dir, job, wait=settings.lock_wait), recording_changes() as changed:
        yield lay
        if changed:
            try:
                index_paths(settings, sorted(changed))
            except EmbeddingHealthError as exc:  # the write stands; the index says it is stale
                logging.getLogger("memflow").warning(
                    "%s: written, not yet searchable (the index was not updated: %s); run `memflow index` "
                    "when the embedding model answers", job, exc)


def init(workspace: WorkspaceArg) -> list[str]:
    """Create the workspace layers; returns the folders created."""
    from memflow.tasks.ground.workspace import init_workspace

    return init_workspace(_layout(workspace))


def read(path: str, start: int | None = None, end: int | None = None,
         workspace: WorkspaceArg = None) -> str:
    from memflow.tasks.ground.fileops import read_file

    settings = settings_for(workspace)
    return read_file(_layout(settings), path, start, end, settings.decode_errors)


def write(path: str, content: str, name: str | None = None, description: str | None = None,
          meta: dict | None = None, workspace: WorkspaceArg = None) -> str:
    """Create or overwrite a file (not under metadata/ or session/); returns its path."""
    from memflow.tasks.ground.fileops import write_file

    with _writing(workspace, "write") as lay:
        return write_file(lay, path, content, name, description, meta)


def edit(path: str, old: str, new: str, workspace: WorkspaceArg = None) -> None:
    """Replace the one occurrence of `old` with `new` in a file."""
    from memflow.tasks.ground.fileops import edit_file

    with _writing(workspace, "edit") as lay:
        edit_file(lay, path, old, new)


def move(src: str, dst: str, workspace: WorkspaceArg = None) -> list[str]:
    """Move a file and rewrite every link to it; returns the files rewritten."""
    from memflow.tasks.ground.fileops import move_file

    with _writing(workspace, "move") as lay:
        return move_file(lay, src, dst)


def delete(path: str, workspace: WorkspaceArg = None) -> list[str]:
    """Delete a file; returns the files that still link to it."""
    from memflow.tasks.ground.fileops import delete_file

    with _writing(workspace, "delete") as lay:
        return delete_file(lay, path)


def frontmatter_get(path: str, workspace: WorkspaceArg = None) -> dict:
    from memflow.tasks.ground.fileops import fm_get

    settings = settings_for(workspace)
    return fm_get(_layout(settings), path, settings.decode_errors)


def frontmatter_set(path: str, values: dict, workspace: WorkspaceArg = None) -> dict:
    """Set frontmatter keys (others kept in order); returns the new frontmatter."""
    from memflow.tasks.ground.fileops import fm_set

    with _writing(workspace, "fm-set") as lay:
        return fm_set(lay, path, values)


def index(workspace: WorkspaceArg = None, paths: list[str] | None = None):
    """Incremental index (takes the workspace lock); returns an IndexSummary. With `paths`, just
    those files (added, changed or gone; published as a delta segment when small), else every
    changed file of the workspace (a scan, and the search snapshot compacted)."""
    from memflow.tasks.ground.lock import workspace_lock
    from memflow.tasks.ground.workspace import layout
    from memflow.tasks.index import index_paths, run_index

    settings = settings_for(workspace)
    with workspace_lock(layout(settings).state_dir, "index", wait=settings.lock_wait):
        return index_paths(settings, paths) if paths else run_index(settings)


def reindex(workspace: WorkspaceArg = None):
    """Delete metadata/index/ and rebuild it from the files; returns an IndexSummary."""
    from memflow.tasks.ground.lock import workspace_lock
    from memflow.tasks.ground.workspace import layout
    from memflow.tasks.index import run_reindex

    settings = settings_for(workspace)
    with workspace_lock(layout(settings).state_dir, "reindex", wait=settings.lock_wait):
        return run_reindex(settings)


def search(query: str, workspace: WorkspaceArg = None, limit: int = 5, min_score: float = 0.0,
           layer: str | None = None, prefix: str | None = None, since=None, until=None,
           include_day_index: bool = False, explain: bool = False, superseded: bool = False,
           budget_tokens: int | None = None, as_of=None, tags: list[str] | None = None,
           speaker: str | None = None):
    """Hybrid search; returns a SearchResponse (`.results`, `.watermark`, hit counts).

    `budget_tokens=N`: also `.packed`, what fits in N tokens (cl100k, as the evaluation counts):
    each hit's lines that match the query best and their neighbours, with its heading path and
    its source written once, hits added in rank order until the budget is full (more hits are
    fetched than `limit` to fill it); `.results` are then the hits packed, in the same order,
    with their links.

    `tags`: only notes whose frontmatter carries every one of them (any case, `#` optional);
    tags are searchable words too, and a note's name, description and tags rank above its body.
    `speaker`: only chunks with a line that speaker said (a transcript's `Name: ...`, a daily
    note's `- Name: ...` or `Said by Name` section). Who said a line is not a search word: a
    query's word counts as a speaker only when it names one ("what did Mara say about ...").

    `since`/`until` are dates (or ISO strings), inclusive, matched against each chunk's date: a
    note's (its path), a transcript's (its messages), a digest fact line's (the date it states;
    a digest hit keeps only the fact lines inside). `as_of` answers as memory stood that day:
    facts stated later are hidden, a value replaced later is shown as the current one. A
    question naming a time ("last week", "in May", "昨天") boosts what is dated then
    (`time_weight`, resolved in the workspace timezone).
    A digest fact and the daily line it came from are one hit. A line the digest has replaced
    (as of `as_of`, if given) stays searchable with the rest of its note or transcript window,
    labelled `(replaced DATE)`; a hit matching only on such lines ranks below hits with current
    matches (`superseded=True` ranks them as if current). Packed, every line shows its date and,
    of lines answering the same question with different values, the newest comes first.
    """
    from memflow.schemas.recall import Filters
    from memflow.tasks.recall import search as run_search

    kinds = ("note", "session", "day_index") if include_day_index else ("note", "session")
    filters = Filters(layer=layer, prefix=prefix, since=since, until=until, kinds=kinds,
                      superseded=superseded, as_of=as_of, tags=tuple(tags or ()),
                      speaker=speaker or None)
    settings = settings_for(workspace)
    if not budget_tokens:
        return run_search(settings, query, limit, min_score, filters, explain)
    from memflow.tasks.ground.tokens import block_floor, count_line_tokens, count_tokens, least_tokens
    from memflow.tasks.recall import (
        answer_head,
        asked_window,
        attach_links,
        follow_values,
        hit_packer,
        line_citations,
        term_weights,
    )

    # enough candidates to fill the budget; links only for the hits that make it into the context
    response = run_search(settings, query, max(limit, budget_tokens // 20, ANSWER_POOL), min_score, filters, explain,
                          link_limit=0)
    head = answer_head(settings, query, filters.as_of)
    candidates = response.results + (follow_values(settings, query, response.results, filters) if head else [])
    hits = hit_packer(candidates, term_weights(settings, query), count_line_tokens,
                      settings.keyword_tokenizer, settings.pack_neighbours,
                      asked_window(settings, query, filters.as_of), line_citations(settings),
                      block_floor, least_tokens, head)(budget_tokens)
    results = [candidates[i] for i, _ in hits]
    attach_links(settings, results, filters=filters)
    packed = [text for _, text in hits]
    return response.model_copy(update={"results": results, "packed": packed,
                                       "packed_tokens": count_tokens("\n\n".join(packed))})


def recent(workspace: WorkspaceArg = None, days: float = 7.0, limit: int = 20,
           layer: str | None = None) -> list[dict]:
    """Notes and resources changed in the last `days`, newest first (path, name, description,
    modified)."""
    from memflow.tasks.recall import recent_notes

    return recent_notes(settings_for(workspace), days, limit, layer)


def context(path: str, workspace: WorkspaceArg = None, depth: int = 1, limit: int = 30) -> dict:
    """A note's text plus the notes it links to and that link to it, to `depth` hops."""
    from memflow.tasks.recall import note_context

    return note_context(settings_for(workspace), path, depth, limit)


def auto_memory_search(message: str, workspace: WorkspaceArg = None, max_results: int = 2,
                       min_score: float | None = None) -> list[dict]:
    """For agent hosts: search with the first 100 characters of a user message and return an
    assistant `tool_calls` message plus the `tool` message answering it (OpenAI format)."""
    from memflow.tasks.recall import tool_call_messages

    query = " ".join(message.split())[:100]
    response = search(query, workspace, limit=max_results, min_score=min_score or 0.0)
    return tool_call_messages(query, response, max_results)


def capture(messages: list[dict], session_id: str, workspace: WorkspaceArg = None,
            memory_hint: str = "", date=None, skip_invalid: bool = False):
    """auto_memory: a conversation -> session log + daily notes; returns AutoMemoryResult.

    Every message is validated first: a bad one raises InvalidMessages naming it and nothing is
    written, unless `skip_invalid` (then it is left out and listed in `result.skipped`).
    Uses the configured chat model, or the offline extractive writer when none is set. Direct
    calls make one model attempt; the `capture` Prefect flow retries (see memflow.flows.capture).
    """
    from datetime import date as date_type

    from memflow.tasks.capture import auto_memory, check_messages
    from memflow.tasks.ground.events import note_changed

    settings = settings_for(workspace)
    day = date_type.fromisoformat(date) if isinstance(date, str) else date
    writer = None
    if settings.chat_model:
        from memflow.tasks.capture import model_writer

        writer = model_writer(settings)
    check_messages(messages, skip_invalid)  # a rejected conversation takes no lock, writes nothing
    with _writing(settings, "capture"):
        result = auto_memory(settings, messages, session_id, memory_hint, day, writer, skip_invalid)
        if result.new_messages:  # the session log is searched too (as a transcript)
            note_changed([result.source_conversation.strip("[]")])
        return result


def capture_resources(workspace: WorkspaceArg = None):
    """auto_resource: changed files under resource/ -> daily notes; returns ResourceResult."""
    from functools import partial

    from memflow.tasks.capture import auto_resource

    settings = settings_for(workspace)
    reader = None
    if settings.chat_model:
        from memflow.tasks.capture import read_with_model

        reader = partial(read_with_model, settings)
    with _writing(settings, "capture_resources"):
        return auto_resource(settings, reader)


def inbox(workspace: WorkspaceArg = None, since: str | None = None) -> list[dict]:
    from memflow.tasks.ground.events import read_events

    return read_events(_layout(workspace), since)


def dream(workspace: WorkspaceArg = None, date=None, hint: str = "", max_units: int = 500,
          max_notes: int = 200, topic_count: int = 3, topic_diversity_days: int = 7,
          max_seconds: float = 0.0):
    """Consolidate pending daily notes into digest nodes now, within the run's budget (units,
    notes, seconds; whole notes only); returns a DreamSummary whose `notes_left` is the backlog.
    Raises DreamStalled when notes were pending and none could be consumed."""
    from datetime import date as date_type
    from functools import partial

    from memflow.tasks.dream import run_dream
    from memflow.tasks.ground.lock import workspace_lock
    from memflow.tasks.ground.workspace import layout, today

    settings = settings_for(workspace)
    day = date_type.fromisoformat(date) if isinstance(date, str) else (date or today(settings))
    extract = decide = None
    if settings.chat_model:
        from memflow.tasks.dream import decide_with_model, extract_with_model

        extract = partial(extract_with_model, settings, hint=hint)
        decide = partial(decide_with_model, settings)
    with workspace_lock(layout(settings).state_dir, "dream", wait=settings.lock_wait):
        return run_dream(settings, day, hint, max_units, max_notes, topic_count,
                         topic_diversity_days, extract, decide, max_seconds)


def dream_migrate(workspace: WorkspaceArg = None):
    """Rewrite digest nodes of the earlier format (claims plus a `## Sources` copy of each) into
    fact lines, as one reversible dream run; returns a DreamSummary."""
    from memflow.tasks.dream import migrate_nodes
    from memflow.tasks.ground.lock import workspace_lock
    from memflow.tasks.ground.workspace import layout

    settings = settings_for(workspace)
    with workspace_lock(layout(settings).state_dir, "dream-migrate", wait=settings.lock_wait):
        return migrate_nodes(settings)


def dream_runs(workspace: WorkspaceArg = None) -> list[dict]:
    from memflow.tasks.dream import list_runs

    return list_runs(_layout(workspace))


def dream_rollback(run_id: str, workspace: WorkspaceArg = None, force: bool = False) -> list[str]:
    """Restore the pre-images of a dream run and delete the nodes it created; returns one line
    per file, `restored PATH` or `deleted PATH`."""
    from memflow.tasks.dream import catalog_path, rollback
    from memflow.tasks.ground.lock import workspace_lock
    from memflow.tasks.ground.workspace import layout
    from memflow.tasks.index import run_index

    settings = settings_for(workspace)
    lay = layout(settings)
    with workspace_lock(lay.state_dir, "dream-rollback", wait=settings.lock_wait):
        restored = rollback(lay, run_id, catalog_path(lay), force)
        run_index(settings)
    return restored


def proactive(workspace: WorkspaceArg = None, date=None) -> dict:
    from datetime import date as date_type

    from memflow.tasks.dream import proactive as read_topics
    from memflow.tasks.ground.workspace import today

    settings = settings_for(workspace)
    day = date_type.fromisoformat(date) if isinstance(date, str) else (date or today(settings))
    return read_topics(settings, day)



def profile(workspace: WorkspaceArg = None, budget_tokens: int = 300) -> dict:
    """Who the user is, for a system prompt: the current facts about the user and the people
    they named (from the digest, then daily statements no later one speaks to), newest first,
    each with its date and source link, within `budget_tokens` (cl100k). With a chat model set,
    the model words the profile from those facts, each line checked against the facts it cites
    (`tasks.dream.profile.model_profile`); without one no model is called.
    Returns {"text": Markdown, "facts": [{"date", "who", "text", "source"}]}."""
    from dataclasses import asdict

    from memflow.tasks.dream import build_profile

    settings = settings_for(workspace)
    text, facts = build_profile(_layout(settings), settings, budget_tokens)
    return {"text": text, "facts": [asdict(f) for f in facts]}


def evaluate(data: str | Path, out: str | Path, ks: tuple[int, ...] = (1, 5, 10, 20),
             budgets: tuple[int, ...] = (250, 500, 1000, 2000), dream: bool = False,
             samples: list[str] | None = None, **overrides: Any) -> dict:
    """The LoCoMo retrieval evaluation in this process (`memflow eval locomo`); returns the summary."""
    from memflow.tasks.evaluate import run_evaluation

    settings = settings_for(Path(out), **overrides)
    return run_evaluation(Path(data), Path(out), settings, list(ks), list(budgets), dream, samples)


def fleet(job: str, roots: str | list[str], **options: Any):
    """One job ("index", "dream" or "resources") over every workspace under `roots`
    (`memflow fleet`: a Prefect flow, options as its keyword arguments); returns its summary."""
    from memflow.flows import fleet as flows

    jobs = {"index": flows.fleet_index, "dream": flows.fleet_dream,
            "resources": flows.fleet_capture_resources}
    if job not in jobs:
        raise ValueError(f"unknown fleet job {job!r}: expected one of {', '.join(jobs)}")
    return jobs[job](roots, **options)


def backup(out: str | Path, workspace: WorkspaceArg = None, with_index: bool = False) -> dict:
    """Write the workspace to `out` (.tar.zst: Markdown, session logs, resources and
    metadata/state/; the derived index with `with_index`), with a manifest of sha256s, under the
    workspace lock; returns the manifest."""
    from memflow.tasks.backup import backup_workspace

    lay, lock = _locked(workspace, "backup")
    with lock:
        return backup_workspace(lay, Path(out).expanduser(), with_index)


def restore(archive: str | Path, target: str | Path) -> dict:
    """Unpack `archive` into the new folder `target` after checking every file against its
    manifest; a truncated or corrupt archive raises ArchiveError and leaves nothing. Run
    `index` on the restored workspace to search it (its index is derived)."""
    from memflow.tasks.backup import restore_workspace

    manifest = restore_workspace(Path(archive).expanduser(), Path(target).expanduser())
    init(Path(target).expanduser())  # layer folders that held no file
    return manifest


def import_reme(source: str | Path, into: str | Path | None = None, dry_run: bool = False,
                reme_model: str = "", **overrides: Any):
    """Import a ReMe or QwenPaw workspace: with `into`, copy its layers into that new folder;
    without, adopt `source` in place (writing only memflow.toml and metadata/). Reuses ReMe's
    vectors when its embedding model (found in its metadata or given as `reme_model`) and
    dimension are the configured ones, and its resource and dream catalogs; `overrides` are
    settings for the new workspace (e.g. embedding_model). Returns an ImportReport."""
    from memflow.schemas.settings import CONFIG_FILE
    from memflow.tasks.ground.lock import workspace_lock
    from memflow.tasks.ground.workspace import layout
    from memflow.tasks.imports import detect_layout, import_workspace

    src = Path(source).expanduser().resolve()
    reme = detect_layout(src)
    target = Path(into).expanduser().resolve() if into else src
    if into and (target.is_relative_to(src) or (target.exists() and any(target.iterdir()))):
        raise ValueError(f"{target}: --into needs a new or empty folder outside the source")
    folders = {"daily_dir": reme.daily, "session_dir": reme.session, "digest_dir": reme.digest,
               "resource_dir": reme.resource}
    keep_toml = (target / CONFIG_FILE).exists()  # the user's settings win over what was detected
    settings = settings_for(target, **({} if keep_toml else folders), **overrides)
    if dry_run:
        return import_workspace(src, reme, settings, bool(into), reme_model, dry_run=True)
    lay = layout(settings)
    with workspace_lock(lay.state_dir, "import", wait=settings.lock_wait):
        return import_workspace(src, reme, settings, bool(into), reme_model)


def status(workspace: WorkspaceArg = None, deep: bool = False) -> dict:
    """The workspace at a glance (read-only, no lock): index freshness and skipped files, each
    job's last run, the lock holder, the dream backlog, counts per layer, the models (`deep`:
    one tiny call each) and warnings to act on."""
    from memflow.tasks.check import workspace_status

    return workspace_status(settings_for(workspace), deep)


def check(workspace: WorkspaceArg = None, repair: bool = False):
    """Check a workspace (notes parse, index matches files, links resolve, dream runs coherent,
    state consistent); with `repair`, fix what is safe (takes the lock). Returns a CheckReport."""
    from memflow.tasks.check import check_workspace
    from memflow.tasks.ground.lock import workspace_lock
    from memflow.tasks.ground.workspace import layout

    settings = settings_for(workspace)
    if not repair:
        return check_workspace(settings)
    with workspace_lock(layout(settings).state_dir, "check-repair", wait=settings.lock_wait):
        return check_workspace(settings, fix=True)


def forget(workspace: WorkspaceArg = None, session: str | None = None, note: str | None = None,
           match: str | None = None, dry_run: bool = False) -> list[str]:
    """Remove a session, a daily note or every mention of a text from session logs, daily
    notes, digest nodes (the user's too), text resources, file names, state and the index (no
    old version kept), and keep salted-hash tombstones so later captures do not bring it back
    (they report what they stopped or trimmed). With `match`, the sentences that state it go,
    not their message or line. A forget killed before is finished first (its saved plan). Returns
    what changes (`dry_run`: what would, each file followed by the exact texts that would go,
    indented; nothing written)."""
    from memflow.tasks.forget import PLAN_FILE, apply_forget, finish_pending, plan_forget
    from memflow.tasks.ground.lock import workspace_lock
    from memflow.tasks.ground.workspace import layout

    if sum(x is not None and x != "" for x in (session, note, match)) != 1:
        raise ValueError("forget takes exactly one of session, note, match")
    settings = settings_for(workspace)
    with workspace_lock(layout(settings).state_dir, "forget", wait=settings.lock_wait, record=not dry_run):
        # a forget killed before (its saved plan, temp files) is finished first, as planned then
        said = [] if dry_run else finish_pending(settings)
        if dry_run and (layout(settings).state_dir / PLAN_FILE).exists():
            said = ["finish first the plan a killed forget saved (what follows is planned from the "
                    "files as that forget left them)"]
        plan = plan_forget(settings, session, note, match)
        if plan.empty():
            return said
        if not dry_run:
            apply_forget(settings, plan)
        return said + plan.lines(texts=dry_run)
