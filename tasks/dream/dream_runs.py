"""Dream runs are reversible journals: pre-images and a manifest under
metadata/state/dream_runs/<run_id>/.

Before a run touches a file it copies the file's bytes once (or notes that it did not exist)
and records the sha256 the file will have after the write (`intended`); after the write it
records the result. Every change a run makes to the dream catalog (notes consumed, refused,
gone, a catalog rebuilt) is journaled the same way before the catalog is written: its
pre-image, the sha256 of each state the run writes, and each entry's value before and after.
So a run killed at any point is found by the next run (status still `running`, under the
workspace lock: no one else is dreaming) and rolled back exactly: every file still at its
pre-image, or at a state this run wrote, goes back to its pre-image, the catalog too (byte for
byte); it is listed as `interrupted (recovered)`. A catalog changed since by a later run keeps
that run's entries and gets this run's entries back as they were before it. Rollback of a finished run restores the pre-images and
removes created files, refusing when a later run or a person changed those files since; a
rollback that was itself interrupted can be run again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import socket
from datetime import datetime, timezone
from pathlib import Path

from memflow.schemas.dream import ActionRecord
from memflow.tasks.ground.events import append_event
from memflow.tasks.ground.lock import process_alive
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores.files import atomic_write_bytes, atomic_write_json, read_json

log = logging.getLogger("memflow.dream")
RUNS = "dream_runs"
INTERRUPTED = "interrupted (recovered)"
# a run killed after saving a pre-image but before its first manifest: it changed nothing (every
# write comes after the manifest that journals it); the next dream or `check --repair` removes it
NO_MANIFEST = "killed before its manifest"
CATALOG_PRE = "catalog.pre.json"  # the dream catalog's pre-image (beside pre/, which mirrors the workspace)


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
            "status": "running", "pid": os.getpid(), "host": socket.gethostname(),
            "actions": [], "files": {}, "catalog_added": {}}

    def save(self) -> None:
        atomic_write_json(self.dir / "manifest.json", self.manifest)

    def before_write(self, rel: str, new_text: str | bytes | None = None) -> None:
        """Journal a write before it happens: the pre-image of `rel` the first time this run
        touches it, and the sha256 the file will have (`new_text`) each time."""
        path = self.lay.root / rel
        info = self.manifest["files"].get(rel)
        if info is None:
            existed = path.exists()
            data = path.read_bytes() if existed else None
            if data is not None:
                atomic_write_bytes(self.dir / "pre" / rel, data)
            info = self.manifest["files"][rel] = {
                "existed": existed, "pre_sha256": hashlib.sha256(data).hexdigest() if data is not None else None,
                "post_sha256": None, "intended": []}
        if new_text is not None:
            data = new_text.encode("utf-8") if isinstance(new_text, str) else new_text
            info.setdefault("intended", []).append(hashlib.sha256(data).hexdigest())
        self.save()

    def consuming(self, catalog_added: dict[str, str]) -> None:
        """Journal the notes this run is about to mark consumed, before the catalog changes."""
        self.manifest["catalog_added"] = catalog_added
        self.save()

    def write_catalog(self, path: Path, changes: dict[str, str | None]) -> None:
        """Apply `changes` (note -> sha256, None: drop the entry) to the dream catalog at
        `path`, journaled first: the catalog's pre-image the first time, each entry's value
        before the run's first change of it, and the sha256 of the state about to be written."""
        existed = path.exists()
        data = path.read_bytes() if existed else None
        catalog = json.loads(data) if data is not None else {}
        if all(catalog.get(rel) == sha for rel, sha in changes.items()) and existed:
            return
        journal = self.manifest.get("catalog")
        if journal is None:
            if data is not None:
                atomic_write_bytes(self.dir / CATALOG_PRE, data)
            journal = self.manifest["catalog"] = {
                "existed": existed, "pre_sha256": hashlib.sha256(data).hexdigest() if data is not None else None,
                "intended": [], "before": {}, "after": {}}
        for rel, sha in changes.items():
            journal["before"].setdefault(rel, catalog.get(rel))
            journal["after"][rel] = sha
            if sha is None:
                catalog.pop(rel, None)
            else:
                catalog[rel] = sha
        text = catalog_text(catalog)
        journal["intended"].append(hashlib.sha256(text.encode("utf-8")).hexdigest())
        self.save()
        atomic_write_bytes(path, text.encode("utf-8"))

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


def forget_catalog_entries(folder: Path, manifest: dict, paths: set[str]) -> bool:
    """`memflow forget`: drop forgotten notes from a run's catalog journal (and the catalog's
    pre-image when it names one; the run's rollback then restores entry by entry). Returns
    whether the manifest changed (the caller writes it)."""
    journal = manifest.get("catalog")
    if not journal or not paths & (set(journal["before"]) | set(journal["after"])):
        return False
    for side in ("before", "after"):
        journal[side] = {rel: sha for rel, sha in journal[side].items() if rel not in paths}
    (folder / CATALOG_PRE).unlink(missing_ok=True)
    return True


def list_runs(lay: Layout) -> list[dict]:
    base = lay.state_dir / RUNS
    runs = []
    for folder in sorted(base.iterdir()) if base.is_dir() else []:
        try:
            manifest = read_json(folder / "manifest.json", None)
        except (OSError, ValueError) as exc:
            log.warning("dream run %s is not listed: %s", folder.name, exc)
            continue
        if manifest is None:
            runs.append(_manifestless(folder))
            continue
        if manifest and not (isinstance(manifest, dict) and {"run_id", "started", "status", "actions",
                                                             "files"} <= set(manifest)):
            log.warning("dream run %s is not listed: its manifest lacks run_id/started/status/"
                        "actions/files", folder.name)
            continue
        if manifest:
            counts: dict[str, int] = {}
            for action in manifest["actions"]:
                counts[action["action"]] = counts.get(action["action"], 0) + 1
            status = manifest["status"]
            if status == "running" and not process_alive(manifest):
                status = "interrupted"  # recovered by the next dream run (or `memflow check --repair`)
            runs.append({"run_id": manifest["run_id"], "started": manifest["started"],
                         "status": status, "actions": counts,
                         "files": sorted(manifest["files"])})
    return sorted(runs, key=lambda r: r["started"])


def _manifestless(folder: Path) -> dict:
    """The listing of a run folder with no manifest: started when its id says (else the folder's
    mtime), the files it saved pre-images of."""
    try:
        started = datetime.strptime(folder.name[:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        started = datetime.fromtimestamp(folder.stat().st_mtime, timezone.utc)
    pre = folder / "pre"
    files = sorted(p.relative_to(pre).as_posix() for p in pre.rglob("*") if p.is_file()) if pre.is_dir() else []
    return {"run_id": folder.name, "started": started.isoformat(timespec="microseconds"),
            "status": NO_MANIFEST, "actions": {}, "files": files}


def remove_manifestless(lay: Layout) -> list[str]:
    """Remove run folders with no manifest (runs killed before their first write; call under
    the workspace lock, so none is a run starting now); returns their ids."""
    import shutil

    gone = [run["run_id"] for run in list_runs(lay) if run["status"] == NO_MANIFEST]
    for run_id in gone:
        shutil.rmtree(lay.state_dir / RUNS / run_id)
        append_event(lay, "dream", [], f"removed run folder {run_id}: killed before its manifest, it changed nothing")
    return gone


def _pre_sha(record: RunRecord, rel: str, info: dict) -> str | None:
    if not info["existed"]:
        return None
    return info.get("pre_sha256") or sha_of(record.dir / "pre" / rel)


def _restore(lay: Layout, record: RunRecord, rel: str, info: dict) -> str:
    """Put `rel` back as it was before the run: "restored" (its pre-image) or "deleted" (the
    run created it)."""
    path = lay.root / rel
    if info["existed"]:
        atomic_write_bytes(path, (record.dir / "pre" / rel).read_bytes())
        return "restored"
    path.unlink(missing_ok=True)
    return "deleted"


def catalog_text(catalog: dict) -> str:
    """The dream catalog as written (the same bytes as `atomic_write_json`)."""
    return json.dumps(catalog, ensure_ascii=False, indent=2, default=str) + "\n"


def _restore_catalog(record: RunRecord, catalog_path: Path) -> None:
    """Put the dream catalog back as it was before the run: its pre-image when the catalog is
    still in a state the run wrote; otherwise (a later run changed it since) each entry the run
    changed and nobody changed after it gets its earlier value back."""
    journal = record.manifest.get("catalog")
    if journal is None:  # a run journaled before catalog pre-images: drop what it added
        catalog = read_json(catalog_path, {})
        for rel, sha in record.manifest.get("catalog_added", {}).items():
            if catalog.get(rel) == sha:
                del catalog[rel]
        atomic_write_json(catalog_path, catalog)
        return
    current = sha_of(catalog_path)
    if current == journal["pre_sha256"]:
        return
    pre_image = (record.dir / CATALOG_PRE).exists()  # gone when it named a note forgotten since
    if current in journal["intended"] and (pre_image or not journal["existed"]):
        if journal["existed"]:
            atomic_write_bytes(catalog_path, (record.dir / CATALOG_PRE).read_bytes())
        else:
            catalog_path.unlink(missing_ok=True)
        return
    catalog = read_json(catalog_path, {})
    for rel, before in journal["before"].items():
        if catalog.get(rel) != journal["after"].get(rel):
            continue  # changed again since this run: the later value stays
        if before is None:
            catalog.pop(rel, None)
        else:
            catalog[rel] = before
    atomic_write_bytes(catalog_path, catalog_text(catalog).encode("utf-8"))


def _recover(lay: Layout, record: RunRecord, catalog_path: Path) -> list[str]:
    """Roll back one run a killed process left `running`: one line per file put back
    (`restored PATH` or `deleted PATH`). A file changed since by someone else (neither its
    pre-image nor a state the run wrote) is left as it is and named in the manifest's
    `recovery_conflicts`."""
    done, conflicts = [], []
    for rel, info in record.manifest["files"].items():
        current, pre = sha_of(lay.root / rel), _pre_sha(record, rel, info)
        if current == pre:
            continue
        if current in {info.get("post_sha256"), *info.get("intended", [])}:
            done.append(f"{_restore(lay, record, rel, info)} {rel}")
        else:
            conflicts.append(rel)
    _restore_catalog(record, catalog_path)
    record.manifest.update(status=INTERRUPTED, recovery_conflicts=conflicts,
                           finished=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    record.save()
    log.warning("dream run %s was interrupted: rolled back %d file(s)%s", record.run_id, len(done),
                f"; left as changed since: {', '.join(conflicts)}" if conflicts else "")
    return sorted(done)


def recover_interrupted(lay: Layout, catalog_path: Path) -> list[str]:
    """Roll back every run left `running` by a killed process; returns the files restored.
    Call under the workspace lock (so no run is really in progress)."""
    base = lay.state_dir / RUNS
    restored: list[str] = []
    remove_manifestless(lay)
    for folder in sorted(base.iterdir()) if base.is_dir() else []:
        manifest = read_json(folder / "manifest.json", None)
        if manifest and manifest.get("status") == "running":
            lines = _recover(lay, RunRecord(lay, manifest["run_id"]), catalog_path)
            restored += [line.split(" ", 1)[1] for line in lines]
    return sorted(restored)


def rollback(lay: Layout, run_id: str, catalog_path: Path, force: bool = False) -> list[str]:
    """Restore the run's pre-images and delete the files it created; returns one line per file
    (`restored PATH` or `deleted PATH`), and says so in the inbox. A file already back
    at its pre-image (a rollback interrupted before) is fine; one changed since by a later run
    or a person refuses the rollback unless `force`."""
    record = RunRecord(lay, run_id)
    if not (record.dir / "manifest.json").exists():
        raise LookupError(f"no dream run {run_id!r} (see `memflow dream runs`)")
    if record.manifest["status"] in ("rolled back", INTERRUPTED):
        raise RollbackConflict(f"run {run_id} was already rolled back ({record.manifest['status']})")
    if record.manifest["status"] == "running":
        if process_alive(record.manifest):
            raise RollbackConflict(f"run {run_id} is still running (pid {record.manifest.get('pid')}): "
                                   "roll it back when it has finished")
        return _recover(lay, record, catalog_path)  # killed: what the next dream run would do
    files = record.manifest["files"]
    if any(info.get("forgotten") for info in files.values()):
        raise RollbackConflict(f"run {run_id} touched material that was forgotten since "
                               "(memflow forget): it can no longer be rolled back")
    changed = [rel for rel, info in files.items()
               if sha_of(lay.root / rel) not in {info["post_sha256"], _pre_sha(record, rel, info)}]
    if changed and not force:
        raise RollbackConflict(
            f"refusing to roll back {run_id}: changed since the run by a later run or a person: "
            f"{', '.join(sorted(changed))} (use --force to restore anyway)")
    done = sorted(f"{_restore(lay, record, rel, info)} {rel}" for rel, info in files.items())
    _restore_catalog(record, catalog_path)
    record.manifest["status"] = "rolled back"
    record.save()
    append_event(lay, "dream_rollback", list(files), f"rolled back {run_id}: " + "; ".join(done))
    return done


__all__ = ["RunRecord", "RollbackConflict", "list_runs", "rollback", "sha_of", "recover_interrupted",
           "INTERRUPTED", "catalog_text", "forget_catalog_entries"]
