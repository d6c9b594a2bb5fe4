"""A fleet on one machine without a server: build N workspaces of generated notes for
`farm-bench` to time `memflow fleet index ROOT` (local process pool, no Prefect) against the
path that worked before (`--prefect --runner serial`: a temporary Prefect server, one at a time).

    .venv/bin/python benchmarks/fleet_local.py /tmp/fleet-bench --workspaces 10 --notes 30
    farm-bench -n 3 --timeout 900 -- sh -c 'rm -rf /tmp/fleet-bench/*/metadata/index; \
        exec .venv/bin/memflow fleet index /tmp/fleet-bench' \
      --vs "sh -c 'rm -rf /tmp/fleet-bench/*/metadata/index; exec .venv/bin/memflow --prefect fleet index /tmp/fleet-bench --runner serial'"
"""

from __future__ import annotations

import argparse
import random
import shutil
from pathlib import Path


def build(root: Path, workspaces: int, notes: int, seed: int = 29) -> None:
    from memflow.schemas.settings import load_settings
    from memflow.tasks.capture import auto_memory
    from memflow.tasks.ground.workspace import init_workspace, layout

    rng = random.Random(seed)
    vocabulary = [f"{rng.choice('bcdfgklmnprstvz')}{rng.choice('aeiou')}{rng.choice('lmnrst')}"
                  f"{rng.choice('aeiou')}{rng.choice('bdgkmnprst')}" for _ in range(5000)]
    shutil.rmtree(root, ignore_errors=True)
    for i in range(workspaces):
        settings = load_settings(root / f"agent-{i:03d}")
        init_workspace(layout(settings))
        messages = [{"id": str(n), "role": "user", "timestamp": f"2026-08-{1 + n % 28:02d}T08:00:00Z",
                     "content": "Remember: " + " ".join(rng.choice(vocabulary) for _ in range(40)) + "."}
                    for n in range(notes)]
        auto_memory(settings, messages, f"bench-{i}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("--workspaces", type=int, default=10)
    parser.add_argument("--notes", type=int, default=30)
    args = parser.parse_args()
    build(args.root, args.workspaces, args.notes)
    print(f"built {args.workspaces} workspace(s) under {args.root}")
