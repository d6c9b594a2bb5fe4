"""Outside edits found by a running server (issue #58): `memflow serve --transport socket` on a
workspace, then `--edits` files written by plain Python file writes as another program would
(alternately a new note in the last day folder and a line appended in place to a note of an old
day, years back), and after each the server's search asked for the new word (the warm CLI's
socket, memflow/warm.py, as `memflow search WORD --json` would) every `--poll` seconds until
the edited file is the hit. Reports how many were found within 1 s, p50/p95 of the time from
the write's return to the answer that found it, and the server's CPU seconds over the run.

    cp -a /tmp/ws24k /tmp/ws24k-edits   # the edits change the workspace
    .venv/bin/python benchmarks/outside_edits.py --root /tmp/ws24k-edits --edits 100

The workspace must be indexed (`benchmarks/realistic_search.py` makes one). One JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def start_server(root: Path, log: Path) -> subprocess.Popen:
    """The server, its stderr to `log` (a pipe nobody reads would block it once full)."""
    proc = subprocess.Popen([sys.executable, "-m", "memflow.cli", "-w", str(root), "serve", "--transport",
                             "socket"], stderr=log.open("w"), stdout=subprocess.DEVNULL)
    started = time.monotonic()
    while "CLI socket" not in log.read_text():  # printed once the socket listens
        if proc.poll() is not None or time.monotonic() - started > 300:
            proc.kill()
            raise RuntimeError(f"the server did not start: {log.read_text()[-2000:]}")
        time.sleep(0.1)
    return proc


def server_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ask(root: Path, word: str) -> list[str]:
    """The paths the server's search finds for `word` (what `memflow search WORD --json` prints)."""
    from memflow.cli import _parser
    from memflow.warm import _exchange, memflow_env, socket_path

    args = _parser().parse_args(["-w", str(root), "search", word, "--json", "--limit", "3"])
    reply, why = _exchange(socket_path(str(root)), {"args": vars(args), "env": memflow_env(),
                                                     "workspace": os.path.realpath(root)})
    if reply is None or "cold" in reply or reply["code"] != 0:
        raise RuntimeError(f"the server did not answer: {why or reply}")
    return [hit["path"] for hit in json.loads(reply["stdout"])["results"]]


def edit(root: Path, n: int, notes: list[str], last_day: str, rng: random.Random) -> tuple[str, str]:
    """Write file `n` as another program would (open, write, close; no rename); (path, word)."""
    from realistic_search import token

    word = token(50000 + n)
    if n % 2:
        rel = rng.choice(notes)
        with open(root / rel, "a", encoding="utf-8") as handle:
            handle.write(f"\nAn outside line about {word}.\n")
    else:
        rel = f"daily/{last_day}/outside-{n}.md"
        with open(root / rel, "w", encoding="utf-8") as handle:
            handle.write(f"# Outside {n}\n\nA note another program wrote about {word}.\n")
    return rel, word


def run(root: Path, edits: int, poll: float, give_up: float) -> dict:
    notes = sorted(p.relative_to(root).as_posix() for p in (root / "daily").glob("*/*.md"))
    days = sorted(d.name for d in (root / "daily").iterdir() if d.is_dir())
    old = [n for n in notes if n.split("/")[1] < days[len(days) // 2]]  # the older half: years back
    rng = random.Random(11)
    log = root.parent / f"{root.name}.serve.log"
    server = start_server(root, log)
    try:
        ask(root, "warm up")
        cpu = server_cpu(server.pid)
        latencies, missed, slow = [], [], []
        for n in range(edits):
            rel, word = edit(root, n, old, days[-1], rng)
            written = time.perf_counter()
            while True:
                if rel in ask(root, word):
                    latencies.append(time.perf_counter() - written)
                    if latencies[-1] > 1.0:
                        slow.append((rel, round(1000 * latencies[-1])))
                    break
                if time.perf_counter() - written > give_up:
                    missed.append(rel)
                    break
                time.sleep(poll)
        cpu = server_cpu(server.pid) - cpu
    finally:
        server.terminate()
        server.wait(timeout=30)
    latencies.sort()
    return {"edits": edits, "found": len(latencies), "found_within_1s": sum(t <= 1.0 for t in latencies),
            "p50_ms": round(1000 * statistics.median(latencies), 1) if latencies else None,
            "p95_ms": round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 1) if latencies else None,
            "max_ms": round(1000 * latencies[-1], 1) if latencies else None,
            "server_cpu_s": round(cpu, 2), "missed": missed[:10], "over_1s": slow[:10], "server_log": str(log)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="an indexed workspace (a copy: it is edited)")
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--poll", type=float, default=0.02, help="seconds between searches")
    parser.add_argument("--give-up", type=float, default=10.0, help="seconds after which an edit counts as missed")
    args = parser.parse_args()
    print(json.dumps({"root": str(args.root), **run(args.root, args.edits, args.poll, args.give_up)}))


if __name__ == "__main__":
    main()
