"""`memflow serve`: the memory tools over MCP (the official Python SDK; the one module that
imports it), on stdio for desktop agents or streamable HTTP.

Each tool is a thin call of `memflow.api` with typed inputs, structured output and a readable
text rendering. Names and parameters follow what agents know from ReMe and basic-memory
(`search`, `read`, `write`, `edit`, `move`, `delete`, `frontmatter_get/set`, `recent`,
`context`, `capture`, `dream_runs`, `status`, `profile`). A failure (the workspace is busy, a path under
`metadata/`, a bad message) is a tool error with its one-line reason, never a crash. The server
is one long-lived process: the search snapshot (reloaded when an index run swaps it) and the
embedding model stay loaded, so a search costs milliseconds.
"""

import functools
import gc
import hmac
import json
import logging
import sys
import warnings
from pathlib import Path
from typing import Annotated, Any

from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from memflow import api
from memflow.errors import describe_error
from memflow.schemas.settings import Settings

LOOPBACK = ("127.0.0.1", "localhost", "::1")
INSTRUCTIONS = """Long-term memory kept as Markdown files: daily notes of past conversations
(daily/), consolidated knowledge (digest/), files the user saved (resource/). Search it before
answering anything that may depend on the past (the user's preferences, facts, decisions, earlier
work); read a hit's lines or its context for more; write or capture what should be remembered."""


# Output shapes (module level: the SDK builds each tool's output schema from them).
class Hit(BaseModel):
    path: str
    start_line: int
    end_line: int
    score: float
    heading_path: str = ""
    text: str
    links: list[str] = Field(default_factory=list, description="linked notes shown with the hit")
    tags: list[str] = Field(default_factory=list, description="the note's frontmatter tags")


class SearchOutput(BaseModel):
    query: str
    results: list[Hit]
    index_stale: bool = Field(description="indexed files changed and not yet indexed")
    packed: list[str] | None = Field(None, description="with budget_tokens: the context that fits")
    warnings: list[str] = Field([], description="what degraded this answer (e.g. keyword results "
                                "only: the embedding model failed)")


class ProfileOutput(BaseModel):
    text: str = Field(description="the profile as Markdown, within the token budget")
    facts: list[dict[str, str]] = Field(description="date, who, text, source of each line shown")


class ReadOutput(BaseModel):
    path: str
    start_line: int | None = None
    end_line: int | None = None
    text: str


class PathOutput(BaseModel):
    path: str
    detail: str = ""


class MoveOutput(BaseModel):
    src: str
    dst: str
    relinked: list[str]


class DeleteOutput(BaseModel):
    path: str
    still_linked_from: list[str]


class FrontmatterOutput(BaseModel):
    path: str
    frontmatter: dict[str, Any]


class IndexOutput(BaseModel):
    added: int
    modified: int
    deleted: int
    chunks: int = Field(description="chunks written")
    seconds: float
    skipped: dict[str, str] = Field({}, description="files left out, each with why")


class NoteCard(BaseModel):
    path: str
    name: str = ""
    description: str = ""
    modified: str = ""


class RecentOutput(BaseModel):
    notes: list[NoteCard]


class Related(BaseModel):
    path: str
    name: str = ""
    description: str = ""
    hop: int
    direction: str = Field(description="out: the note links to it; in: it links to the note")
    via: str


class ContextOutput(BaseModel):
    path: str
    text: str
    related: list[Related]
    truncated: bool


class CaptureOutput(BaseModel):
    session_id: str
    new_messages: int
    notes: list[str]
    skipped: list[str]
    stopped: int = 0  # new messages a `forget` tombstone kept out
    stopped_reason: str = ""
    trimmed: int = 0  # new messages logged without the sentences a `forget` removed


class RunsOutput(BaseModel):
    runs: list[dict[str, Any]]


class StatusOutput(BaseModel):
    status: dict[str, Any]


class BearerToken(TokenVerifier):
    """One shared secret as the bearer token of every HTTP request."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token.encode()):
            return AccessToken(token=token, client_id="memflow", scopes=[])
        return None


def _tool_errors(fn):
    """Every failure becomes a tool error with the one-line reason the CLI would print."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported to the agent as a tool error
            message, _code = describe_error(exc)
            raise ToolError((message or f"{type(exc).__name__}: {exc}").removeprefix("error: ")) from exc
    return wrapper


def _plain(value: Any) -> Any:
    """JSON-safe (dates and paths as strings): frontmatter and status hold YAML dates."""
    return json.loads(json.dumps(value, default=str))


def _answer(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=model.model_dump(mode="json"))


def build_server(settings: Settings, token: str | None = None) -> MCPServer:
    """The MCP server of one workspace (`token`: the bearer token HTTP requests must carry)."""
    auth: dict = {}
    if token:
        auth = {"token_verifier": BearerToken(token),
                "auth": AuthSettings(issuer_url="http://localhost", resource_server_url=None)}
    server = MCPServer("memory-flows", instructions=INSTRUCTIONS, log_level="WARNING", **auth)
    ws = settings

    @server.tool()
    @_tool_errors
    def search(query: str, limit: int = 5, layer: str | None = None, prefix: str | None = None,
               since: str | None = None, until: str | None = None, min_score: float = 0.0,
               explain: bool = False, budget_tokens: int | None = None,
               as_of: str | None = None, tags: list[str] | None = None,
               speaker: str | None = None) -> Annotated[CallToolResult, SearchOutput]:
        """Search memory (BM25 + vectors, fused; follows wikilinks). `layer`: daily (notes of
        past conversations), digest (consolidated facts), session (the conversations' own
        transcripts) or resource (saved files); `prefix`: a
        folder such as daily/2026-03; `since`/`until`: ISO dates (digest facts by the date each
        states); `as_of`: ISO date, memory as it stood then; `tags`: only notes whose frontmatter
        carries all of these tags; `speaker`: only hits with a line that speaker said (user,
        assistant, a name; who said a line is not a search word). Each hit gives the file and
        line range to `read` for more. `budget_tokens`: return instead what fits in that many
        tokens, the matching lines of as many hits as fit (the best use of a small context)."""
        from memflow.tasks.recall import render_response

        response = api.search(query, ws, limit, min_score, layer, prefix, since, until, explain=explain,
                              budget_tokens=budget_tokens, as_of=as_of, tags=tags,
                              speaker=speaker)
        out = SearchOutput(query=query, index_stale=bool(response.watermark.get("stale")),
                           packed=response.packed, warnings=response.warnings, results=[
            Hit(path=r.path, start_line=r.start_line, end_line=r.end_line, score=r.score,
                heading_path=r.heading_path, text=r.text, tags=r.tags,
                links=[link.path for link in r.links]) for r in response.results])
        if budget_tokens:
            return _answer(out, "\n\n".join(response.packed or ["no results"]))
        return _answer(out, render_response(response, explain) or "no results")

    @server.tool()
    @_tool_errors
    def read(path: str, start_line: int | None = None, end_line: int | None = None) -> Annotated[CallToolResult, ReadOutput]:
        """Read a workspace file, or lines start_line..end_line of it (1-based, inclusive)."""
        text = api.read(path, start_line, end_line, ws)
        return _answer(ReadOutput(path=path, start_line=start_line, end_line=end_line, text=text), text)

    @server.tool()
    @_tool_errors
    def write(path: str, content: str, name: str | None = None, description: str | None = None,
              tags: list[str] | None = None) -> PathOutput:
        """Create or overwrite a Markdown note (e.g. digest/wiki/topic.md); `name`,
        `description` and `tags` go into its frontmatter. Not under metadata/ or session/.
        Searchable when the call returns (`search` with `tags` filters by them)."""
        meta = {"tags": tags} if tags else None
        return PathOutput(path=api.write(path, content, name, description, meta, ws), detail="written")

    @server.tool()
    @_tool_errors
    def edit(path: str, old: str, new: str) -> PathOutput:
        """Replace the text `old`, which must occur exactly once in the file, with `new`."""
        api.edit(path, old, new, ws)
        return PathOutput(path=path, detail="edited")

    @server.tool()
    @_tool_errors
    def move(src: str, dst: str) -> MoveOutput:
        """Move a note and rewrite every [[link]] to it."""
        return MoveOutput(src=src, dst=dst, relinked=api.move(src, dst, ws))

    @server.tool()
    @_tool_errors
    def delete(path: str) -> DeleteOutput:
        """Delete a note; returns the notes that still link to it."""
        return DeleteOutput(path=path, still_linked_from=api.delete(path, ws))

    @server.tool()
    @_tool_errors
    def frontmatter_get(path: str) -> FrontmatterOutput:
        """The YAML frontmatter of a note as a mapping."""
        return FrontmatterOutput(path=path, frontmatter=_plain(api.frontmatter_get(path, ws)))

    @server.tool()
    @_tool_errors
    def frontmatter_set(path: str, values: dict[str, Any]) -> FrontmatterOutput:
        """Set frontmatter keys of a note (other keys kept, in order)."""
        return FrontmatterOutput(path=path, frontmatter=_plain(api.frontmatter_set(path, values, ws)))

    @server.tool()
    @_tool_errors
    def recent(days: float = 7.0, limit: int = 20, layer: str | None = None) -> RecentOutput:
        """Notes and saved files changed in the last `days`, newest first."""
        return RecentOutput(notes=[NoteCard(**n) for n in api.recent(ws, days, limit, layer)])

    @server.tool()
    @_tool_errors
    def context(path: str, depth: int = 1, limit: int = 30) -> Annotated[CallToolResult, ContextOutput]:
        """A note with the notes it links to and that link to it, `depth` hops out."""
        from memflow.views import context_text

        found = api.context(path, ws, depth, limit)
        return _answer(ContextOutput(**found), context_text(found))

    @server.tool()
    @_tool_errors
    def capture(session_id: str, messages: list[dict[str, Any]], memory_hint: str = "",
                skip_invalid: bool = False) -> CaptureOutput:
        """Append messages ({"role", "content", optional "id", "timestamp", "name"}) to a
        conversation's log and write its daily notes. Every message is checked first: a bad one
        is an error naming it and nothing is written, unless `skip_invalid`."""
        result = api.capture(messages, session_id, ws, memory_hint, skip_invalid=skip_invalid)
        return CaptureOutput(session_id=session_id, new_messages=result.new_messages,
                             notes=[n.path for n in result.notes if n.path], skipped=result.skipped,
                             stopped=result.stopped, stopped_reason=(
                                 "forgotten by memflow forget (tombstones)" if result.stopped else ""),
                             trimmed=result.trimmed)

    @server.tool()
    @_tool_errors
    def index(paths: list[str] | None = None) -> IndexOutput:
        """Bring the search index up to date: the named files (workspace-relative; gone ones are
        dropped), or every changed file. Writes through this server are indexed already."""
        summary = api.index(ws, paths)
        return IndexOutput(added=summary.added, modified=summary.modified, deleted=summary.deleted,
                           chunks=summary.chunks, seconds=round(summary.seconds, 3), skipped=summary.skipped)

    @server.tool()
    @_tool_errors
    def dream_runs() -> RunsOutput:
        """Consolidation runs (newest last): id, start, status, actions, files touched."""
        return RunsOutput(runs=api.dream_runs(ws))

    @server.tool()
    @_tool_errors
    def status(deep: bool = False) -> StatusOutput:
        """The memory at a glance: index freshness and skipped files, each job's last run, the
        lock, the consolidation backlog, counts per layer, models (`deep`: call each), warnings."""
        return StatusOutput(status=_plain(api.status(ws, deep)))

    @server.tool()
    @_tool_errors
    def profile(budget_tokens: int = 300) -> Annotated[CallToolResult, ProfileOutput]:
        """Who the user is, for a system prompt: the current facts about the user and the people
        they named, newest first, each with its date and source, within `budget_tokens`."""
        found = api.profile(ws, budget_tokens)
        return _answer(ProfileOutput(**found), found["text"])

    @server.resource("memory://profile", mime_type="text/markdown",
                     description="The user's profile: current facts, newest first (300 tokens)")
    def profile_resource() -> str:
        return api.profile(ws)["text"]

    @server.resource("memory://{+path}", mime_type="text/markdown",
                     description="A workspace file, e.g. memory://digest/wiki/topic.md")
    def note(path: str) -> str:
        try:
            return api.read(path, None, None, ws)
        except (OSError, ValueError) as exc:
            raise ResourceNotFoundError(f"no note at {path!r}: {exc}") from exc

    @server.prompt()
    def recall_before_answering(question: str) -> str:
        """Search memory before answering a question that may depend on the past."""
        return (f"Before answering, call the `search` tool with the key words of this question "
                f"(and `read` or `context` on the best hits if you need more). Answer from what "
                f"memory says, cite the note paths you used, and say so if memory has nothing.\n\n"
                f"Question: {question}")

    return server


def serve(workspace: Path | str | Settings, transport: str = "stdio", host: str = "127.0.0.1",
          port: int = 8765, token: str | None = None, cli=None, announce=None) -> None:
    """Run the server until stopped. HTTP beyond loopback requires a bearer token. With `cli`
    (the CLI's command dispatch) it also answers the workspace's CLI calls (memflow/warm.py).
    `announce()` is called once the settings, the host, the token and the port have passed their
    checks, just before the server runs (the CLI prints its banner there, never before a refusal)."""
    settings = api.settings_for(workspace)
    if transport == "http" and host not in LOOPBACK and not token:
        raise ValueError(f"refusing to serve on {host} without a bearer token: pass --token "
                         "(or MEMFLOW_MCP_TOKEN), or bind 127.0.0.1")
    if transport == "http":
        check_port(host, port)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    logging.getLogger("mcp").setLevel(logging.WARNING)
    server = build_server(settings, token if transport == "http" else None)
    from memflow.tasks.index import Watcher, warm_snapshot

    try:
        warm_snapshot(settings)  # the first write and search then cost what the next ones do
    except Exception as exc:  # noqa: BLE001 - an unreadable snapshot: the tools say why when called
        logging.getLogger("memflow").warning("the search snapshot could not be opened: %s", exc)
    # what start-up made (the modules, the snapshot's row maps) lives as long as the server:
    # out of the collector's sight, a full collection inside a search no longer walks it
    gc.collect()
    gc.freeze()
    watcher = Watcher(settings).start()  # outside edits are indexed within ~1 s, and searches know
    from memflow.warm import WarmListener

    warm = WarmListener(str(settings.workspace), cli)
    if cli is not None:
        warm.start()  # the CLI's calls come here
    try:
        if announce is not None:
            announce()
        if transport == "stdio":
            server.run()
        elif transport == "http":
            server.run("streamable-http", host=host, port=port)
        else:
            _wait_for_signal(f"memflow serve: CLI socket {warm.path} (workspace {settings.workspace})")
    finally:
        warm.stop()
        watcher.stop()


def _wait_for_signal(ready: str) -> None:
    """`--transport socket`: serve the CLI only, until SIGTERM or Ctrl-C. `ready` is printed once
    SIGTERM is handled (a caller that stops the server as soon as it reads the line would
    otherwise kill it before it removes its socket file)."""
    import signal
    import threading

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(ready, file=sys.stderr, flush=True)
    try:
        while not stop.wait(3600):
            pass
    except KeyboardInterrupt:
        pass


def check_port(host: str, port: int) -> None:
    """A ValueError saying so when `host:port` cannot be bound (in use, no such address), before
    the server starts: uvicorn would log it and exit after the banner."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ValueError(f"cannot serve on {host}: not an address of this machine ({exc.strerror})") from exc
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise ValueError(f"cannot serve on {host}:{port}: {exc.strerror} (another server on that "
                             "port? pass --port)") from exc
