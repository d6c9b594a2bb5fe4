"""The warm CLI (memflow/warm.py): with `memflow serve` running, CLI reads go through its Unix
socket and print what a cold call prints; without one (or with a stale socket file) the CLI runs
cold as before."""

import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from memflow import api

NOTES = {
    "daily/2026-03-02/garden.md": "# Garden\n\nPlanted tomatoes beside the shed; the soil is clay.\n",
    "daily/2026-03-05/bike.md": "# Bike\n\nThe blue bicycle needs a new chain before the trip to Porto.\n",
    "digest/wiki/porto.md": "---\nname: Porto trip\n---\n# Porto\n\nTrain on 12 April, back on the 19th.\n",
}


@pytest.fixture
def runtime():
    """A short private runtime folder (socket paths stop at 107 bytes)."""
    with tempfile.TemporaryDirectory(prefix="mfw", dir="/tmp") as folder:
        yield folder


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    api.init(ws)
    for rel, text in NOTES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    api.index(ws)
    return ws


def env_of(runtime: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMFLOW_")}
    return {**env, "XDG_RUNTIME_DIR": runtime, "PREFECT_API_URL": "", **extra}


def cli(ws: Path, env: dict, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memflow.cli", "-w", str(ws), *argv], env=env,
                          capture_output=True, text=True, timeout=120)


def start_server(ws: Path, env: dict) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "memflow.cli", "-w", str(ws), "serve",
                             "--transport", "socket"], env=env, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()  # printed once the socket listens
    if "CLI socket" not in line:
        proc.kill()
        raise AssertionError(f"server did not start: {line}{proc.stderr.read()}")
    return proc


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=30)


def socket_file(ws: Path, runtime: str) -> Path:
    os.environ["XDG_RUNTIME_DIR"], old = runtime, os.environ.get("XDG_RUNTIME_DIR")
    try:
        from memflow.warm import socket_path

        return Path(socket_path(str(ws)))
    finally:
        if old is None:
            del os.environ["XDG_RUNTIME_DIR"]
        else:
            os.environ["XDG_RUNTIME_DIR"] = old


CALLS = [["search", "bicycle chain"], ["search", "Porto", "--json"],
         ["search", "garden soil", "--budget", "200"],
         ["read", "daily/2026-03-05/bike.md", "--start", "3", "--end", "3"], ["status", "--json"]]


def comparable(argv: list[str], stdout: str):
    """A search's JSON says how its freshness was checked: by the server's watcher, or by a
    cold process's scan; the rest is the same."""
    if argv[0] != "search" or "--json" not in argv:
        return stdout
    data = json.loads(stdout)
    for key in ("checked", "unseen"):
        data["watermark"].pop(key, None)
    return data


def test_a_served_workspace_answers_the_cli_as_the_cold_path_does(workspace, runtime):
    cold = [cli(workspace, env_of(runtime, MEMFLOW_WARM="0"), *argv) for argv in CALLS]
    assert all(c.returncode == 0 for c in cold), [c.stderr for c in cold]
    server = start_server(workspace, env_of(runtime))
    try:
        warm = [cli(workspace, env_of(runtime, MEMFLOW_WARM="require"), *argv) for argv in CALLS]
    finally:
        stop(server)
    for argv, c, w in zip(CALLS, cold, warm):
        assert w.returncode == 0, w.stderr
        assert f"answered by memflow serve, pid {server.pid}" in w.stderr
        assert comparable(argv, w.stdout) == comparable(argv, c.stdout), argv
    assert "bike.md" in warm[0].stdout and "Train on 12 April" in warm[1].stdout


def test_the_socket_is_private_and_goes_with_the_server(workspace, runtime):
    server = start_server(workspace, env_of(runtime))
    path = socket_file(workspace, runtime)
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert stat.S_ISSOCK(path.stat().st_mode)
    finally:
        stop(server)
    assert not path.exists()
    cold = cli(workspace, env_of(runtime), "search", "tomatoes")  # no server: cold, as before
    assert cold.returncode == 0 and "garden.md" in cold.stdout
    refused = cli(workspace, env_of(runtime, MEMFLOW_WARM="require"), "search", "tomatoes")
    assert refused.returncode == 1 and "no memflow server answered" in refused.stderr


def test_a_stale_socket_file_runs_cold_and_the_next_server_replaces_it(workspace, runtime):
    path = socket_file(workspace, runtime)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))  # a server that died: the file stays, nobody listens
    dead.close()
    assert path.exists()
    started = time.monotonic()
    cold = cli(workspace, env_of(runtime), "search", "bicycle")
    assert cold.returncode == 0 and "bike.md" in cold.stdout
    required = cli(workspace, env_of(runtime, MEMFLOW_WARM="require"), "search", "bicycle")
    assert required.returncode == 1 and "stale server socket" in required.stderr
    assert time.monotonic() - started < 120
    server = start_server(workspace, env_of(runtime))
    try:
        warm = cli(workspace, env_of(runtime, MEMFLOW_WARM="require"), "search", "bicycle")
    finally:
        stop(server)
    assert warm.returncode == 0 and warm.stdout == cold.stdout


def test_a_server_with_other_settings_leaves_the_call_cold(workspace, runtime):
    server = start_server(workspace, env_of(runtime))
    try:
        other = env_of(runtime, MEMFLOW_WARM="require", MEMFLOW_TOP_K="3")
        refused = cli(workspace, other, "search", "bicycle")
        fallback = cli(workspace, {**other, "MEMFLOW_WARM": "1"}, "search", "bicycle")
    finally:
        stop(server)
    assert refused.returncode == 1 and "other MEMFLOW_* settings" in refused.stderr
    assert fallback.returncode == 0 and "bike.md" in fallback.stdout
    assert "answered by memflow serve" not in fallback.stderr


def test_the_cli_imports_little_before_asking_the_server():
    """What a warm call loads before connecting: no pydantic, no index, no numpy."""
    probe = ("import sys, memflow.cli, memflow.warm; "
             "print(','.join(m for m in ('pydantic', 'numpy', 'pyarrow', 'prefect', 'litellm', "
             "'memflow.api', 'memflow.schemas.settings') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_cold_cli_search_imports_no_prefect_lancedb_or_litellm(workspace, runtime):
    """Without a server the CLI runs the search itself, importing only what search needs."""
    probe = ("import sys; from memflow import cli; sys.argv = ['memflow', '-w', sys.argv[1], "
             "'search', 'bicycle chain']\ntry:\n    cli.main()\nexcept SystemExit:\n    pass\n"
             "print('LOADED', ','.join(m for m in ('prefect', 'lancedb', 'litellm', 'torch') "
             "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe, str(workspace)], env=env_of(runtime),
                         capture_output=True, text=True, timeout=120, check=True)
    assert "bike.md" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "LOADED"


def cli_in(folder: Path, ws: Path, env: dict, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """A CLI call from `folder` (a relative `--file` means the caller's folder)."""
    return subprocess.run([sys.executable, "-m", "memflow.cli", "-w", str(ws), *argv], env=env, cwd=folder,
                          input=stdin, capture_output=True, text=True, timeout=120)


WRITES = [["write", "daily/2026-03-07/kayak.md", "--content", "# Kayak\n\nBorrowed a red kayak from Ines.\n"],
          ["write", "daily/2026-03-08/owl.md", "--file", "owl.md", "--name", "Owl"],
          ["write", "daily/2026-03-09/moth.md", "--file", "-", "--json"],
          ["edit", "daily/2026-03-05/bike.md", "--old", "blue bicycle", "--new", "green bicycle"],
          ["fm", "set", "digest/wiki/porto.md", "tags=[trip, rail]"],
          ["move", "daily/2026-03-02/garden.md", "daily/2026-03-02/allotment.md"],
          ["delete", "daily/2026-03-07/kayak.md"],
          ["search", "green bicycle owl moth", "--json"]]
STDIN = "# Moth\n\nA luna moth on the porch light, pale green.\n"


def run_writes(ws: Path, env: dict, caller: Path) -> list[subprocess.CompletedProcess]:
    return [cli_in(caller, ws, env, *argv, stdin=STDIN if "-" in argv else None) for argv in WRITES]


def files_of(ws: Path) -> dict[str, str]:
    return {str(p.relative_to(ws)): p.read_text(encoding="utf-8")
            for layer in ("daily", "digest") for p in sorted((ws / layer).rglob("*.md"))}


def test_writes_through_the_server_do_what_cold_writes_do(tmp_path, runtime):
    """write (--content, a --file relative to the caller's folder, stdin), edit, fm set, move and
    delete answered by the server: same output, same files, and the server's next search finds
    what they wrote."""
    caller = tmp_path / "caller"
    caller.mkdir()
    (caller / "owl.md").write_text("# Owl\n\nA barn owl nests above the woodshed.\n", encoding="utf-8")
    results = {}
    for mode in ("cold", "warm"):
        ws = tmp_path / mode
        api.init(ws)
        for rel, text in NOTES.items():
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_text(text, encoding="utf-8")
        api.index(ws)
        if mode == "cold":
            results[mode] = (run_writes(ws, env_of(runtime, MEMFLOW_WARM="0"), caller), files_of(ws))
            continue
        server = start_server(ws, env_of(runtime))
        try:
            results[mode] = (run_writes(ws, env_of(runtime, MEMFLOW_WARM="require"), caller), files_of(ws))
        finally:
            stop(server)
    (cold, cold_files), (warm, warm_files) = results["cold"], results["warm"]
    for argv, c, w in zip(WRITES[:-1], cold, warm):
        assert c.returncode == 0 and w.returncode == 0, (argv, c.stderr, w.stderr)
        assert "answered by memflow serve" in w.stderr, argv
        assert w.stdout == c.stdout, argv
    assert warm_files == cold_files
    hits = [json.loads(run[-1].stdout)["results"] for run in (cold, warm)]
    assert hits[0] == hits[1] and hits[0]  # indexed as the cold writes were (the times differ)
    assert "luna moth" in warm_files["daily/2026-03-09/moth.md"]
    assert "barn owl" in warm_files["daily/2026-03-08/owl.md"]
    assert "daily/2026-03-07/kayak.md" not in warm_files and "daily/2026-03-02/allotment.md" in warm_files
    found = {hit["path"] for hit in hits[1]}
    assert {"daily/2026-03-05/bike.md", "daily/2026-03-08/owl.md", "daily/2026-03-09/moth.md"} <= found


def test_a_write_whose_file_the_cli_cannot_read_runs_cold_and_says_why(workspace, runtime, tmp_path):
    server = start_server(workspace, env_of(runtime))
    try:
        warm = cli_in(tmp_path, workspace, env_of(runtime), "write", "daily/2026-03-10/x.md", "--file", "missing.md")
    finally:
        stop(server)
    cold = cli_in(tmp_path, workspace, env_of(runtime, MEMFLOW_WARM="0"), "write", "daily/2026-03-10/x.md",
                  "--file", "missing.md")
    assert warm.returncode == cold.returncode != 0
    assert warm.stderr == cold.stderr and "missing.md" in cold.stderr
    assert not (workspace / "daily/2026-03-10/x.md").exists()
