"""Workspace layout and path safety.

Every path that comes from data or a person (note names, session ids, wikilink targets, move
targets, resource names) goes through `safe_path`, which resolves it inside the workspace or
raises `PathError`. Session ids must match `SESSION_ID_PATTERN`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from memflow.schemas.settings import Settings
from memflow.tasks.ground.markdown import iso_date

# Letters, digits, dot, underscore and dash; starts with a letter or digit; at most 128 chars.
SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
DATE_RE = re.compile(r"(\d{4}-\d{2}-\d{2})")
BUCKETS = ("personal", "procedure", "wiki")


class PathError(ValueError):
    """A path that would leave the workspace or is not a valid workspace path."""


@dataclass(frozen=True)
class Layout:
    root: Path
    session: str
    resource: str
    daily: str
    digest: str
    metadata: str

    @property
    def index_dir(self) -> Path:
        return self.root / self.metadata / "index"

    @property
    def state_dir(self) -> Path:
        return self.root / self.metadata / "state"


def layout(settings: Settings) -> Layout:
    return Layout(
        root=Path(settings.workspace).resolve(),
        session=settings.session_dir,
        resource=settings.resource_dir,
        daily=settings.daily_dir,
        digest=settings.digest_dir,
        metadata=settings.metadata_dir,
    )


def safe_path(root: Path, rel: str) -> Path:
    """Resolve a workspace-relative path inside `root`, or raise PathError saying why."""
    if not isinstance(rel, str) or not rel.strip():
        raise PathError("empty path")
    if "\0" in rel:
        raise PathError(f"path contains a NUL byte: {rel!r}")
    posix = rel.replace("\\", "/")
    if posix.startswith("/") or re.match(r"^[A-Za-z]:", posix):
        raise PathError(f"absolute paths are not allowed: {rel}")
    parts = PurePosixPath(posix).parts
    if ".." in parts:
        raise PathError(f"'..' is not allowed in a workspace path: {rel}")
    root = root.resolve()
    try:
        target = (root / posix).resolve()
    except (RuntimeError, OSError) as exc:  # Python 3.11 raises RuntimeError on a symlink loop
        raise PathError(f"{rel}: symlink loop, cannot be resolved") from exc
    if target != root and not target.is_relative_to(root):
        raise PathError(f"path leaves the workspace through a symlink: {rel}")
    return target


def rel_path(root: Path, path: Path) -> str:
    return path.resolve().relative_to(root.resolve()).as_posix()


def check_session_id(session_id: str) -> str:
    if not SESSION_ID_PATTERN.match(session_id or "") or ".." in session_id:
        raise PathError(
            f"invalid session id {session_id!r}: use letters, digits, '.', '_' or '-' "
            "(start with a letter or digit, at most 128 characters)"
        )
    return session_id


def is_workspace(folder: Path) -> bool:
    """A folder is a workspace by a `memflow.toml`, `metadata/state/`, or both `daily/` and
    `session/` (the default layout; a fleet finds workspaces by it, the CLI checks -w by it)."""
    from memflow.schemas.settings import CONFIG_FILE

    return ((folder / CONFIG_FILE).is_file() or (folder / "metadata" / "state").is_dir()
            or ((folder / "daily").is_dir() and (folder / "session").is_dir()))


def init_workspace(lay: Layout) -> list[str]:
    """Create the layer folders (idempotent); returns the folders that were created."""
    wanted = [
        f"{lay.session}/dialog",
        lay.resource,
        lay.daily,
        *(f"{lay.digest}/{bucket}" for bucket in BUCKETS),
        f"{lay.metadata}/index",
        f"{lay.metadata}/state",
    ]
    created = []
    for rel in wanted:
        path = lay.root / rel
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            created.append(rel)
    readme = lay.state_dir / "README.md"
    if not readme.exists():
        readme.write_text(STATE_README, encoding="utf-8")
    return created


STATE_README = """# metadata/state

What cannot be derived from the Markdown files lives here; keep it with backups.

- `lock.json`: the workspace lock held by the job writing now (safe to delete when no job runs);
  `lock.guard`: an empty file flock'ed while a stale lock is taken over or a lock released.
- `index_watermark.json`: when the index last ran (also lets search tell a stale index).
- `inbox.jsonl`: one event per job that changed files.
- `capture/<session_id>.json`: the last session-log line each daily note was written from.
- `resource_catalog.json`, `dream_catalog.json`: what capture and dream have already consumed
  (a resource `refused` on its content until it changes, or `failed` on the model or network
  with its attempts: retried after a backoff).
- `dream_runs/<run_id>/`: pre-images of digest nodes touched by a dream run, for rollback.
- `tombstones.json`: salted hashes of what `memflow forget` removed (never the text), so a later
  capture does not bring it back; `forget_salt`: their salt (without it they match nothing).

Everything under `metadata/index/` is derived: delete it and run `memflow reindex`.
"""


def layer_of(lay: Layout, rel: str) -> str | None:
    top = rel.split("/", 1)[0]
    names = {lay.session: "session", lay.resource: "resource", lay.daily: "daily",
             lay.digest: "digest", lay.metadata: "metadata"}
    return names.get(top)


def is_day_index(lay: Layout, rel: str) -> bool:
    """`daily/<date>.md` (ReMe) or `<daily>/<date>/index.md` (QwenPaw)."""
    return _day_index_re(lay.daily).match(rel) is not None


@lru_cache(maxsize=16)
def _day_index_re(daily: str) -> re.Pattern:
    return re.compile(rf"^{re.escape(daily)}/\d{{4}}-\d{{2}}-\d{{2}}(\.md|/index\.md)$")


def kind_of(lay: Layout, rel: str) -> str:
    if is_day_index(lay, rel):
        return "day_index"
    if rel.endswith("/interests.yaml"):
        return "interests"
    return "note"


def date_of(rel: str) -> date | None:
    """The first YYYY-MM-DD in a path, if it is a real date."""
    match = DATE_RE.search(rel)
    return iso_date(match.group(1)) if match else None


def in_layers(lay: Layout, path: Path) -> bool:
    """`path` (resolved) lies in a memory layer: session/, resource/, daily/ or digest/."""
    parts = path.relative_to(lay.root).parts
    return bool(parts) and parts[0] in (lay.session, lay.resource, lay.daily, lay.digest)


def file_stats(lay: Layout, folders: list[str], suffixes: tuple[str, ...] = (".md",),
               problems: dict[str, str] | None = None) -> dict[str, tuple[int, int]]:
    """Workspace-relative path -> (size, mtime_ns) of regular files under `folders`, from one
    scandir walk; hidden entries are skipped, symlinks only when they stay in the memory layers.
    A folder is walked once however many links lead to it; symlink loops, links out of the
    workspace, FIFOs and other non-regular files are left out (with a reason in `problems`)."""
    root = str(lay.root)
    found: dict[str, tuple[int, int]] = {}
    stack = [os.path.join(root, f) for f in folders]
    seen: set[tuple[int, int]] = set()

    def skip(path: str, reason: str) -> None:
        if problems is not None:
            problems[path[len(root) + 1:].replace(os.sep, "/")] = reason

    while stack:
        folder = stack.pop()
        try:
            stat = os.stat(folder)
            if (stat.st_dev, stat.st_ino) in seen:
                continue
            seen.add((stat.st_dev, stat.st_ino))
            entries = os.scandir(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            skip(folder, f"cannot be read: {exc.strerror or exc}")
            continue
        with entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    if entry.is_symlink():
                        try:
                            target = Path(entry.path).resolve(strict=True)
                        except (OSError, RuntimeError) as exc:
                            skip(entry.path, "symlink loop" if "loop" in str(exc).lower()
                                 else "broken symlink")
                            continue
                        if not target.is_relative_to(lay.root):
                            skip(entry.path, "symlink out of the workspace")
                            continue
                        if not in_layers(lay, target):  # never memflow.toml or metadata/
                            skip(entry.path, "symlink out of the memory layers")
                            continue
                    if entry.is_dir():
                        stack.append(entry.path)
                    elif entry.name.endswith(suffixes):
                        if not entry.is_file():
                            skip(entry.path, "not a regular file")
                            continue
                        stat = entry.stat()
                        found[entry.path[len(root) + 1:].replace(os.sep, "/")] = (stat.st_size,
                                                                                  stat.st_mtime_ns)
                except OSError as exc:
                    skip(entry.path, f"cannot be read: {exc.strerror or exc}")
    return found


def iter_files(lay: Layout, folders: list[str], suffixes: tuple[str, ...] = (".md",)) -> list[str]:
    return sorted(file_stats(lay, folders, suffixes))


def markdown_files(lay: Layout) -> list[str]:
    """Every Markdown file a person or the system wrote (all layers but metadata)."""
    return iter_files(lay, [lay.session, lay.resource, lay.daily, lay.digest])


def slugify(name: str, limit: int = 60) -> str:
    """A safe file-name stem: letters and digits of any script, joined by '-'."""
    words = re.findall(r"[^\W_]+", name.lower())
    slug = "-".join(words)[:limit].strip("-")
    return slug or "note"


def unique_path(lay: Layout, folder: str, stem: str, suffix: str = ".md", current: str | None = None) -> str:
    """`folder/stem.md`, or `folder/stem-2.md`... if taken by another file than `current`."""
    candidate, n = f"{folder}/{stem}{suffix}", 1
    while (lay.root / candidate).exists() and candidate != current:
        n += 1
        candidate = f"{folder}/{stem}-{n}{suffix}"
    return candidate


def today(settings: Settings) -> date:
    """Today's date in the workspace timezone."""
    return today_in(settings.timezone)


def today_in(tz: str, now: datetime | None = None) -> date:
    """Today in timezone `tz` (`now`: an aware instant instead of the clock)."""
    return (now or datetime.now(ZoneInfo(tz))).astimezone(ZoneInfo(tz)).date()
