"""Index rows before and after a change (issue #58): every indexed file of each workspace parsed
into its files row, chunk rows and link rows (`rows.file_rows_of`, with what it skips and warns
about) by this tree and by another commit's, compared byte for byte (their reprs: types, key
order and values).

    .venv/bin/python benchmarks/rows_identity.py --rev main /tmp/ws4800 /tmp/ws-hostile

The other commit is `git archive`d into a temporary folder and imported from there (its
`memflow` package laid out as the install lays it out). Prints one line per workspace and exits
1 when a file's rows differ, naming the first files and where their reprs part.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def dump(root: Path, out: Path) -> None:
    """Every indexed file of `root` -> repr of (rows, skipped, warnings), pickled to `out`."""
    logging.disable(logging.CRITICAL)
    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import layout
    from memflow.tasks.index.indexing import indexed_files, pipeline_version
    from memflow.tasks.index.rows import file_rows_of

    settings = load_settings(root)
    lay = layout(settings)
    pipeline = pipeline_version(settings)
    rows = {}
    for rel in sorted(indexed_files(lay, settings.resource_index_max_bytes)):
        skipped: dict[str, str] = {}
        warnings: dict[str, str] = {}
        built = file_rows_of(lay, settings, rel, pipeline, skipped, warnings)
        rows[rel] = repr((built, sorted(skipped.items()), sorted(warnings.items())))
    out.write_bytes(pickle.dumps(rows))


def other_tree(rev: str, into: Path) -> Path:
    """`rev` of this repository as an importable tree: its folders, and `memflow/` holding
    flows, tasks and schemas as the install maps them."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    for name in ("flows", "tasks", "schemas"):
        (into / "memflow" / name).symlink_to(into / name, target_is_directory=True)
    return into


def rows_of(root: Path, tree: Path | None, out: Path) -> dict[str, str]:
    """`dump` run by this tree (`tree` None) or by `tree`, in a process of its own (run from the
    temporary folder, so that the current folder's `memflow` is not the one imported)."""
    env = {**os.environ, "PYTHONPATH": str(tree)} if tree is not None else None
    command = [sys.executable, str(Path(__file__)), "--dump", str(root), str(out)]
    subprocess.run(command, check=True, cwd=tempfile.gettempdir(), env=env)
    return pickle.loads(out.read_bytes())


def compare(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Lines naming the files whose rows differ (at most five), where their reprs part."""
    if before.keys() != after.keys():
        return [f"files differ: {sorted(set(before) ^ set(after))[:5]}"]
    lines = []
    for rel in [r for r in before if before[r] != after[r]][:5]:
        a, b = before[rel], after[rel]
        at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        lines.append(f"{rel} at {at}: before ...{a[max(0, at - 80):at + 80]!r}... after ...{b[max(0, at - 80):at + 80]!r}...")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("workspaces", nargs="*", type=Path)
    parser.add_argument("--rev", default="main", help="the commit to compare this tree with")
    parser.add_argument("--dump", nargs=2, type=Path, metavar=("WORKSPACE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        dump(*args.dump)
        return
    failed = False
    with tempfile.TemporaryDirectory(prefix="rows-identity-") as folder:
        tree = other_tree(args.rev, Path(folder) / "tree")
        for root in args.workspaces:
            before = rows_of(root, tree, Path(folder) / "before.pickle")
            after = rows_of(root, None, Path(folder) / "after.pickle")
            differ = compare(before, after)
            digest = hashlib.sha256("".join(f"{k}{v}" for k, v in sorted(after.items())).encode()).hexdigest()[:12]
            print(f"{root}: {len(after):,} files, {'rows differ' if differ else 'rows identical'} ({digest})")
            for line in differ:
                print(line)
            failed |= bool(differ)
        shutil.rmtree(tree, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
