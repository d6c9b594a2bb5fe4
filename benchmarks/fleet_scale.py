"""Fan-out on Dask: wall time with 1 and 2 workers in the same run, and the same results.

    .venv/bin/python benchmarks/fleet_scale.py [--data ../shared/data/locomo/locomo-dev.json]
        [--workspaces 20] [--conversations 1] [--skip-eval]

1. `memflow eval locomo` (the evaluate flow, --runner dask) on the data with 1 and 2 workers.
2. The fleet index of N workspaces (each one LoCoMo conversation captured, index deleted before
   each run) with 1 and 2 workers.
Prints a table (seconds, ratio 2 workers / 1 worker) and checks the results are identical.
Uses a Prefect test server of its own (a temporary PREFECT_HOME).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]


def build_fleet(data: list[dict], root: Path, count: int, per_workspace: int = 1) -> list[str]:
    from memflow.schemas.settings import load_settings
    from memflow.tasks.capture import auto_memory
    from memflow.tasks.evaluate.locomo import session_id, session_messages, session_numbers
    from memflow.tasks.ground.workspace import init_workspace, layout

    spaces = []
    for i in range(count):
        settings = load_settings(root / f"agent-{i:03d}")
        init_workspace(layout(settings))
        for k in range(per_workspace):  # an agent with a longer history: several conversations
            sample = data[(i + k) % len(data)]
            for number in session_numbers(sample["conversation"]):
                auto_memory(settings, session_messages(sample, number), session_id(sample, number))
        spaces.append(str(settings.workspace))
    return spaces


def drop_index(spaces: list[str]) -> None:
    for ws in spaces:
        shutil.rmtree(Path(ws) / "metadata" / "index")
        (Path(ws) / "metadata" / "index").mkdir()
        (Path(ws) / "metadata" / "state" / "index_watermark.json").unlink(missing_ok=True)


def warm_up() -> None:
    """What a standing worker has done before: index a small workspace (imports, caches)."""
    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.fileops import write_file
    from memflow.tasks.ground.workspace import init_workspace, layout
    from memflow.tasks.index import run_index

    settings = load_settings(Path(tempfile.mkdtemp(prefix="warm-")))
    init_workspace(layout(settings))
    write_file(layout(settings), "daily/2026-01-01/a.md", "# Warm\n\nSome words to index.\n", name="Warm")
    run_index(settings)
    shutil.rmtree(settings.workspace, ignore_errors=True)


def timed_fleet(spaces: list[str], workers: int, standing: bool = False) -> tuple[float, dict]:
    """The fleet index with `workers` Dask workers: a LocalCluster the run starts (its start-up,
    ~2.5 s, and each worker's imports are in the time), or with `standing` one started and warmed
    before the clock starts, reached by its address (a fleet's standing Dask cluster)."""
    from memflow.flows.fleet import fleet_index

    drop_index(spaces)
    cluster = None
    if standing:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        with Client(cluster) as client:
            client.run(warm_up)
    started = time.perf_counter()
    summary = fleet_index(spaces, runner="dask", workers=workers, wait=60,
                          address=cluster.scheduler_address if cluster else "")
    seconds = time.perf_counter() - started
    if cluster:
        cluster.close()
    assert all(o.status == "ok" for o in summary.outcomes), summary.line()
    # what each workspace holds after the run (the run's own timing left out)
    return seconds, {o.workspace: o.changed.split(" seconds=")[0] for o in summary.outcomes}


def timed_eval(data_path: str, out: Path, workers: int) -> tuple[float, dict]:
    from memflow.flows.evaluate import evaluate_flow

    started = time.perf_counter()
    summary = evaluate_flow(data_path, str(out), runner="dask", workers=workers)
    seconds = time.perf_counter() - started
    summary.pop("run")
    return seconds, summary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(ROOT.parent / "shared/data/locomo/locomo-dev.json"))
    parser.add_argument("--workspaces", type=int, default=20)
    parser.add_argument("--conversations", type=int, default=1,
                        help="LoCoMo conversations per workspace (a longer history per agent)")
    parser.add_argument("--skip-eval", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fleet-scale-"))
    os.environ["PREFECT_HOME"] = str(work / "prefect-home")
    from prefect.testing.utilities import prefect_test_harness

    rows = []
    with prefect_test_harness(server_startup_timeout=180):
        data = json.loads(Path(args.data).read_text(encoding="utf-8"))
        spaces = build_fleet(data, work / "fleet", args.workspaces, args.conversations)
        name = f"fleet index, {len(spaces)} workspaces of {args.conversations} conversation(s)"
        one, first = timed_fleet(spaces, 1)
        two, second = timed_fleet(spaces, 2)
        rows.append((f"{name}, LocalCluster started by the run", one, two, first == second))
        one, third = timed_fleet(spaces, 1, standing=True)
        two, fourth = timed_fleet(spaces, 2, standing=True)
        rows.append((f"{name}, standing cluster (--address)", one, two, first == third == fourth))
        if not args.skip_eval:
            one, first = timed_eval(args.data, work / "eval-1", 1)
            two, second = timed_eval(args.data, work / "eval-2", 2)
            rows.append((f"eval locomo {Path(args.data).name}", one, two, first == second))
    print("| run | 1 worker (s) | 2 workers (s) | ratio 2/1 | same results |")
    print("|---|---|---|---|---|")
    for name, one, two, same in rows:
        print(f"| {name} | {one:.1f} | {two:.1f} | {two / one:.2f} | {'yes' if same else 'NO'} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
