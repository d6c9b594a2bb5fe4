"""CLI command bodies: parse arguments into calls of `memflow.api` and print results."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memflow import api, views
from memflow.errors import EXIT_BUSY, EXIT_ERROR, describe_error  # noqa: F401 - cli.main uses them


def dispatch(args: argparse.Namespace) -> int:
    """Run a parsed command (a cold CLI call, or `memflow serve` answering a warm one); an error
    becomes one line and its exit code."""
    try:
        return globals()[f"cmd_{args.command}"](args) or 0
    except BrokenPipeError:  # the reader stopped reading (`| head`, `| grep -q`): not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 - the CLI boundary turns errors into one line
        message, code = describe_error(exc)
        if message is None:
            raise
        print(message, file=sys.stderr)
        return code


def dump_json(value: object) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def answer(args: argparse.Namespace, value: object, words: str) -> int:
    """Print a result: `value` as JSON with --json, else `words` for a person; exit 0."""
    if args.json:
        dump_json(value)
    else:
        print(words)
    return 0


def workspace_of(args: argparse.Namespace) -> Path:
    return Path(args.workspace or ".")


def cmd_init(args: argparse.Namespace) -> int:
    target = Path(args.dir) if args.dir else workspace_of(args)
    created = api.init(target)
    root = target.resolve()
    if args.json:
        dump_json({"workspace": str(root), "created": created})
        return 0
    print(f"workspace: {root}")
    for rel in created:
        print(f"  created {rel}/")
    return 0


def cmd_read(args: argparse.Namespace) -> int:
    text = api.read(args.path, args.start, args.end, workspace_of(args))
    if args.json:
        dump_json({"path": args.path, "start_line": args.start, "end_line": args.end, "text": text})
        return 0
    sys.stdout.write(text)
    return 0


def cmd_write(args: argparse.Namespace) -> int:
    from memflow.tasks.ground.fileops import parse_assignments

    if args.file is not None:
        content = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    else:
        content = args.content
    meta = parse_assignments(args.meta)
    rel = api.write(args.path, content, args.name, args.description, meta, workspace_of(args))
    return answer(args, {"path": rel, "detail": "written"}, f"wrote {rel}")


def cmd_edit(args: argparse.Namespace) -> int:
    api.edit(args.path, args.old, args.new, workspace_of(args))
    return answer(args, {"path": args.path, "detail": "edited"}, f"edited {args.path}")


def cmd_move(args: argparse.Namespace) -> int:
    rewritten = api.move(args.src, args.dst, workspace_of(args))
    if args.json:
        dump_json({"src": args.src, "dst": args.dst, "relinked": rewritten})
        return 0
    print(f"moved {args.src} -> {args.dst}")
    for rel in rewritten:
        print(f"  rewrote links in {rel}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    still = api.delete(args.path, workspace_of(args))
    if args.json:
        dump_json({"path": args.path, "still_linked_from": still})
        return 0
    print(f"deleted {args.path}")
    for rel in still:
        print(f"  still linked from {rel}")
    return 0


def cmd_fm(args: argparse.Namespace) -> int:
    from memflow.tasks.ground.fileops import parse_assignments

    if args.fm_command == "get":
        values = api.frontmatter_get(args.path, workspace_of(args))
    else:
        values = api.frontmatter_set(args.path, parse_assignments(args.pairs), workspace_of(args))
    return answer(args, values, views.frontmatter_text(values))


def cmd_recent(args: argparse.Namespace) -> int:
    notes = api.recent(workspace_of(args), args.days, args.limit, args.layer)
    return answer(args, {"notes": notes}, "\n".join(views.recent_lines(notes)))


def cmd_context(args: argparse.Namespace) -> int:
    found = api.context(args.path, workspace_of(args), args.depth, args.limit)
    return answer(args, found, views.context_text(found))


def use_prefect(args: argparse.Namespace) -> bool:
    import os

    return bool(args.prefect or os.environ.get("PREFECT_API_URL"))


def progress_bar(label: str, bars: list):
    """A progress factory for run_index: the job's Progress (memflow.progress), kept in `bars`
    for the caller to close."""
    def factory(total: int, unit: str = "file"):
        from memflow.progress import Progress

        bars.append(Progress(label if unit == "file" else f"{label}: embedding", total, unit))
        return bars[-1].update
    return factory


def _index(args: argparse.Namespace, full: bool) -> int:
    settings = api.settings_for(workspace_of(args))
    if use_prefect(args):
        from memflow.flows.index import index_flow, reindex_flow
        from memflow.schemas.tables import IndexSummary

        result = (reindex_flow if full else index_flow)(str(settings.workspace))
        summary = IndexSummary(**result)
    else:
        from memflow.tasks.ground.lock import workspace_lock
        from memflow.tasks.ground.workspace import layout
        from memflow.tasks.index import run_index, run_reindex

        bars: list = []
        try:
            with workspace_lock(layout(settings).state_dir, "reindex" if full else "index",
                                wait=settings.lock_wait):
                summary = (run_reindex if full else run_index)(settings, progress_bar(args.command, bars))
        finally:
            for bar in bars:
                bar.close()
    if args.json:
        dump_json(summary.model_dump())
    else:
        print(summary.line())
        for line in summary.problems():
            print(line, file=sys.stderr)
    if summary.skipped:
        print(f"warning: {len(summary.skipped)} file(s) not indexed (reasons above; fix or remove "
              "them and they are retried)", file=sys.stderr)
        return EXIT_ERROR if args.strict else 0
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    return _index(args, full=False)


def cmd_reindex(args: argparse.Namespace) -> int:
    return _index(args, full=True)


def cmd_search(args: argparse.Namespace) -> int:
    import logging

    from memflow.tasks.recall import render_response

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    response = api.search(args.query, workspace_of(args), args.limit, args.min_score, args.layer,
                          args.prefix, args.since, args.until, args.all_kinds, args.explain,
                          args.superseded, args.budget, as_of=args.as_of, tags=args.tag,
                          speaker=args.speaker)
    print(f"vector_hits={response.vector_hits} keyword_hits={response.keyword_hits}", file=sys.stderr)
    for warning in response.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    mark = response.watermark
    if mark.get("stale"):  # the MCP tool says it too (index_stale)
        print(f"warning: stale index: {mark.get('changed_since') or 'some'} file(s) changed since it "
              f"last ran ({mark.get('indexed_at') or 'never'}); results may miss them: run "
              "`memflow index`", file=sys.stderr)
    if args.json:
        print(response.model_dump_json(indent=2, exclude_none=False))
    elif args.budget:
        print("\n\n".join(response.packed or ["no results"]))
        print(f"({response.packed_tokens} of {args.budget} tokens)", file=sys.stderr)
    else:
        print(render_response(response, args.explain))
    return 0


def read_messages(source: str) -> list[dict]:
    """A JSON list or JSONL of messages, from a file or '-' for stdin."""
    import json

    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    stripped = text.strip()
    if not stripped:
        raise ValueError(f"{source}: no messages")
    from memflow.tasks.ground.guard import check_json_depth

    check_json_depth(stripped, "stdin" if source == "-" else source)
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as whole:
        if "\n" not in stripped:
            raise ValueError(f"{source}: not JSON ({whole.msg} at line {whole.lineno} column "
                             f"{whole.colno})") from whole
        messages = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    messages.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{source}: line {number} is not JSON ({exc.msg}); a JSONL file "
                                     "has one message object per line") from exc
        return messages
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return data["messages"]
    if isinstance(data, dict) and "role" in data:
        return [data]  # JSONL of one message
    if not isinstance(data, list):
        raise ValueError(f"{source}: expected a JSON list of messages (or JSONL), got a JSON "
                         f"{type(data).__name__}")
    return data


def cmd_capture(args: argparse.Namespace) -> int:
    messages = read_messages(args.file)
    settings = api.settings_for(workspace_of(args))
    if use_prefect(args):
        from datetime import date

        from memflow.flows.capture import capture_flow

        day = date.fromisoformat(args.date) if args.date else None
        result = capture_flow(str(settings.workspace), messages, args.session, args.hint, day,
                              args.skip_invalid)
    else:
        result = api.capture(messages, args.session, settings, args.hint, args.date,
                             args.skip_invalid)
    if args.json:
        print(result.model_dump_json(indent=2))
        return 0
    stopped = f", {result.stopped} stopped by forget tombstones" if result.stopped else ""
    stopped += f", {result.trimmed} logged without the sentences forget removed" if result.trimmed else ""
    stopped += f", {result.secrets_masked} secret(s) masked" if result.secrets_masked else ""
    print(f"session log: {result.source_conversation} (+{result.new_messages} message(s){stopped})")
    for line in result.skipped:
        print(f"  skipped {line}", file=sys.stderr)
    for note in result.notes:
        state = "created" if note.created else "updated" if note.modified else "unchanged"
        print(f"  {note.date}: {note.path or 'nothing worth keeping'} ({state})")
    if not result.notes:
        print("  no new messages")
    return 0


def cmd_resources(args: argparse.Namespace) -> int:
    settings = api.settings_for(workspace_of(args))
    if use_prefect(args):
        from memflow.flows.capture import capture_resources_flow

        result = capture_resources_flow(str(settings.workspace))
    else:
        from memflow.progress import activity

        with activity("resources"):
            result = api.capture_resources(settings)
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        for label in ("created", "updated", "removed"):
            for rel in getattr(result, label):
                print(f"{label}: {rel}")
        for rel, why in result.skipped.items():
            print(f"skipped: {rel}: {why}")
        for rel, why in result.refused.items():  # said once; re-running cannot help: not an error
            print(f"refused: {rel}: {why}", file=sys.stderr)
        for rel, error in result.failed.items():
            print(f"failed: {rel}: {error}", file=sys.stderr)
        if result.waiting:
            print(f"{len(result.waiting)} waiting to retry after a model or network failure (next after "
                  f"{min(result.waiting.values())})", file=sys.stderr)
        print(f"resources: created={len(result.created)} updated={len(result.updated)} "
              f"removed={len(result.removed)} skipped={len(result.skipped)} refused={len(result.refused)}"
              f" failed={len(result.failed)} waiting={len(result.waiting)}")
    return 1 if result.failed else 0  # exit 1: something that should have worked did not (docs/health.md)


def cmd_inbox(args: argparse.Namespace) -> int:
    events = api.inbox(workspace_of(args), args.since)
    return answer(args, {"events": events}, "\n".join(views.inbox_lines(events)))


def cmd_dream(args: argparse.Namespace) -> int:
    if args.dream_command == "runs":
        runs = api.dream_runs(workspace_of(args))
        return answer(args, {"runs": runs}, "\n".join(views.runs_lines(runs)))
    if args.run_id and args.dream_command != "rollback":
        raise ValueError(f"dream {args.dream_command} takes no RUN_ID ({args.run_id!r}); "
                         "`memflow dream rollback RUN_ID` undoes a run")
    if args.dream_command == "migrate":
        summary = api.dream_migrate(workspace_of(args))
        for rel, why in sorted(summary.skipped.items()):
            print(f"  skipped {rel}: {why}", file=sys.stderr)
        print(summary.model_dump_json(indent=2) if args.json else
              f"migrated {len(summary.files_written)} node(s) to fact lines in run {summary.run_id}"
              f" (undo: memflow dream rollback {summary.run_id})" if summary.run_id else
              "nothing to migrate: every digest node has fact lines")
        return 0
    if args.dream_command == "rollback":
        if not args.run_id:
            raise ValueError("usage: memflow dream rollback RUN_ID [--force]")
        changes = api.dream_rollback(args.run_id, workspace_of(args), args.force)
        if args.json:
            dump_json({"run_id": args.run_id, "changes": changes})
            return 0
        for line in changes:
            print(line)
        return 0
    settings = api.settings_for(workspace_of(args))
    if use_prefect(args):
        from memflow.flows.dream import dream_flow

        summary = dream_flow(str(settings.workspace), args.date or "", args.hint, args.max_units,
                             args.max_notes, max_seconds=args.max_seconds)
    else:
        from memflow.progress import activity

        with activity("dream"):
            summary = api.dream(settings, args.date, args.hint, args.max_units, args.max_notes,
                                max_seconds=args.max_seconds)
    if args.json:
        print(summary.model_dump_json(indent=2))
        return 0
    print_dream(summary)
    return 0


def print_dream(summary) -> None:
    for rel, why in sorted(summary.skipped.items()):
        print(f"  skipped {rel}: {why}", file=sys.stderr)
    if summary.status == "no change":
        print(f"dream {summary.date}: no change (no new or changed daily notes)")
        return
    actions = " ".join(f"{k}={v}" for k, v in sorted(summary.actions.items()))
    print(f"dream {summary.date}: run {summary.run_id} read {summary.notes_read} note(s), "
          f"{summary.units} unit(s): {actions or 'no action'}")
    for rel in summary.files_written:
        print(f"  wrote {rel}")
    for unit, error in summary.failed_units.items():
        print(f"  failed {unit}: {error}", file=sys.stderr)
    print(f"  consumed {summary.notes_consumed} note(s); backlog: {summary.notes_left} notes")


def cmd_proactive(args: argparse.Namespace) -> int:
    found = api.proactive(workspace_of(args), args.date)
    return answer(args, found, "\n".join(views.proactive_lines(found)))


def cmd_demo(args: argparse.Namespace) -> int:
    from memflow.demo_loop import demo

    demo(args.dir, keep=args.keep)
    return 0


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise ValueError(f"expected comma-separated integers, got {text!r}") from exc


def cmd_eval(args: argparse.Namespace) -> int:
    from memflow.tasks.ground.fileops import parse_assignments

    if args.eval_command == "memright":
        return _eval_memright(args)
    overrides = parse_assignments(args.set)
    settings = api.settings_for(Path(args.out), **overrides)
    if args.eval_command == "techchat":
        args.data = str(_techchat_data(args))
    ks, budgets = _ints(args.k), _ints(args.budgets)
    samples = [s.strip() for s in args.samples.split(",")] if args.samples else None
    from memflow.tasks.evaluate import parse_grid

    grid = parse_grid(args.grid) or None
    if use_prefect(args) or args.runner:
        from memflow.flows.evaluate import evaluate_flow

        summary = evaluate_flow(args.data, args.out, ks, budgets, args.dream, samples, overrides,
                                grid, args.runner or "", args.workers, args.address)
    else:
        import json as _json

        from memflow.progress import progress
        from memflow.tasks.evaluate import run_evaluation

        data = _json.loads(Path(args.data).read_text(encoding="utf-8"))
        import math

        total = sum(len(s["qa"]) for s in data if not samples or s["sample_id"] in samples)
        total *= math.prod(len(values) for values in (grid or {}).values())  # every combination asks them all
        with progress("eval", total, "question") as bar:
            summary = run_evaluation(Path(args.data), Path(args.out), settings, ks, budgets,
                                     args.dream, samples, bar.update, grid=grid)
    if args.json:
        dump_json(summary)
        return 0
    for part in summary.get("grid") or [{"settings": {}, "summary": summary}]:
        if part["settings"]:
            print(" ".join(f"{k}={v}" for k, v in part["settings"].items()))
        print_eval({**part["summary"], "run": summary["run"]}, args.out)
    return 0


def _eval_memright(args: argparse.Namespace) -> int:
    """`eval memright`: every scenario scored in this process, then the table (or --json)."""
    from memflow.progress import progress
    from memflow.tasks.evaluate import memright_questions, memright_report, run_memright
    from memflow.tasks.ground.fileops import parse_assignments

    overrides = parse_assignments(args.set)
    settings = api.settings_for(Path(args.out), **overrides)
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()] if args.scenarios else None
    data = Path(args.data)
    with progress("eval memright", memright_questions(data, scenarios), "question") as bar:
        summary = run_memright(data, Path(args.out), settings, _ints(args.budgets), packed_search,
                               args.dream, scenarios, overrides, bar.update)
    if args.json:
        dump_json(summary)
    else:
        print("\n".join(memright_report(summary, args.out)))
    return 0


def packed_search(settings, question: str, budget: int, as_of: str | None) -> str:
    """The context an agent gets: `api.search`'s packed blocks, joined by blank lines."""
    return "\n\n".join(api.search(question, settings, budget_tokens=budget, as_of=as_of).packed)


def _techchat_data(args: argparse.Namespace) -> Path:
    """The generated set of `eval techchat`, written as LoCoMo JSON into the output folder."""
    from memflow.tasks.evaluate import techchat
    from memflow.tasks.stores.files import atomic_write_json

    path = Path(args.out) / "techchat.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, techchat(args.seed, args.conversations, args.sessions, args.projects))
    return path


def cmd_fleet(args: argparse.Namespace) -> int:
    """Exit 0 when every workspace's job ended ok, 75 when some were only busy, 1 on a failure.
    Without --prefect or PREFECT_API_URL the fleet runs in a local process pool, no Prefect."""
    roots: str | list[str] = args.roots[0] if len(args.roots) == 1 else args.roots
    options = ({"date": args.date, "max_units": args.max_units, "max_notes": args.max_notes}
               if args.fleet_command == "dream" else {})
    if use_prefect(args):
        summary = _fleet_flow(args, roots, options)
    else:
        summary = _fleet_local(args, roots, options)
    if args.json:
        print(summary.model_dump_json(indent=2))
    else:
        for o in summary.outcomes:
            backlog = "" if o.backlog is None else f" backlog={o.backlog}"
            print(f"{o.status:<7} {o.seconds:7.2f}s  {o.workspace}  {o.changed}{backlog}"
                  + (f"  {o.error}" if o.error else ""))
        print(summary.line())
    return EXIT_ERROR if summary.count("failed") else EXIT_BUSY if summary.count("busy") else 0


def _fleet_local(args: argparse.Namespace, roots, options: dict):
    from memflow.tasks.fleet import run_local_fleet

    if args.runner == "dask" or args.address:
        raise ValueError("a Dask fleet runs as a Prefect flow: its workers report to a Prefect "
                         "server (start one, set PREFECT_API_URL); on one machine use --runner local")
    from memflow.progress import progress
    from memflow.tasks.fleet import find_workspaces

    workers = 1 if args.runner == "serial" else args.workers
    found = find_workspaces(roots)  # once: the pool gets the list
    with progress(f"fleet {args.fleet_command}", len(found), "workspace") as bar:
        return run_local_fleet(args.fleet_command, found or roots, workers, jitter_seconds=args.jitter,
                               options=options, done=lambda _: bar.update(1))


def _fleet_flow(args: argparse.Namespace, roots, options: dict):
    import os

    if not os.environ.get("PREFECT_API_URL") and args.runner != "serial":
        raise ValueError(f"--prefect with --runner {args.runner}: worker processes report to the "
                         "flow's Prefect server, and a temporary one is this process's alone; start "
                         "one (`prefect server start`) and set PREFECT_API_URL, or drop --prefect "
                         "to run the fleet on this machine without Prefect")
    from memflow.flows.fleet import fleet_capture_resources, fleet_dream, fleet_index

    runner = {"runner": args.runner, "workers": args.workers, "address": args.address}
    if args.fleet_command == "dream":
        return fleet_dream(roots, **runner, start_jitter_seconds=args.jitter, **options)
    return (fleet_index if args.fleet_command == "index" else fleet_capture_resources)(roots, **runner)


def print_eval(summary: dict, out: str) -> None:
    """The memflow column beside the raw-turn baseline and, when scored, the transcript baseline
    (memory-flows' search over the raw session transcripts), then budget_recall_any per category."""
    sides = [("memflow", summary), ("baseline", summary["baseline"])]
    if summary.get("transcript"):
        sides.append(("transcript", summary["transcript"]))
    print(f"questions={summary['questions']} seconds={summary['run']['seconds']} -> {out}")
    print(f"{'metric':<24}" + "".join(f"{name:>12}" for name, _ in sides))
    for key in ("recall_any", "recall_all", "budget_recall_any", "budget_recall_all", "session_recall"):
        for k in summary[key]:
            print(f"{key + '@' + k:<24}" + "".join(f"{side[key][k]:>12.3f}" for _, side in sides))
    for key in ("mrr", "ndcg@10"):
        print(f"{key:<24}" + "".join(f"{side[key]:>12.3f}" for _, side in sides))
    for category, part in summary.get("per_category", {}).items():
        scores = part["budget_recall_any"]
        print(f"  {category} ({part['questions']} q): budget_recall_any@{'/'.join(scores)} "
              + " / ".join(f"{value:.3f}" for value in scores.values()))


def cmd_backup(args: argparse.Namespace) -> int:
    from memflow.progress import activity

    with activity("backup"):
        manifest = api.backup(args.out, workspace_of(args), args.with_index)
    size = sum(f["size"] for f in manifest["files"].values())
    if args.json:
        dump_json({"archive": args.out, "files": len(manifest["files"]), "bytes": size,
                   "written": Path(args.out).expanduser().stat().st_size})
        return 0
    print(f"backup: {args.out} ({len(manifest['files'])} files, {size:,} bytes before compression, "
          f"{Path(args.out).stat().st_size:,} bytes written)")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    from memflow.progress import activity

    with activity("restore"):
        manifest = api.restore(args.archive, args.target)
    if args.json:
        dump_json({"target": args.target, "files": len(manifest["files"])})
        return 0
    print(f"restored {len(manifest['files'])} files into {args.target} (verified against the manifest); "
          f"run `memflow -w {args.target} index` to search it")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from memflow.progress import activity

    with activity("import"):
        report = api.import_reme(args.src, args.into, args.dry_run, args.reme_model)
    if args.json:
        print(report.model_dump_json(indent=2))
        return 0
    for line in import_lines(report):
        print(line)
    return 0


def import_lines(report) -> list[str]:
    """The import report, one line per figure, reason or problem."""
    lay = report.layout
    lines = [f"import ({report.mode}): {report.source} -> {report.workspace}",
             f"layout: {lay.flavour} (daily {lay.daily}/, sessions {lay.session}/, metadata {lay.metadata}/)",
             f"files: {report.files}",
             f"ReMe chunks: {report.reme_chunks} ({report.reme_vectors} with vectors), model "
             f"{report.reme_model or 'unknown'}",
             f"memory-flows chunks: {report.chunks}",
             f"vectors reused: {report.reused_exact} exact, {report.reused_same_chunk} same chunk text, "
             f"{report.reused_composed} composed from overlapping chunks"]
    lines += [f"vectors skipped: {count} ({why})" for why, count in sorted(report.skipped.items())]
    lines += [f"resources already converted: {report.resources_adopted}"]
    lines += [f"resource to convert: {rel} ({why})" for rel, why in sorted(report.resources_pending.items())]
    lines += [f"notes already dreamt: {report.dreamt_adopted}"]
    lines += [f"note to dream: {rel} ({why})" for rel, why in sorted(report.dream_pending.items())]
    lines += [f"links: {report.graph_links} in ReMe's graph; {report.index_links} indexed, "
              f"{report.typed_links} typed (rel::)"]
    lines += [f"could not read: {problem}" for problem in report.unreadable]
    return lines


def cmd_profile(args: argparse.Namespace) -> int:
    found = api.profile(workspace_of(args), args.budget)
    if args.json:
        dump_json(found)
    else:
        print(found["text"])
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """The banner (stderr; stdout is the stdio transport's) only once the server is checked and
    about to run: a refused host or a port in use is an error line, not a claim of serving."""
    from memflow.mcp_server import serve

    def announce() -> None:
        if args.transport == "http":
            print(f"memory-flows MCP on http://{args.host}:{args.port}/mcp (workspace "
                  f"{workspace_of(args).resolve()})" + (", bearer token required" if args.token else ""),
                  file=sys.stderr, flush=True)

    serve(workspace_of(args), args.transport, args.host, args.port, args.token, cli=dispatch, announce=announce)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    report = api.status(workspace_of(args), args.deep)
    if args.json:
        dump_json(report)
        return 0
    index, dream, lock = report["index"], report["dream"], report["lock"]
    print(f"workspace: {report['workspace']}")
    print(f"index: last run {index.get('indexed_at') or 'never'}, {index.get('changed_since')} file(s) "
          f"changed since, {len(index['skipped'])} skipped")
    for layer, counts in report["layers"].items():
        print(f"  {layer}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    print(f"dream: backlog {dream['backlog']} note(s); last run "
          + (f"{dream['last_run']['run_id']} {dream['last_run']['status']}" if dream["last_run"] else "none"))
    resources = report["resources"]
    print(f"resources: {resources['refused']} refused (until they change), {resources['waiting_to_retry']} "
          "waiting to retry" + (f" (next after {resources['next_retry']})" if resources["next_retry"] else ""))
    for rel, why in resources.get("not_read", {}).items():
        print(f"  not read: {rel}: {why}")
    print("lock: " + (f"{lock['job']} since {lock['since']} (pid {lock['pid']} on {lock['host']}"
                      f"{'' if lock['alive'] else ', gone'})" if lock else "free"))
    for job, run in sorted(report["jobs"].items()):
        print(f"  {job}: {run['result']} at {run['finished']}" + (f" ({run['error']})" if run["error"] else ""))
    for role, model in report["models"].items():
        print(f"{role} model: {model['model'] or '-'} {model['health']}")
    for warning in report["warnings"]:
        print(f"warning: {warning}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Exit 0 when nothing is left to do by hand, 1 otherwise."""
    report = api.check(workspace_of(args), args.repair)
    if args.json:
        dump_json({"findings": [f.model_dump() for f in report.findings], "checked": report.checked})
    else:
        for f in report.findings:
            where = f" {f.path}" if f.path else ""
            todo = (" [repaired]" if f.repaired else f" [--repair: {f.repair}]") if f.repair else ""
            print(f"{f.area}{where}: {f.detail}{todo}")
        checked = ", ".join(f"{n} {area}" for area, n in report.checked.items())
        print(f"checked {checked}: {len(report.findings)} finding(s)"
              + (f", {sum(f.repaired for f in report.findings)} repaired" if args.repair else ""))
    return 0 if report.ok else EXIT_ERROR


def cmd_forget(args: argparse.Namespace) -> int:
    from memflow.progress import activity

    with activity("forget"):
        lines = api.forget(workspace_of(args), args.session, args.note, args.match, args.dry_run)
    if args.json:
        dump_json({"dry_run": args.dry_run, "changes": lines})
        return 0
    if not lines:
        print("nothing to forget")
    for line in lines:  # an indented line is a text that goes, under its file
        print(("would " if args.dry_run and not line.startswith(" ") else "") + line)
    return 0
