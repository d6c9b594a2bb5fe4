"""State and derived files a forget rewrites, beside the notes themselves.

Interest topics (`daily/<date>/interests.yaml`) lose evidence that quotes forgotten material;
dream-run pre-images that quote it are deleted (such a run can no longer be rolled back); then
every JSON, JSONL and YAML file under `metadata/state/` (dream catalog, inbox, run manifests, job
records, capture and resource catalogs) and every `interests.yaml` is walked value by value:
renamed paths are rewritten, a removed file's entry goes, and a value that quotes forgotten
material becomes `(forgotten)`. `tombstones.json` (hashes only) and `forget_salt` are left alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from memflow.tasks.forget.matching import carries
from memflow.tasks.ground.markdown import line_text
from memflow.tasks.ground.tombstones import normalise
from memflow.tasks.ground.workspace import Layout
from memflow.tasks.stores.files import atomic_write_json, atomic_write_text, read_json, read_text

GONE = "(forgotten)"
KEEP = {"tombstones.json", "forget_salt", "lock.json", "README.md"}


@dataclass
class Forgotten:
    """What a value must not quote: the `--match` phrase (normalised), texts of forgotten
    messages, removed paths, and renamed paths (old -> new)."""

    phrase: str = ""
    said: list[str] = field(default_factory=list)
    removed: set[str] = field(default_factory=set)
    renames: dict[str, str] = field(default_factory=dict)

    def quotes(self, text: str) -> bool:
        if carries(text, self.phrase) or any(p in text for p in self.removed):
            return True
        said = [s.casefold() for s in self.said]
        folded = text.casefold()
        if any(len(s) >= 12 and s in folded for s in said):
            return True
        return any(len(bare) >= 12 and any(bare in s for s in said)
                   for bare in (line_text(line).casefold() for line in text.split("\n")))

    def fragment(self, word: str) -> bool:
        """A listed word or phrase (4+ characters) is a whole-word part of forgotten text."""
        norm = normalise(word)
        return len(norm) >= 4 and any(f" {norm} " in f" {normalise(s)} " for s in [self.phrase, *self.said])

    def value(self, value: object) -> object:
        """A state value with renamed paths rewritten and forgotten material removed."""
        if isinstance(value, str):
            for old, new in self.renames.items():
                value = value.replace(old, new)
            return GONE if value in self.removed or self.quotes(value) else value
        if isinstance(value, list):  # a word of forgotten text (a topic, a keyword) goes
            return [self.value(v) for v in value if not (isinstance(v, str) and self.fragment(v))]
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                new_key = self.value(key) if isinstance(key, str) else key
                if new_key == GONE and isinstance(item, dict):  # a record (a run's file) stays
                    new_key = f"{GONE} {len(out) + 1}"
                if new_key != GONE:  # an entry (a catalog's) about a removed file goes
                    out[new_key] = self.value(item)
            return out
        return value


def state_files(lay: Layout) -> list[Path]:
    """Every JSON, JSONL and YAML file of state, and every day's interest topics."""
    state = [p for p in sorted(lay.state_dir.rglob("*")) if p.is_file() and p.name not in KEEP
             and p.suffix in (".json", ".jsonl", ".yaml", ".yml") and "/pre/" not in p.as_posix()]
    return state + sorted((lay.root / lay.daily).glob("*/interests.yaml"))


def _rewrite(path: Path, forgotten: Forgotten, write: bool) -> bool:
    text = read_text(path)
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        new = "".join(json.dumps(forgotten.value(r), ensure_ascii=False) + "\n" for r in rows)
    elif path.suffix == ".json":
        new = json.dumps(forgotten.value(json.loads(text)), ensure_ascii=False, indent=2) + "\n"
    else:
        new = yaml.safe_dump(forgotten.value(yaml.safe_load(text)), allow_unicode=True, sort_keys=False)
    if new == text or _same(path, text, new):
        return False
    if write:
        atomic_write_text(path, new)
    return True


def _same(path: Path, old: str, new: str) -> bool:
    """Only the formatting would change."""
    if path.suffix == ".jsonl":
        return [json.loads(x) for x in old.splitlines() if x.strip()] == \
            [json.loads(x) for x in new.splitlines() if x.strip()]
    loads = json.loads if path.suffix == ".json" else yaml.safe_load
    return loads(old) == loads(new)


def scrub_topics(lay: Layout, forgotten: Forgotten) -> list[str]:
    """Interest topics lose evidence that quotes forgotten material; a topic left without
    evidence goes."""
    changed = []
    for path in sorted((lay.root / lay.daily).glob("*/interests.yaml")):
        data = yaml.safe_load(read_text(path)) or {}
        topics = []
        for topic in data.get("topics") or []:
            evidence = [e for e in topic.get("evidence", []) if not forgotten.quotes(str(e))]
            if evidence or not topic.get("evidence"):
                said = normalise(" ".join(map(str, evidence)))
                words = [k for k in topic.get("keywords", []) if not forgotten.fragment(str(k))
                         or f" {normalise(str(k))} " in f" {said} "]
                topics.append({**topic, "evidence": evidence,
                               **({"keywords": words} if "keywords" in topic else {}),
                               "paths": [p for p in topic.get("paths", []) if p not in forgotten.removed]})
        if topics != (data.get("topics") or []):
            atomic_write_text(path, yaml.safe_dump({**data, "topics": topics}, allow_unicode=True,
                                                   sort_keys=False))
            changed.append(path.relative_to(lay.root).as_posix())
    return changed


def scrub_pre_images(lay: Layout, forgotten: Forgotten, write: bool = True) -> list[str]:
    """Dream-run pre-images that quote forgotten material (or whose path does) are deleted and
    marked in their manifest; returns the manifests changed."""
    changed = []
    for manifest_path in sorted((lay.state_dir / "dream_runs").glob("*/manifest.json")):
        manifest = read_json(manifest_path, {})
        touched = False
        for rel, info in manifest.get("files", {}).items():
            pre = manifest_path.parent / "pre" / rel
            if pre.is_file() and (forgotten.quotes(rel) or rel in forgotten.renames
                                  or forgotten.quotes(read_text(pre))):
                if write:
                    pre.unlink()
                info["forgotten"], touched = True, True
        if touched or forgotten.quotes(json.dumps(manifest.get("summary", {}), ensure_ascii=False)):
            manifest["summary"] = {"forgotten": "details removed by memflow forget"}
            if write:
                atomic_write_json(manifest_path, manifest)
            changed.append(manifest_path.relative_to(lay.root).as_posix())
    return changed


def scrub_state(lay: Layout, forgotten: Forgotten, write: bool = True) -> list[str]:
    """Rewrite every state file that names removed or renamed files or quotes forgotten
    material; returns them (`write=False`: only says which)."""
    changed = scrub_pre_images(lay, forgotten, write)
    for path in state_files(lay):
        try:
            if _rewrite(path, forgotten, write):
                changed.append(path.relative_to(lay.root).as_posix())
        except (ValueError, yaml.YAMLError) as exc:
            raise ValueError(f"forget: {path} does not parse ({str(exc).splitlines()[0]}): fix or "
                             "delete it, then run forget again") from exc
    return sorted(set(changed))
