"""`memflow` command line. Imports stay lazy: `memflow --help` loads neither prefect nor litellm.

Errors print one line `error: ...` and exit 1; a busy workspace exits 75.
"""

from __future__ import annotations

import argparse
import os
import sys


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="memflow", description="Long-term agent memory as Markdown files.")
    p.add_argument("-w", "--workspace", default=os.environ.get("MEMFLOW_WORKSPACE"),
                   help="workspace folder (default: $MEMFLOW_WORKSPACE or the current folder)")
    p.add_argument("--prefect", action="store_true",
                   help="run jobs as Prefect flow runs (also implied by PREFECT_API_URL)")
    p.add_argument("--wait", type=float, metavar="SECONDS", default=None,
                   help="how long a writing command waits for a held workspace lock, saying who "
                        "holds it (default 5, setting lock_wait), then exits 75 (busy)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("init", help="create a workspace")
    s.add_argument("dir", nargs="?")
    s = sub.add_parser("read", help="print a file, or lines --start..--end (1-based)")
    s.add_argument("path")
    s.add_argument("--start", type=int)
    s.add_argument("--end", type=int)
    s = sub.add_parser("write", help="create or overwrite a file")
    s.add_argument("path")
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--content")
    src.add_argument("--file", help="read the content from a file ('-' for stdin)")
    s.add_argument("--name")
    s.add_argument("--description")
    s.add_argument("--meta", nargs="*", default=[], metavar="K=V")
    s = sub.add_parser("edit", help="replace text that occurs exactly once")
    s.add_argument("path")
    s.add_argument("--old", required=True)
    s.add_argument("--new", required=True)
    s = sub.add_parser("move", help="move a file and rewrite links to it")
    s.add_argument("src")
    s.add_argument("dst")
    s = sub.add_parser("delete", help="delete a file; prints files still linking to it")
    s.add_argument("path")
    s = sub.add_parser("fm", help="frontmatter get/set")
    fm = s.add_subparsers(dest="fm_command", required=True)
    g = fm.add_parser("get")
    g.add_argument("path")
    st = fm.add_parser("set")
    st.add_argument("path")
    st.add_argument("pairs", nargs="+", metavar="K=V")

    for name, helptext in (("index", "index changed files"), ("reindex", "rebuild the index")):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("--json", action="store_true")
        s.add_argument("--strict", action="store_true",
                       help="exit 1 when a file was left out (default: a warning, exit 0)")
    s = sub.add_parser("search", help="hybrid search over the index")
    s.add_argument("query")
    s.add_argument("--limit", type=int, default=5)
    s.add_argument("--layer", choices=["daily", "digest", "session", "resource"],
                   help="session: the conversation transcripts (session logs)")
    s.add_argument("--prefix")
    s.add_argument("--since", help="YYYY-MM-DD: notes, transcripts and digest facts dated on or after")
    s.add_argument("--until", help="YYYY-MM-DD: ... dated on or before")
    s.add_argument("--as-of", help="YYYY-MM-DD: memory as it stood that day (later facts hidden, "
                   "values replaced since shown as current)")
    s.add_argument("--tag", action="append", default=[], metavar="TAG",
                   help="only notes tagged TAG in their frontmatter (repeatable: all of them)")
    s.add_argument("--speaker", metavar="NAME",
                   help="only chunks with a line NAME said (e.g. user, assistant, a speaker's name)")
    s.add_argument("--min-score", type=float, default=0.0)
    s.add_argument("--json", action="store_true")
    s.add_argument("--explain", action="store_true")
    s.add_argument("--all-kinds", action="store_true", help="include day-index pages")
    s.add_argument("--budget", type=int, metavar="TOKENS",
                   help="print what fits in TOKENS tokens, packed line by line (not whole chunks)")
    s.add_argument("--superseded", action="store_true",
                   help="rank lines the digest has replaced (labelled `(replaced DATE)`) as if current")
    s = sub.add_parser("capture", help="turn a conversation into daily notes")
    s.add_argument("file", help="JSON list or JSONL of messages, '-' for stdin")
    s.add_argument("--session", required=True)
    s.add_argument("--date")
    s.add_argument("--hint", default="")
    s.add_argument("--skip-invalid", action="store_true",
                   help="leave invalid messages out (counted) instead of rejecting the conversation")
    s.add_argument("--json", action="store_true")
    s = sub.add_parser("resources", help="turn changed files under resource/ into daily notes")
    s.add_argument("--json", action="store_true")
    s = sub.add_parser("forget", help="remove a session, a daily note or a text everywhere")
    what = s.add_mutually_exclusive_group(required=True)
    what.add_argument("--session")
    what.add_argument("--note", help="a daily note path")
    what.add_argument("--match", help="text: every sentence stating it (any case, width or punctuation), "
                      "in logs and notes you wrote too, not its neighbours; file names carrying it are renamed")
    s.add_argument("--dry-run", action="store_true",
                   help="list what would change and the exact texts that would go, change nothing")
    s = sub.add_parser("backup", help="write the workspace to a .tar.zst with a manifest of sha256s")
    s.add_argument("out")
    s.add_argument("--with-index", action="store_true", help="include the derived index too")
    s = sub.add_parser("restore", help="unpack a backup into a new folder, verified against its manifest")
    s.add_argument("archive")
    s.add_argument("target")
    s = sub.add_parser("import", help="import another memory system's workspace")
    im = s.add_subparsers(dest="system", required=True)
    r = im.add_parser("reme", help="a ReMe or QwenPaw workspace: files, vectors, catalogs")
    r.add_argument("src")
    r.add_argument("--into", help="copy into this new folder (default: adopt SRC in place)")
    r.add_argument("--dry-run", action="store_true", help="report what would be imported, write nothing")
    r.add_argument("--reme-model", default="", help="the embedding model ReMe used, when its "
                   "metadata cannot tell (its cache is named for a model and endpoint)")
    s = sub.add_parser("serve", help="the memory tools over MCP (stdio, or streamable HTTP); "
                       "CLI searches of the workspace are answered by it while it runs")
    s.add_argument("--transport", choices=["stdio", "http", "socket"], default="stdio",
                   help="socket: no MCP, only the local socket the CLI uses (docs/vectors.md)")
    s.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind (beyond loopback needs --token)")
    s.add_argument("--port", type=int, default=8765)
    s.add_argument("--token", default=os.environ.get("MEMFLOW_MCP_TOKEN"),
                   help="HTTP: bearer token every request must carry (default $MEMFLOW_MCP_TOKEN)")
    s = sub.add_parser("status", help="the workspace at a glance: freshness, runs, lock, backlog, models")
    s.add_argument("--json", action="store_true")
    s.add_argument("--deep", action="store_true", help="call each configured model once")
    s = sub.add_parser("check", help="verify the workspace: notes, index, links, dream runs, state")
    s.add_argument("--repair", action="store_true", help="fix what is safe to fix")
    s.add_argument("--json", action="store_true")
    s = sub.add_parser("profile", help="who the user is: current facts, newest first, with dates and sources")
    s.add_argument("--budget", type=int, default=300, metavar="TOKENS", help="token budget (cl100k, default 300)")
    s.add_argument("--json", action="store_true")
    s = sub.add_parser("inbox", help="list job events")
    s.add_argument("--since")
    s = sub.add_parser("dream", help="consolidate daily notes into digest nodes")
    s.add_argument("dream_command", nargs="?", choices=["run", "runs", "rollback", "migrate"],
                   default="run", help="run (default), runs, rollback RUN_ID, migrate (earlier "
                   "node format -> fact lines, reversible)")
    s.add_argument("run_id", nargs="?")
    s.add_argument("--date")
    s.add_argument("--hint", default="")
    s.add_argument("--max-units", type=int, default=500, help="unit budget of a run (whole notes)")
    s.add_argument("--max-notes", type=int, default=200, help="note budget of a run")
    s.add_argument("--max-seconds", type=float, default=0.0,
                   help="time budget of a run (0: none); what is left is the backlog")
    s.add_argument("--force", action="store_true", help="rollback even if files changed since")
    s.add_argument("--json", action="store_true")
    s = sub.add_parser("proactive", help="print the interest topics of a day")
    s.add_argument("--date")
    s = sub.add_parser("eval", help="retrieval evaluation")
    ev = s.add_subparsers(dest="eval_command", required=True)
    lo = ev.add_parser("locomo", help="LoCoMo retrieval evaluation")
    lo.add_argument("data", help="a LoCoMo JSON file (list of samples), e.g. locomo-dev.json")
    _eval_options(lo, "250,500,1000,2000")
    lo.add_argument("--samples", help="comma-separated sample ids")
    lo.add_argument("--runner", choices=["local", "dask"],
                    help="run samples in parallel as Prefect tasks: local processes or Dask "
                         "(needs PREFECT_API_URL)")
    lo.add_argument("--workers", type=int, default=2, help="parallel workers with --runner (default 2)")
    lo.add_argument("--address", default="", help="an existing Dask scheduler (default: a LocalCluster)")
    tc = ev.add_parser("techchat", help="generated long technical chats (seeded), scored like locomo")
    _eval_options(tc, "250,500,1000,2000,4000")
    tc.add_argument("--seed", type=int, default=0)
    tc.add_argument("--conversations", type=int, default=3, help="independent samples (default 3)")
    tc.add_argument("--sessions", type=int, default=14, help="sessions per conversation (default 14)")
    tc.add_argument("--projects", type=int, default=6, help="projects per conversation (default 6)")
    tc.set_defaults(samples=None, runner=None, workers=2, address="")
    mr = ev.add_parser("memright", help="memory-right: is the current value of a changed fact what "
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
    mr.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    s = sub.add_parser("fleet", help="one job over every workspace under ROOT (local processes; with "
                       "--prefect or PREFECT_API_URL a Prefect flow)")
    s.add_argument("fleet_command", choices=["index", "dream", "resources"])
    s.add_argument("roots", nargs="+", metavar="ROOT",
                   help="folders holding workspaces (found by their layout or a memflow.toml), or workspaces")
    s.add_argument("--runner", choices=["local", "dask", "serial"], default="local",
                   help="local: a pool of processes; dask (a Prefect flow, needs a server): a LocalCluster, or --address; serial: one "
                        "workspace at a time in this process (no server needed)")
    s.add_argument("--workers", type=int, default=2)
    s.add_argument("--address", default="", help="an existing Dask scheduler, e.g. tcp://10.0.0.5:8786")
    s.add_argument("--jitter", type=float, default=0.0, metavar="SECONDS",
                   help="dream: spread workspace starts over this window")
    s.add_argument("--date", default="")
    s.add_argument("--max-units", type=int, default=500)
    s.add_argument("--max-notes", type=int, default=200)
    s.add_argument("--json", action="store_true")
    s = sub.add_parser("demo", help="run the whole loop on sample data")
    s.add_argument("dir", nargs="?", help="a new folder for the demo workspace (kept); default: a "
                   "temporary folder, removed at the end")
    s.add_argument("--keep", action="store_true", help="keep the temporary workspace")
    return p


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


# commands that make their folder (init, demo, restore, import) or take none of -w
NO_WORKSPACE = {"init", "demo", "restore", "import", "eval", "fleet"}


def check_workspace(args: argparse.Namespace) -> str | None:
    """The error when -w (or $MEMFLOW_WORKSPACE) names a folder that is not a workspace: a typo
    must not become a new workspace (`memflow init` makes one)."""
    if not args.workspace or args.command in NO_WORKSPACE:
        return None
    from pathlib import Path

    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import is_workspace, layout

    folder = Path(args.workspace).expanduser()
    if folder.is_dir() and (is_workspace(folder) or layout(load_settings(folder)).state_dir.is_dir()):
        return None
    given = "-w" if "MEMFLOW_WORKSPACE" not in os.environ or os.environ["MEMFLOW_WORKSPACE"] != args.workspace \
        else "MEMFLOW_WORKSPACE"
    what = "is not a workspace" if folder.is_dir() else "does not exist"
    return (f"error: {given} {args.workspace}: {what} (no memflow.toml, metadata/state/ or daily/ and "
            f"session/); `memflow init {args.workspace}` makes one")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from memflow.warm import WARM_COMMANDS, NoServer, ask_server

    if args.command in WARM_COMMANDS:  # a running `memflow serve` answers (memflow/warm.py)
        try:
            code = ask_server(args)
        except (NoServer, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        if code is not None:
            return code
    problem = check_workspace(args)
    if problem:
        print(problem, file=sys.stderr)
        return 1
    if args.wait is not None:
        os.environ["MEMFLOW_LOCK_WAIT"] = str(args.wait)  # read by every command's settings
    from memflow import commands

    return commands.dispatch(args)


if __name__ == "__main__":
    sys.exit(main())
