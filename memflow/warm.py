"""The warm CLI: while `memflow serve` runs for a workspace, CLI commands that read (search,
read, status, profile, recent, context) and those that write one note (write, edit, fm, move,
delete) are answered by it over a Unix domain socket instead of a cold process loading the
index, the settings and (vectors on) the embedding model again: with vectors on, a cold `write`
loads the model to embed the note it writes. A write's content given as `--file` (a path, or
`-` for stdin) is read by the CLI, in the caller's folder, and sent as the content; a file the
CLI cannot read runs cold, which says why. The server takes the workspace lock as a cold call
does.

Protocol: one JSON line each way. The CLI sends its parsed arguments, its `MEMFLOW_*`
environment and the workspace; the server runs the CLI's own command body on them
(`commands.dispatch`, handed to it by `memflow serve`) with this thread's stdout and stderr
captured, and answers
`{"code", "stdout", "stderr", "pid"}`, or `{"cold": reason}` when it is not the right server for
the call (another environment), and the CLI then runs cold. The output is the cold path's byte
for byte, because it is the same code.

The socket lives in the user's runtime folder (`$XDG_RUNTIME_DIR`, else `/tmp/memflow-<uid>`,
mode 0700, refused when another user owns it or others may write it) as
`serve-<sha256 of the workspace's real path>.sock`, mode 0600: only its owner can connect, and
nothing listens on the network. A socket file left by a server that died is found stale by a
refused connection: the CLI runs cold, the next server replaces it.

`MEMFLOW_WARM`: unset or `1` (try the server, else cold), `0` (always cold), `require` (fail
when no server answers: for tests and benchmarks; it also says on stderr that the server
answered). This module is imported by every CLI call: only the standard library's small modules
at the top, the server's imports inside its functions.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys

# commands the server runs for the CLI: those that read, and those that change one note (under
# the workspace lock, as cold). Capture, dream, index and forget stay cold: long jobs whose
# progress and lock waits belong to the caller's terminal.
WARM_COMMANDS = {"search", "read", "status", "profile", "recent", "context",
                 "write", "edit", "fm", "move", "delete"}
CONNECT_SECONDS = 0.5
MAX_SOCKET_PATH = 100  # AF_UNIX paths stop at 107 bytes on Linux
ANSWER_SECONDS = float(os.environ.get("MEMFLOW_WARM_TIMEOUT", "300"))  # a first vector search loads the model
_OWN = ("MEMFLOW_WARM", "MEMFLOW_WARM_TIMEOUT")  # the client's switches, not settings


class NoServer(RuntimeError):
    """MEMFLOW_WARM=require and no server answered."""


def runtime_dir(short: bool = False) -> str:
    """The user's private folder for sockets; made 0700 when missing, refused when unsafe."""
    base = None if short else os.environ.get("XDG_RUNTIME_DIR")
    folder = os.path.join(base, "memflow") if base and os.path.isdir(base) else \
        os.path.join("/tmp", f"memflow-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.stat(folder)
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise PermissionError(f"{folder}: owned by another user or writable by others; not used "
                              "for the memflow server socket")
    return folder


def socket_path(workspace: str) -> str:
    key = hashlib.sha256(os.path.realpath(workspace).encode()).hexdigest()[:24]
    path = os.path.join(runtime_dir(), f"serve-{key}.sock")
    if len(path.encode()) > MAX_SOCKET_PATH:  # a deep $XDG_RUNTIME_DIR: the short fallback
        path = os.path.join(runtime_dir(short=True), f"serve-{key}.sock")
    return path


def memflow_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.upper().startswith("MEMFLOW_") and k not in _OWN}


# ---- client (every CLI call of a warm command) ----

def ask_server(args) -> int | None:
    """Run a parsed CLI call on the workspace's server: its exit code after writing its output,
    or None when no server answers for it (no socket, a stale one, another environment)."""
    mode = os.environ.get("MEMFLOW_WARM", "1")
    if mode == "0":
        return None
    folder = args.workspace or "."
    if args.command == "write" and args.file is not None:
        if not _content_read(args):
            return None  # a file this process cannot read: the cold call says why
    try:
        path = socket_path(folder)
    except PermissionError:  # an unsafe runtime folder: no server can listen there either
        if mode == "require":
            raise
        return None
    reply, why = _exchange(path, {"args": vars(args), "env": memflow_env(),
                                                 "workspace": os.path.realpath(folder)})
    if reply is None or "cold" in reply:
        if mode == "require":
            raise NoServer(f"no memflow server answered for {os.path.realpath(folder)}: "
                           f"{why or reply['cold']} (MEMFLOW_WARM=require)")
        return None
    sys.stdout.write(reply["stdout"])
    sys.stdout.flush()
    sys.stderr.write(reply["stderr"])
    if mode == "require":
        print(f"(answered by memflow serve, pid {reply['pid']})", file=sys.stderr)
    return int(reply["code"])


def _content_read(args) -> bool:
    """A write's `--file` read here, where its path means what the caller meant (their folder,
    their stdin), into `args.content`: the server and the cold path then write the same text.
    False, args untouched, when it cannot be read (the cold path reports it); stdin is always
    read, and kept, since it cannot be read twice."""
    if args.file == "-":
        args.content, args.file = sys.stdin.read(), None
        return True
    try:
        with open(args.file, encoding="utf-8") as handle:
            args.content = handle.read()
    except (OSError, UnicodeDecodeError):
        return False
    args.file = None
    return True


def _exchange(path: str, request: dict) -> tuple[dict | None, str]:
    if not os.path.exists(path):
        return None, "no server socket"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_SECONDS)
        try:
            sock.connect(path)
        except (ConnectionRefusedError, FileNotFoundError, socket.timeout) as exc:
            return None, f"stale server socket {path} ({type(exc).__name__})"
        sock.settimeout(ANSWER_SECONDS)
        sock.sendall(json.dumps(request).encode() + b"\n")
        sock.shutdown(socket.SHUT_WR)
        data = b"".join(iter(lambda: sock.recv(1 << 16), b""))
    finally:
        sock.close()
    if not data:  # the server went away mid-call: nothing was printed, run cold
        return None, "the server closed the connection without an answer"
    return json.loads(data), ""


# ---- server (inside `memflow serve`) ----

class _ThreadStreams:
    """sys.stdout / sys.stderr of a server: a request's thread writes to its own buffer, every
    other thread to the real stream (the MCP stdio transport holds the real one's buffer)."""

    def __init__(self, real):
        import threading

        self._real, self._local = real, threading.local()

    def _target(self):
        return getattr(self._local, "buffer", None) or self._real

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return self._target().isatty()

    def __getattr__(self, name: str):
        return getattr(self._target(), name)


def _capture_streams() -> tuple[_ThreadStreams, _ThreadStreams]:
    if not isinstance(sys.stdout, _ThreadStreams):
        sys.stdout = _ThreadStreams(sys.stdout)
    if not isinstance(sys.stderr, _ThreadStreams):
        sys.stderr = _ThreadStreams(sys.stderr)
    return sys.stdout, sys.stderr


def answer(request: dict, workspace: str, env: dict[str, str], cli) -> dict:
    """Run one parsed CLI call with `cli` (the CLI's dispatch) as the cold CLI would, its
    output captured (this thread's only)."""
    import argparse
    import io

    if request.get("workspace") != workspace:
        return {"cold": f"this server serves {workspace}"}
    if request.get("env") != env:
        return {"cold": "the server runs with other MEMFLOW_* settings"}
    args = argparse.Namespace(**request["args"])
    if args.command not in WARM_COMMANDS:
        return {"cold": f"`{args.command}` is not answered by the server"}
    args.workspace, args.wait = workspace, None  # --wait would set the server's environment
    out, err = _capture_streams()
    out._local.buffer, err._local.buffer = io.StringIO(), io.StringIO()
    try:
        code = cli(args)
        return {"code": code, "stdout": out._local.buffer.getvalue(),
                "stderr": err._local.buffer.getvalue(), "pid": os.getpid()}
    finally:
        out._local.buffer = err._local.buffer = None


class WarmListener:
    """The server's socket: a thread per connection, started and stopped with `memflow serve`.
    Owns the socket file, so it is a class."""

    def __init__(self, workspace: str, cli):
        self.workspace, self.cli = os.path.realpath(workspace), cli
        self.path = socket_path(self.workspace)
        self.env = memflow_env()
        self.server = None

    def start(self) -> "WarmListener":
        import socketserver
        import threading

        if _exchange_alive(self.path):  # two agents' stdio servers on one workspace: one answers
            print(f"memflow serve: another server answers the CLI for {self.workspace} "
                  f"({self.path}); this one serves MCP only", file=sys.stderr, flush=True)
            return self
        if os.path.exists(self.path):
            os.unlink(self.path)  # stale: its server is gone
        listener = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                line = self.rfile.readline()
                if not line:  # a liveness probe (a starting server's): no call
                    return
                request = json.loads(line)
                reply = answer(request, listener.workspace, listener.env, listener.cli)
                self.wfile.write(json.dumps(reply).encode())

        _capture_streams()
        old = os.umask(0o177)  # the socket file is created 0600
        try:
            self.server = socketserver.ThreadingUnixStreamServer(self.path, Handler)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        self.server.daemon_threads = True
        self._inode = os.stat(self.path).st_ino
        threading.Thread(target=self.server.serve_forever, name="memflow-warm", daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is None:
            return
        self.server.shutdown()
        self.server.server_close()
        try:
            if os.stat(self.path).st_ino == self._inode:  # not a later server's
                os.unlink(self.path)
        except FileNotFoundError:
            pass


def _exchange_alive(path: str) -> bool:
    if not os.path.exists(path):
        return False
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_SECONDS)
    try:
        sock.connect(path)
        return True
    except (ConnectionRefusedError, FileNotFoundError, socket.timeout):
        return False
    finally:
        sock.close()
