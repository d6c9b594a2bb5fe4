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
from memflow.tasks.stores.files import read_json, read_text

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


def _rewritten(path: Path, text: str, forgotten: Forgotten) -> str | None:
    """The new text of a state file, None when only its formatting would change."""
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        new = "".join(json.dumps(forgotten.value(r), ensure_ascii=False) + "\n" for r in rows)
    elif path.suffix == ".json":
        new = json.dumps(forgotten.value(json.loads(text)), ensure_ascii=False, indent=2) + "\n"
    else:
        new = yaml.safe_dump(forgotten.value(yaml.safe_load(text)), allow_unicode=True, sort_keys=False)
    return None if new == text or _same(path, text, new) else new


def _same(path: Path, old: str, new: str) -> bool:
    """Only the formatting would change."""
    if path.suffix == ".jsonl":
        return [json.loads(x) for x in old.splitlines() if x.strip()] == \
            [json.loads(x) for x in new.splitlines() if x.strip()]
    loads = json.loads if path.suffix == ".json" else yaml.safe_load
    return loads(old) == loads(new)


def _topics(text: str, forgotten: Forgotten) -> str | None:
    """Interest topics without evidence that quotes forgotten material; a topic left without
    evidence goes."""
    data = yaml.safe_load(text) or {}
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
    if topics == (data.get("topics") or []):
        return None
    return yaml.safe_dump({**data, "topics": topics}, allow_unicode=True, sort_keys=False)


def _pre_images(lay: Layout, forgotten: Forgotten, texts: dict[str, str], unlink: list[str]) -> None:
    """Dream-run pre-images that quote forgotten material (or whose path does) are to be
    deleted and marked in their manifest (such a run can no longer be rolled back)."""
    for manifest_path in sorted((lay.state_dir / "dream_runs").glob("*/manifest.json")):
        manifest = read_json(manifest_path, {})
        touched = False
        for rel, info in manifest.get("files", {}).items():
            pre = manifest_path.parent / "pre" / rel
            if pre.is_file() and (forgotten.quotes(rel) or rel in forgotten.renames
                                  or forgotten.quotes(read_text(pre))):
                unlink.append(pre.relative_to(lay.root).as_posix())
                info["forgotten"], touched = True, True
        if touched or forgotten.quotes(json.dumps(manifest.get("summary", {}), ensure_ascii=False)):
            manifest["summary"] = {"forgotten": "details removed by memflow forget"}
            texts[manifest_path.relative_to(lay.root).as_posix()] = json.dumps(
                manifest, ensure_ascii=False, indent=2, default=str) + "\n"


def scrub_plan(lay: Layout, forgotten: Forgotten) -> tuple[dict[str, str], list[str]]:
    """(state file -> its new text, pre-images to delete): every state file that names removed
    or renamed files or quotes forgotten material, as it will be; nothing is written here."""
    texts: dict[str, str] = {}
    unlink: list[str] = []
    _pre_images(lay, forgotten, texts, unlink)
    for path in sorted((lay.root / lay.daily).glob("*/interests.yaml")):
        new = _topics(read_text(path), forgotten)
        if new is not None:
            texts[path.relative_to(lay.root).as_posix()] = new
    for path in state_files(lay):
        rel = path.relative_to(lay.root).as_posix()
        try:
            new = _rewritten(path, texts.get(rel) or read_text(path), forgotten)
        except (ValueError, yaml.YAMLError) as exc:
            raise ValueError(f"forget: {path} does not parse ({str(exc).splitlines()[0]}): fix or "
                             "delete it, then run forget again") from exc
        if new is not None:
            texts[rel] = new
    return texts, sorted(set(unlink))
