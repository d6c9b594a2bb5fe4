"""Dream runs are reversible: pre-images and a manifest under metadata/state/dream_runs/<run_id>/.

Before a run first touches a file it copies the file's bytes (or notes that it did not exist);
each action records the file's sha256 after the write. Rollback restores the pre-images and
removes created files, refusing when a later run or a person changed those files since.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timezone
from pathlib import Path

from memflow.schemas.dream import ActionRecord
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores.files import atomic_write_bytes, atomic_write_json, read_json

RUNS = "dream_runs"


class RollbackConflict(RuntimeError):
    pass


def sha_of(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


class RunRecord:
    """The manifest of one run; owns its folder (pre-images are written once per file)."""

    def __init__(self, lay: Layout, run_id: str | None = None):
        self.lay = lay
        self.run_id = run_id or datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + secrets.token_hex(3)
        self.dir = lay.state_dir / RUNS / self.run_id
        self.manifest = read_json(self.dir / "manifest.json", None) or {
            "run_id": self.run_id, "started": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
            "status": "running", "actions": [], "files": {}, "catalog_added": {}}

    def save(self) -> None:
        atomic_write_json(self.dir / "manifest.json", self.manifest)

    def before_write(self, rel: str) -> None:
        """Keep the pre-image of `rel` the first time this run touches it."""
        if rel in self.manifest["files"]:
            return
        path = self.lay.root / rel
        existed = path.exists()
        if existed:
            atomic_write_bytes(self.dir / "pre" / rel, path.read_bytes())
        self.manifest["files"][rel] = {"existed": existed, "post_sha256": None}
        self.save()

    def after_write(self, rel: str, record: ActionRecord | None = None) -> None:
        self.manifest["files"][rel]["post_sha256"] = sha_of(self.lay.root / rel)
        if record is not None:
            record.post_sha256 = self.manifest["files"][rel]["post_sha256"]
            self.manifest["actions"].append(record.model_dump())
        self.save()

    def finish(self, status: str, catalog_added: dict[str, str], summary: dict) -> None:
        self.manifest.update(status=status, catalog_added=catalog_added, summary=summary,
                             finished=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        self.save()


def list_runs(lay: Layout) -> list[dict]:
    base = lay.state_dir / RUNS
    runs = []
    for folder in sorted(base.iterdir()) if base.is_dir() else []:
        manifest = read_json(folder / "manifest.json", None)
        if manifest:
            counts: dict[str, int] = {}
            for action in manifest["actions"]:
                counts[action["action"]] = counts.get(action["action"], 0) + 1
            runs.append({"run_id": manifest["run_id"], "started": manifest["started"],
                         "status": manifest["status"], "actions": counts,
                         "files": sorted(manifest["files"])})
    return sorted(runs, key=lambda r: r["started"])


def rollback(lay: Layout, run_id: str, catalog_path: Path, force: bool = False) -> list[str]:
    """Restore the run's pre-images; returns the files restored or removed."""
    record = RunRecord(lay, run_id)
    if not (record.dir / "manifest.json").exists():
        raise LookupError(f"no dream run {run_id!r} (see `memflow dream runs`)")
    if record.manifest["status"] == "rolled back":
        raise RollbackConflict(f"run {run_id} was already rolled back")
    files = record.manifest["files"]
    if any(info.get("forgotten") for info in files.values()):
        raise RollbackConflict(f"run {run_id} touched material that was forgotten since "
                               "(memflow forget): it can no longer be rolled back")
    changed = [rel for rel, info in files.items() if sha_of(lay.root / rel) != info["post_sha256"]]
    if changed and not force:
        raise RollbackConflict(
            f"refusing to roll back {run_id}: changed since the run by a later run or a person: "
            f"{', '.join(sorted(changed))} (use --force to restore anyway)")
    touched = []
    for rel, info in files.items():
        path = lay.root / rel
        if info["existed"]:
            atomic_write_bytes(path, (record.dir / "pre" / rel).read_bytes())
        elif path.exists():
            path.unlink()
        touched.append(rel)
    catalog = read_json(catalog_path, {})
    for rel, sha in record.manifest.get("catalog_added", {}).items():
        if catalog.get(rel) == sha:
            del catalog[rel]
    atomic_write_json(catalog_path, catalog)
    record.manifest["status"] = "rolled back"
    record.save()
    return sorted(touched)


__all__ = ["RunRecord", "RollbackConflict", "list_runs", "rollback", "sha_of"]
