"""ReMe 0.4.2's index of a workspace as one whole process (the scale run's other side):

    benchmarks/.reme-venv/bin/python benchmarks/reme_index.py WORKSPACE [--cold]

`--cold` rebuilds from nothing (ReMe's `reindex` then its benchmark preset's manual
`index_update` job); without it only `index_update` runs, which is what a one-file change costs
ReMe in a fresh process. BM25 only (its default config has no embedding store), no watchers or
crons, as in reme_side.py.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path


def reme_config(root: Path) -> dict:
    """ReMe's app config for `root`, BM25 only: no watchers or crons in a benchmark, its own
    benchmark preset's manual index job instead."""
    import reme
    import yaml
    from reme.config import resolve_app_config

    config = resolve_app_config(log_config=False, workspace_dir=str(root), enable_logo=False,
                                log_to_console=False, log_to_file=False)
    jobs = config["jobs"]
    for name in [n for n, job in jobs.items() if job.get("backend") in ("background", "cron")]:
        del jobs[name]
    preset = yaml.safe_load((Path(reme.__file__).parent / "config" / "benchmark.yaml").read_text())
    jobs["index_update"] = preset["jobs"]["index_update"]
    return config


async def index(root: Path, cold: bool) -> None:
    from reme.reme import ReMe

    async with ReMe(**reme_config(root)) as app:
        if cold:
            await app.run_job("reindex")
        await app.run_job("index_update")


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    asyncio.run(index(Path(sys.argv[1]), "--cold" in sys.argv[2:]))
