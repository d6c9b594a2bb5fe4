"""`memflow status`: what a user (or an agent's host) needs to know about a workspace at a
glance, read-only: index freshness and what it left out, each job's last run, the lock holder,
the dream backlog and interrupted runs, notes and chunks per layer, the models and (with
`deep`) whether each answers, and warnings to act on."""

from __future__ import annotations

import time

from memflow.schemas.settings import Settings
from memflow.tasks.capture import catalog_counts
from memflow.tasks.dream import NO_MANIFEST, list_runs, pending_notes
from memflow.tasks.ground.lock import JOBS_FILE, process_alive, read_holder
from memflow.tasks.ground.workspace import file_stats, layout, today
from memflow.tasks.index import index_problems, keyword_dir, other_snapshots, reindex_pending, watermark
from memflow.tasks.stores import keyword
from memflow.tasks.stores.files import read_json


def model_health(settings: Settings, deep: bool) -> dict:
    """Each configured model: its name and, with `deep`, one tiny call and how long it took; an
    embedding model whose vectors are not of the dimension the index holds is not ok (search
    cannot use them until a reindex embeds every chunk again)."""
    found = {}
    for role, model in (("chat", settings.chat_model), ("embedding", settings.embedding_model)):
        if not model:
            found[role] = {"model": "", "health": ("no model configured: nothing to call" if deep else
                                                   "off") + " (offline writer / keywords only)"}
            continue
        if not deep:
            found[role] = {"model": model, "health": "configured (not called; --deep calls it)"}
            continue
        started = time.perf_counter()
        try:
            if role == "chat":
                from memflow.tasks.ground.llm import chat

                chat(settings, [{"role": "user", "content": "Reply with OK."}], max_tokens=2)
            else:
                from memflow.tasks.index import embed_queries

                [vector] = embed_queries(settings, [f"health check {time.time()}"])
                held = _index_dims(settings)
                if held and len(vector) != held:
                    found[role] = {"model": model, "health": (
                        f"failed: it returns {len(vector)}-dim vectors, the index holds {held}-dim ones "
                        "(search answers from keywords only): run `memflow reindex` to embed every "
                        "chunk again")}
                    continue
            found[role] = {"model": model, "health": f"ok ({(time.perf_counter() - started) * 1000:.0f} ms)"}
        except Exception as exc:  # noqa: BLE001 - the health check reports, it does not fail
            found[role] = {"model": model, "health": f"failed: {str(exc).splitlines()[0][:200]}"}
    return found


def _index_dims(settings: Settings) -> int | None:
    """The dimension of the vectors the search index holds for the configured model, if any."""
    meta = keyword.read_meta(keyword_dir(layout(settings), settings)) or {}
    held = meta.get("vectors") or {}
    return int(held["dims"]) if held.get("model") == settings.embedding_model and held.get("dims") else None


def workspace_status(settings: Settings, deep: bool = False) -> dict:
    lay = layout(settings)
    warnings: list[str] = []
    mark = watermark(lay, walk=True)
    problems = index_problems(lay)
    reindexing = reindex_pending(lay)
    index = {**mark, "skipped": problems["skipped"], "warnings": problems["warnings"],
             "reindex_interrupted": reindexing}
    if mark.get("indexed_at") is None:
        warnings.append("no index yet: run `memflow index`")
    elif keyword.current_dir(keyword_dir(lay, settings)) is None \
            and (others := other_snapshots(lay, settings)):
        warnings.append(f"the search index was built for another tokenizer ({', '.join(others)}): "
                        "search finds nothing until `memflow index` rebuilds it")
    elif mark.get("stale"):
        warnings.append(f"{mark['changed_since']} file(s) changed since the last index run: run `memflow index`")
    if problems["skipped"]:
        warnings.append(f"{len(problems['skipped'])} file(s) not indexed (see index.skipped; `memflow check`)")
    if reindexing:
        warnings.append("a reindex was interrupted: the next `memflow index` finishes it")
    holder = read_holder(lay.state_dir)
    lock = None
    if holder is not None:
        lock = {**{k: holder.get(k) for k in ("job", "since", "pid", "host")}, "alive": process_alive(holder)}
        if not lock["alive"]:
            warnings.append(f"the lock is held by a process that is gone ({holder.get('job')}): the next "
                            "writing command takes it over")
    pending, _gone = pending_notes(lay, today(settings))
    runs = list_runs(lay)
    interrupted = [r["run_id"] for r in runs if r["status"] in ("interrupted", NO_MANIFEST)]
    if interrupted:
        warnings.append(f"{len(interrupted)} dream run(s) were killed: the next dream rolls them back")
    dream = {"backlog": len(pending), "last_run": runs[-1] if runs else None, "interrupted": interrupted}
    chunks = keyword.layer_counts(keyword_dir(lay, settings))
    layers = {
        "daily": {"notes": len(file_stats(lay, [lay.daily])), "chunks": chunks.get("daily", 0)},
        "digest": {"notes": len(file_stats(lay, [lay.digest])), "chunks": chunks.get("digest", 0)},
        "resource": {"files": len(file_stats(lay, [lay.resource], ("",))), "chunks": chunks.get("resource", 0)},
        "session": {"logs": len(file_stats(lay, [lay.session], (".jsonl",)))},
    }
    resources = catalog_counts(lay, settings.model_retry_seconds)
    if resources["waiting_to_retry"]:
        warnings.append(f"{resources['waiting_to_retry']} resource(s) failed on a model or network error and "
                        f"wait to retry (next after {resources['next_retry']}): `memflow resources` then")
    if resources["not_read"]:
        warnings.append(f"{len(resources['not_read'])} resource file(s) not read, each with its reason in "
                        "resources.not_read")
    jobs = read_json(lay.state_dir / JOBS_FILE, {}) or {}
    for job, run in sorted(jobs.items()):
        if run.get("result") == "failed" and not _done_since(jobs, job, run):
            warnings.append(f"the last {job} run failed: {run.get('error')}")
    models = model_health(settings, deep)
    warnings += [f"{role} model {m['model']} {m['health']}" for role, m in models.items()
                 if m["health"].startswith("failed")]
    return {"workspace": str(lay.root), "index": index, "jobs": jobs, "lock": lock, "dream": dream,
            "layers": layers, "resources": resources, "models": models, "warnings": warnings}


# a job whose successful run does all another does: a reindex rebuilds what an index run updates
COVERS = {"index": ("reindex",)}


def _done_since(jobs: dict, job: str, run: dict) -> bool:
    """Did a job that does all `job` does end well after `job` failed?"""
    return any(jobs.get(other, {}).get("result") == "ok"
               and str(jobs[other].get("finished", "")) >= str(run.get("finished", ""))
               for other in COVERS.get(job, ()))


__all__ = ["workspace_status", "model_health"]
