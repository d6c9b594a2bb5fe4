"""Which folders are workspaces: a `memflow.toml`, or the default layout (`metadata/state/`, or
both `daily/` and `session/`). A workspace's own folders are not searched for more."""

from __future__ import annotations

import os
from pathlib import Path

from memflow.tasks.ground.workspace import is_workspace

MAX_DEPTH = 4  # root/workspaces/<agent>/ is depth 2; deeper trees are listed explicitly


def find_workspaces(root: str | Path | list[str | Path], max_depth: int = MAX_DEPTH) -> list[str]:
    """Workspace folders under `root` (resolved, sorted), or the folders of a list as given
    (each must exist). A root that is itself a workspace is the only one. Hidden folders and
    symlinked folders are not entered (no loops, no second path to one workspace)."""
    given = root if isinstance(root, list) else [root]
    if not given or any(not str(p).strip() for p in given):
        # a deployment's `root: "{{ $MEMFLOW_FLEET_ROOT }}"` with the variable unset: never the cwd
        raise ValueError("fleet root is empty: set MEMFLOW_FLEET_ROOT (or the deployment's `root` "
                         "parameter) to the folder holding the workspaces")
    if isinstance(root, list):
        missing = [str(p) for p in root if not Path(p).expanduser().is_dir()]
        if missing:
            raise FileNotFoundError(f"not a folder: {', '.join(missing)}")
        return [str(Path(p).expanduser().resolve()) for p in root]
    base = Path(root).expanduser().resolve()
    if not base.is_dir():
        raise FileNotFoundError(f"fleet root is not a folder: {base}")
    found: list[str] = []
    level = [base]
    for _ in range(max_depth + 1):
        below = []
        for folder in level:
            if is_workspace(folder):
                found.append(str(folder))
                continue
            with os.scandir(folder) as entries:
                below += [Path(e.path) for e in entries
                          if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")]
        level = below
    return sorted(found)
