"""Execute the notebooks and save them with their outputs (tables and plots), which
`jupyter execute` alone does not keep:

    .venv/bin/python notebooks/run.py                          # both, into notebooks/executed/
    .venv/bin/python notebooks/run.py --workspace ~/memory workspace_analytics.ipynb
    .venv/bin/python notebooks/run.py --eval-dirs /tmp/ev,/tmp/ev-dream --out /tmp/nb
    .venv/bin/python notebooks/run.py --out notebooks           # refresh the committed copies

Given no parameters the notebooks build what they read in a temporary folder of their own (the
demo workspace; two evaluations of the shipped sample). Needs only nbclient, nbformat and
ipykernel (the `dev` extra); the kernel is this Python.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

HERE = Path(__file__).resolve().parent
NOTEBOOKS = ("workspace_analytics.ipynb", "retrieval_eval.ipynb")


def images(nb: nbformat.NotebookNode) -> int:
    """How many image outputs the executed notebook holds."""
    return sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
               if any(k.startswith("image/") for k in o.get("data", {})))


def save(nb: nbformat.NotebookNode, path: Path) -> None:
    """Write the notebook atomically (a temporary file beside it, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            nbformat.write(nb, f)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def run(source: Path, out: Path, timeout: int) -> tuple[Path, float, int]:
    """Execute `source` with this Python's kernel, working in `out`; save it as `out/<name>`
    (also when a cell fails, so the error can be read there) and return (path, seconds, images)."""
    nb = nbformat.read(source, as_version=4)
    started = time.monotonic()
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(out)}})
    target = out / source.name
    try:
        client.execute()
    finally:
        save(nb, target)
    return target, time.monotonic() - started, images(nb)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Execute notebooks and save them with their outputs.")
    parser.add_argument("notebooks", nargs="*", default=list(NOTEBOOKS),
                        help=f"notebook files or names in {HERE} (default: {' '.join(NOTEBOOKS)})")
    parser.add_argument("--out", type=Path, default=HERE / "executed",
                        help="folder the executed notebooks are written to, under their own names "
                             "(default notebooks/executed; `--out notebooks` overwrites the committed "
                             "copies)")
    parser.add_argument("--workspace", help="an indexed workspace for workspace_analytics "
                                            "(MEMFLOW_NOTEBOOK_WORKSPACE; default: build the demo)")
    parser.add_argument("--eval-dirs", help="comma-separated `memflow eval locomo --out` folders for "
                                            "retrieval_eval (MEMFLOW_NOTEBOOK_EVAL_DIRS; default: "
                                            "evaluate the sample)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds one cell may run (default 600)")
    args = parser.parse_args(argv)
    # the kernel inherits this environment: that is how the notebooks take their parameters
    if args.workspace:
        os.environ["MEMFLOW_NOTEBOOK_WORKSPACE"] = str(Path(args.workspace).expanduser().resolve())
    if args.eval_dirs:
        os.environ["MEMFLOW_NOTEBOOK_EVAL_DIRS"] = ",".join(
            str(Path(d).expanduser().resolve()) for d in args.eval_dirs.split(",") if d)
    sources = [Path(name) if Path(name).is_file() else HERE / name for name in args.notebooks]
    for name, source in zip(args.notebooks, sources):
        if not source.is_file():
            parser.error(f"no notebook {name} (here or in {HERE})")
    out = args.out.expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    for source in sources:
        try:
            target, seconds, count = run(source.resolve(), out, args.timeout)
        except CellExecutionError as exc:
            print(f"{source.name}: a cell failed; the notebook up to it is in {out / source.name}\n{exc}",
                  file=sys.stderr)
            return 1
        print(f"{target}  {seconds:.1f} s, {count} plot(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
