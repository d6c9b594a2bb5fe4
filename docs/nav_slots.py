"""MkDocs hook: nav slots for pages that other branches write.

mkdocs.yml lists such pages in `extra.arriving_pages`. Until a page's file exists under docs/,
its nav entry is dropped, so `mkdocs build --strict` passes before and after the merge that
brings the file. A nav entry not listed there still fails the strict build when its file is
missing, so a typo in the nav is never hidden.
"""

from __future__ import annotations

from pathlib import Path


def _keep(entry, docs: Path, arriving: set[str]):
    """The nav entry, or None when it names an arriving page whose file is not there yet."""
    if isinstance(entry, str):
        return None if entry in arriving and not (docs / entry).is_file() else entry
    if isinstance(entry, dict):
        kept = {}
        for title, value in entry.items():
            value = _prune(value, docs, arriving) if isinstance(value, list) else _keep(value, docs, arriving)
            if value not in (None, []):
                kept[title] = value
        return kept or None
    return entry


def _prune(nav: list, docs: Path, arriving: set[str]) -> list:
    return [kept for entry in nav if (kept := _keep(entry, docs, arriving)) is not None]


def on_config(config):
    arriving = set(config["extra"].get("arriving_pages", []))
    if config["nav"] and arriving:
        config["nav"] = _prune(config["nav"], Path(config["docs_dir"]), arriving)
    return config
