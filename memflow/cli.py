"""`memflow` command line. Imports stay lazy: `memflow --help` loads neither prefect nor litellm.

Errors print one line `error: ...` and exit 1; a busy workspace exits 75.
"""

from __future__ import annotations

import argparse
import os
import sys


def iso_date(text: str) -> str:
    """argparse type of a day: the text itself, refused at parse time unless YYYY-MM-DD."""
    from datetime import date

    try:
        date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None
    return text


def iso_time(text: str) -> str:
    """argparse type of a moment: YYYY-MM-DD or an ISO time such as 2026-03-02T14:00."""
    from datetime import datetime

    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date or ISO time (YYYY-MM-DD[THH:MM]), "
                                         f"got {text!r}") from None
    return text


def positive(kind: type):
    """argparse type of a count or span above zero."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"expected a number above 0, got {text!r}")
        return value
    parse.__name__ = f"positive {kind.__name__}"
    return parse


def port(text: str) -> int:
    value = positive(int)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port 1-65535, got {text!r}")
    return value


def add_json(p: argparse.ArgumentParser, what: str = "the result") -> None:
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON (for scripts)")


EXIT_CODES = ("exit status: 0 done; 1 failed or something is left for you to do (one line on stderr "
              "says what); 2 bad arguments; 75 busy: another job holds the workspace lock, retry later")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="memflow", description="Long-term agent memory as Markdown files.",
                                epilog=EXIT_CODES)
    p.add_argument("-w", "--workspace", default=os.environ.get("MEMFLOW_WORKSPACE"),
                   help="workspace folder (default: $MEMFLOW_WORKSPACE or the current folder)")
    p.add_argument("--prefect", action="store_true",
                   help="run jobs as Prefect flow runs (also implied by PREFECT_API_URL)")
    p.add_argument("--wait", type=float, metavar="SECONDS", default=None,
                   help="how long a writing command waits for a held workspace lock, saying who "
                        "holds it (default 5, setting lock_wait), then exits 75 (busy)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND",
                           help="one of the commands below; `memflow COMMAND --help` for its options")
    _file_commands(sub)
    _memory_commands(sub)
    _job_commands(sub)
    _eval_command(sub)
    _fleet_and_demo(sub)
    return p


def _command(sub, name: str, text: str, **kwargs) -> argparse.ArgumentParser:
    """A subcommand whose one-line help is also the description of its own --help."""
    return sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".", **kwargs)


def _file_commands(sub) -> None:
    s = _command(sub, "init", "create a workspace")
    s.add_argument("dir", nargs="?", help="the folder (default: -w or the current folder)")
    add_json(s, "the workspace and the folders created")
    s = _command(sub, "read", "print a file, or lines --start..--end (1-based)")
    s.add_argument("path", help="a workspace-relative path, e.g. daily/2026-03-02/talk.md")
    s.add_argument("--start", type=positive(int), metavar="LINE", help="first line to print (1-based)")
    s.add_argument("--end", type=positive(int), metavar="LINE", help="last line to print (inclusive)")
    add_json(s, "{path, start_line, end_line, text}")
    s = _command(sub, "write", "create or overwrite a file")
    s.add_argument("path", help="a workspace-relative path, e.g. digest/wiki/topic.md "
                   "(not metadata/ or session/)")
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--content", help="the text to write")
    src.add_argument("--file", help="read the content from a file ('-' for stdin)")
    s.add_argument("--name", help="frontmatter `name` of the note")
    s.add_argument("--description", help="frontmatter `description` of the note")
    s.add_argument("--meta", nargs="*", default=[], metavar="K=V",
                   help="more frontmatter keys (values as YAML, e.g. tags=[a, b])")
    add_json(s, "{path, detail}")
    s = _command(sub, "edit", "replace text that occurs exactly once")
    s.add_argument("path", help="a workspace-relative path")
    s.add_argument("--old", required=True, help="the text to replace: it must occur exactly once")
    s.add_argument("--new", required=True, help="the replacement text")
    add_json(s, "{path, detail}")
    s = _command(sub, "move", "move a file and rewrite links to it")
    s.add_argument("src", help="the file's workspace-relative path")
    s.add_argument("dst", help="its new workspace-relative path")
    add_json(s, "{src, dst, relinked}")
    s = _command(sub, "delete", "delete a file; prints files still linking to it")
    s.add_argument("path", help="a workspace-relative path")
    add_json(s, "{path, still_linked_from}")
    s = _command(sub, "fm", "frontmatter get/set (printed as YAML, --json for JSON)")
    fm = s.add_subparsers(dest="fm_command", required=True, metavar="ACTION", help="get or set")
    g = _command(fm, "get", "print a note's frontmatter")
    g.add_argument("path", help="a workspace-relative path of a Markdown note")
    add_json(g, "the frontmatter")
    st = _command(fm, "set", "set frontmatter keys (other keys kept, in order), print the result")
    st.add_argument("path", help="a workspace-relative path of a Markdown note")
    st.add_argument("pairs", nargs="+", metavar="K=V", help="keys to set (values as YAML)")
    add_json(st, "the frontmatter")


def _memory_commands(sub) -> None:
    for name, text in (("index", "index changed files"), ("reindex", "rebuild the index from the files")):
        s = _command(sub, name, text)
        add_json(s, "the index summary")
        s.add_argument("--strict", action="store_true",
                       help="exit 1 when a file was left out (default: a warning, exit 0)")
    s = _command(sub, "search", "hybrid search over the index")
    s.add_argument("query", help="what to look for, in words")
    s.add_argument("--limit", type=positive(int), metavar="N", default=5, help="how many hits (default 5)")
    s.add_argument("--layer", choices=["daily", "digest", "session", "resource"],
                   help="one layer only; session: the conversation transcripts (session logs)")
    s.add_argument("--prefix", metavar="FOLDER", help="only files under this folder, e.g. daily/2026-03")
    s.add_argument("--since", type=iso_date, metavar="YYYY-MM-DD",
                   help="notes, transcripts and digest facts dated on or after this day")
    s.add_argument("--until", type=iso_date, metavar="YYYY-MM-DD", help="... dated on or before this day")
    s.add_argument("--as-of", type=iso_date, metavar="YYYY-MM-DD",
                   help="memory as it stood that day (later facts hidden, values replaced since "
                   "shown as current)")
    s.add_argument("--tag", action="append", default=[], metavar="TAG",
                   help="only notes tagged TAG in their frontmatter (repeatable: all of them)")
    s.add_argument("--speaker", metavar="NAME",
                   help="only chunks with a line NAME said (e.g. user, assistant, a speaker's name)")
    s.add_argument("--min-score", type=float, metavar="SCORE", default=0.0,
                   help="leave out hits scoring below this (default 0)")
    add_json(s, "the whole response (results, hit counts, watermark)")
    s.add_argument("--explain", action="store_true",
                   help="show how each hit scored (keyword, vector, fusion)")
    s.add_argument("--all-kinds", action="store_true", help="include day-index pages")
    s.add_argument("--budget", type=positive(int), metavar="TOKENS",
                   help="print what fits in TOKENS tokens, packed line by line (not whole chunks)")
    s.add_argument("--superseded", action="store_true",
                   help="rank lines the digest has replaced (labelled `(replaced DATE)`) as if current")
    s = _command(sub, "recent", "notes and saved files changed lately, newest first")
    s.add_argument("--days", type=positive(float), metavar="N", default=7.0,
                   help="how far back, in days (default 7)")
    s.add_argument("--limit", type=positive(int), metavar="N", default=20,
                   help="at most this many (default 20)")
    s.add_argument("--layer", choices=["daily", "digest", "resource"], help="one layer only")
    add_json(s, "{notes: [{path, name, description, modified}]}")
    s = _command(sub, "context", "a note with the notes it links to and that link to it")
    s.add_argument("path", help="a workspace-relative path of a note, e.g. digest/wiki/topic.md")
    s.add_argument("--depth", type=int, metavar="N", default=1, help="how many link hops out (default 1)")
    s.add_argument("--limit", type=positive(int), metavar="N", default=30,
                   help="at most this many related notes (default 30)")
    add_json(s, "{path, text, related: [{path, name, description, hop, direction, via}], truncated}")
    s = _command(sub, "profile", "who the user is: current facts, newest first, with dates and sources")
    s.add_argument("--budget", type=positive(int), default=300, metavar="TOKENS",
                   help="token budget (cl100k, default 300)")
    add_json(s, "{text, facts}")
    s = _command(sub, "proactive", "print the interest topics a dream run chose for a day")
    s.add_argument("--date", type=iso_date, metavar="YYYY-MM-DD", help="the day (default: today)")
    add_json(s, "{status, date, topics} or {status: skipped, date, reason}")


def _job_commands(sub) -> None:
    s = _command(sub, "capture", "turn a conversation into daily notes")
    s.add_argument("file", help="JSON list or JSONL of messages, '-' for stdin")
    s.add_argument("--session", required=True, metavar="ID",
                   help="the conversation's id: its messages append to session/ under it")
    s.add_argument("--date", type=iso_date, metavar="YYYY-MM-DD",
                   help="the day of messages without a timestamp (default: today)")
    s.add_argument("--hint", default="", help="a note to the chat model on what is worth keeping")
    s.add_argument("--skip-invalid", action="store_true",
                   help="leave invalid messages out (counted) instead of rejecting the conversation")
    add_json(s, "the capture result")
    s = _command(sub, "resources", "turn changed files under resource/ into daily notes")
    add_json(s, "the created, updated, removed, skipped, failed and waiting files")
    s = _command(sub, "forget", "remove a session, a daily note or a text everywhere")
    what = s.add_mutually_exclusive_group(required=True)
    what.add_argument("--session", metavar="ID", help="a conversation id: its log, notes and digest lines")
    what.add_argument("--note", help="a daily note path")
    what.add_argument("--match", help="text: every sentence stating it (any case, width or punctuation), "
                      "in logs and notes you wrote too, not its neighbours; file names carrying it are renamed")
    s.add_argument("--dry-run", action="store_true",
                   help="list what would change and the exact texts that would go, change nothing")
    add_json(s, "{dry_run, changes}")
    s = _command(sub, "backup", "write the workspace to a .tar.zst with a manifest of sha256s")
    s.add_argument("out", help="the archive to write, e.g. memory.tar.zst")
    s.add_argument("--with-index", action="store_true", help="include the derived index too")
    add_json(s, "{archive, files, bytes, written}")
    s = _command(sub, "restore", "unpack a backup into a new folder, verified against its manifest")
    s.add_argument("archive", help="a .tar.zst written by `memflow backup`")
    s.add_argument("target", help="a new (or empty) folder to unpack into")
    add_json(s, "{target, files}")
    s = _command(sub, "import", "import another memory system's workspace")
    im = s.add_subparsers(dest="system", required=True, metavar="SYSTEM", help="reme")
    r = _command(im, "reme", "a ReMe or QwenPaw workspace: files, vectors, catalogs")
    r.add_argument("src", help="the ReMe or QwenPaw workspace folder")
    r.add_argument("--into", help="copy into this new folder (default: adopt SRC in place)")
    r.add_argument("--dry-run", action="store_true", help="report what would be imported, write nothing")
    r.add_argument("--reme-model", default="", help="the embedding model ReMe used, when its "
                   "metadata cannot tell (its cache is named for a model and endpoint)")
    add_json(r, "the import report")
    s = _command(sub, "serve", "the memory tools over MCP (stdio, or streamable HTTP); CLI searches of "
                 "the workspace are answered by it while it runs; it speaks JSON-RPC itself, so it has no --json")
    s.add_argument("--transport", choices=["stdio", "http", "socket"], default="stdio",
                   help="stdio (default: an agent starts the server), http (a long-running server) or socket "
                   "(no MCP, only the local socket the CLI uses: docs/vectors.md)")
    s.add_argument("--host", default="127.0.0.1",
                   help="HTTP: address to bind (beyond loopback needs --token)")
    s.add_argument("--port", type=port, metavar="PORT", default=8765,
                   help="HTTP: port to listen on (default 8765)")
    s.add_argument("--token", default=os.environ.get("MEMFLOW_MCP_TOKEN"),
                   help="HTTP: bearer token every request must carry (default $MEMFLOW_MCP_TOKEN)")
    s = _command(sub, "status", "the workspace at a glance: freshness, runs, lock, backlog, models")
    add_json(s, "the status report")
    s.add_argument("--deep", action="store_true", help="call each configured model once")
    s = _command(sub, "check", "verify the workspace: notes, index, links, dream runs, state")
    s.add_argument("--repair", action="store_true", help="fix what is safe to fix")
    add_json(s, "{findings, checked}")
    s = _command(sub, "inbox", "list job events (what each job wrote, newest last)")
    s.add_argument("--since", type=iso_time, metavar="TIME",
                   help="only events at or after this day or ISO time (UTC unless it says)")
    add_json(s, "{events: [{time, job, title, summary, paths}]}")
    s = _command(sub, "dream", "consolidate daily notes into digest nodes")
    s.add_argument("dream_command", nargs="?", choices=["run", "runs", "rollback", "migrate"],
                   default="run", metavar="ACTION", help="run (default), runs, rollback RUN_ID, migrate "
                   "(earlier node format -> fact lines, reversible)")
    s.add_argument("run_id", nargs="?", metavar="RUN_ID",
                   help="rollback: the run to undo (from `memflow dream runs`)")
    s.add_argument("--date", type=iso_date, metavar="YYYY-MM-DD", help="the run's day (default: today)")
    s.add_argument("--hint", default="", help="a note to the chat model on what matters")
    s.add_argument("--max-units", type=positive(int), metavar="N", default=500,
                   help="unit budget of a run (whole notes)")
    s.add_argument("--max-notes", type=positive(int), metavar="N", default=200, help="note budget of a run")
    s.add_argument("--max-seconds", type=float, metavar="SECONDS", default=0.0,
                   help="time budget of a run (0: none); what is left is the backlog")
    s.add_argument("--force", action="store_true", help="rollback even if files changed since")
    add_json(s, "the run summary (runs: {runs}; rollback: {run_id, changes})")


def _eval_command(sub) -> None:
    s = _command(sub, "eval", "retrieval evaluation")
    ev = s.add_subparsers(dest="eval_command", required=True, metavar="SET",
                          help="locomo, techchat or memright")
    lo = _command(ev, "locomo", "LoCoMo retrieval evaluation")
    lo.add_argument("data", help="a LoCoMo JSON file (list of samples), e.g. locomo-dev.json")
    _eval_options(lo, "250,500,1000,2000")
    lo.add_argument("--samples", help="comma-separated sample ids")
    lo.add_argument("--runner", choices=["local", "dask"],
                    help="run samples in parallel as Prefect tasks: local processes or Dask "
                         "(needs PREFECT_API_URL)")
    lo.add_argument("--workers", type=positive(int), metavar="N", default=2,
                    help="parallel workers with --runner (default 2)")
    lo.add_argument("--address", default="", help="an existing Dask scheduler (default: a LocalCluster)")
    tc = _command(ev, "techchat", "generated long technical chats (seeded), scored like locomo")
    _eval_options(tc, "250,500,1000,2000,4000")
    tc.add_argument("--seed", type=int, metavar="N", default=0, help="generator seed (default 0)")
    tc.add_argument("--conversations", type=positive(int), metavar="N", default=3,
                    help="independent samples (default 3)")
    tc.add_argument("--sessions", type=positive(int), metavar="N", default=14,
                    help="sessions per conversation (default 14)")
    tc.add_argument("--projects", type=positive(int), metavar="N", default=6,
                    help="projects per conversation (default 6)")
    tc.set_defaults(samples=None, runner=None, workers=2, address="")
    mr = _command(ev, "memright", "memory-right: is the current value of a changed fact what "
                  "search gives first (memflow beside two raw-message BM25 baselines)")
    mr.add_argument("data", help="a folder of scenario folders (sessions/*.json, questions.json), "
                    "or one scenario folder")
    mr.add_argument("--out", required=True,
                    help="folder for questions.parquet, summary.json and each scenario's workspace")
    mr.add_argument("--budgets", default="200,500,1000",
                    help="token budgets (cl100k) of each context (default 200,500,1000)")
    mr.add_argument("--dream", action="store_true",
                    help="dream each scenario until no backlog (then index) before searching")
    mr.add_argument("--set", nargs="*", default=[], metavar="K=V",
                    help="setting overrides for experiments, e.g. keyword_weight=0.5")
    mr.add_argument("--scenarios", help="comma-separated scenario folder names (default: all)")
    add_json(mr, "summary.json instead of the table")


def _fleet_and_demo(sub) -> None:
    s = _command(sub, "fleet", "one job over every workspace under ROOT (local processes; with "
                 "--prefect or PREFECT_API_URL a Prefect flow)")
    s.add_argument("fleet_command", choices=["index", "dream", "resources"], metavar="JOB",
                   help="index, dream or resources, run in each workspace")
    s.add_argument("roots", nargs="+", metavar="ROOT",
                   help="folders holding workspaces (found by their layout or a memflow.toml), or workspaces")
    s.add_argument("--runner", choices=["local", "dask", "serial"], default="local",
                   help="local: a pool of processes; dask (a Prefect flow, needs a server): a LocalCluster, or --address; serial: one "
                        "workspace at a time in this process (no server needed)")
    s.add_argument("--workers", type=positive(int), metavar="N", default=2,
                   help="parallel workspaces (default 2)")
    s.add_argument("--address", default="", help="an existing Dask scheduler, e.g. tcp://10.0.0.5:8786")
    s.add_argument("--jitter", type=float, default=0.0, metavar="SECONDS",
                   help="dream: spread workspace starts over this window")
    s.add_argument("--date", type=lambda t: iso_date(t) if t else t, default="", metavar="YYYY-MM-DD",
                   help="dream: the run's day (default: today in each workspace)")
    s.add_argument("--max-units", type=positive(int), metavar="N", default=500,
                   help="dream: unit budget per workspace")
    s.add_argument("--max-notes", type=positive(int), metavar="N", default=200,
                   help="dream: note budget per workspace")
    add_json(s, "each workspace's outcome")
    s = _command(sub, "demo", "run the whole loop on sample data, offline (a guided tour: no --json)")
    s.add_argument("dir", nargs="?", help="a new folder for the demo workspace (kept); default: a "
                   "temporary folder, removed at the end")
    s.add_argument("--keep", action="store_true", help="keep the temporary workspace")


def _eval_options(p: argparse.ArgumentParser, budgets: str) -> None:
    p.add_argument("--out", required=True,
                   help="folder for questions.parquet, summary.json and each sample's workspace")
    p.add_argument("--k", default="1,5,10,20", help="ranks for recall@k (default 1,5,10,20)")
    p.add_argument("--budgets", default=budgets,
                   help=f"token budgets (cl100k) for budget recall (default {budgets})")
    p.add_argument("--dream", action="store_true", help="consolidate each sample before searching")
    p.add_argument("--set", nargs="*", default=[], metavar="K=V",
                   help="setting overrides for experiments, e.g. chunk_bytes=1000 keyword_weight=0.5")
    p.add_argument("--grid", action="append", default=[], metavar="K=V1,V2",
                   help="evaluate every combination (repeatable); one parquet, a column per setting")
    add_json(p, "the summary instead of the table")


# commands that make their folder (init, demo, restore, import) or take none of -w
NO_WORKSPACE = {"init", "demo", "restore", "import", "eval", "fleet"}


def check_workspace(args: argparse.Namespace) -> str | None:
    """The error when -w, $MEMFLOW_WORKSPACE or (with neither) the current folder is not a
    workspace: a typo must not become a new workspace (`memflow init` makes one). Loading the
    workspace's settings here also refuses a bad setting before any command prints a thing."""
    if args.command in NO_WORKSPACE:
        return None
    from pathlib import Path

    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import is_workspace, layout

    folder = Path(args.workspace or ".").expanduser()
    if folder.is_dir() and (is_workspace(folder) or layout(load_settings(folder)).state_dir.is_dir()):
        return None
    if not args.workspace:
        return (f"error: the current folder {folder.resolve()} is not a workspace (no memflow.toml, "
                "metadata/state/ or daily/ and session/): pass -w DIR or set MEMFLOW_WORKSPACE; "
                "`memflow init` makes one here")
    given = "-w" if "MEMFLOW_WORKSPACE" not in os.environ or os.environ["MEMFLOW_WORKSPACE"] != args.workspace \
        else "MEMFLOW_WORKSPACE"
    what = "is not a workspace" if folder.is_dir() else "does not exist"
    return (f"error: {given} {args.workspace}: {what} (no memflow.toml, metadata/state/ or daily/ and "
            f"session/); `memflow init {args.workspace}` makes one")


def main(argv: list[str] | None = None) -> int:
    """Parse, check the workspace and its settings, then run the command: a problem the user
    must fix is one line on stderr and a non-zero exit before anything claims success."""
    args = _parser().parse_args(argv)
    if args.wait is not None:
        os.environ["MEMFLOW_LOCK_WAIT"] = str(args.wait)  # read by every command's settings
    from memflow.errors import describe_error
    from memflow.warm import WARM_COMMANDS, NoServer, ask_server

    try:
        if args.command in WARM_COMMANDS:  # a running `memflow serve` answers (memflow/warm.py)
            try:
                code = ask_server(args)
            except (NoServer, OSError) as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 1
            if code is not None:
                return code
        problem = check_workspace(args)
    except Exception as exc:  # noqa: BLE001 - bad settings (memflow.toml) are one line too
        message, code = describe_error(exc)
        if message is None:
            raise
        print(message, file=sys.stderr)
        return code
    if problem:
        print(problem, file=sys.stderr)
        return 1
    from memflow import commands

    return commands.dispatch(args)


if __name__ == "__main__":
    sys.exit(main())
