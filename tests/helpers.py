"""Helpers shared by tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def run_cli(*args: str, input: str | None = None, cwd: Path | None = None,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the real `memflow` entry point in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "memflow.cli", *args], input=input, capture_output=True,
        text=True, cwd=cwd, env={**os.environ, **(env or {})}, timeout=300,
    )


def reindexed_copy(settings, where: Path):
    """Settings of a copy of the workspace's daily and digest notes at `where`, reindexed from
    scratch: the oracle an incremental index is compared with."""
    import shutil

    from memflow.schemas.settings import load_settings
    from memflow.tasks.ground.workspace import init_workspace, layout
    from memflow.tasks.index import indexing

    lay = layout(settings)
    other = load_settings(where)
    init_workspace(layout(other))
    for folder in (lay.daily, lay.digest):
        if (lay.root / folder).is_dir():
            shutil.copytree(lay.root / folder, where / folder, dirs_exist_ok=True)
    indexing.run_reindex(other)
    return other


def capture_kept_things(settings, rng, things: list[str], places: list[str], names: list[str], start,
                        days: int, per_day, speakers: list[str] | None = None) -> list[str]:
    """Capture `days` generated sessions of "I keep my THING in PLACE with NAME." (one THING
    popped from `things` per statement, so each is said once; `per_day()` statements a day,
    said by `speakers` in turn when given); returns the statements in order."""
    from datetime import timedelta

    from memflow.tasks.capture.conversation import auto_memory

    said = []
    for day in range(days):
        stamp = (start + timedelta(days=day)).isoformat()
        log = []
        for n in range(per_day()):
            text = f"I keep my {things.pop()} in {rng.choice(places).title()} with {rng.choice(names).title()}."
            said.append(text)
            message = {"id": f"d{day}-{n}", "role": "user", "timestamp": f"{stamp}T10:{n:02d}:00Z", "content": text}
            if speakers:
                message["name"] = speakers[n % len(speakers)]
            log.append(message)
        auto_memory(settings, log, f"s{day}")
    return said


# --- the provenance oracle: independent of tasks/ground/anchors.py ------------------------------

def _md_files(ws: Path, folder: str) -> list[Path]:
    return sorted((ws / folder).rglob("*.md")) if (ws / folder).is_dir() else []


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


_PLACEHOLDER_RE = re.compile(r"\[code[^\]]*\]")  # `[code: python, 12 lines]`: a block the note left out


def anchor_failures(ws: Path) -> list[str]:
    """Every line anchor of the daily notes and digest nodes that does not point at its text: a
    digest fact or history line must cite daily lines that say the same (the same text, or one
    holding the other), a daily line must cite session-log messages that hold each of its
    sentences."""
    import json

    from memflow.tasks.capture.extractive import sentences
    from memflow.tasks.capture.sessionlog import message_text
    from memflow.tasks.ground.markdown import iter_link_spans, line_text, parse_anchor

    failures = []
    for path in _md_files(ws, "daily") + _md_files(ws, "digest"):
        text = path.read_text()
        lines = text.split("\n")
        for line_no, _s, _e, match in iter_link_spans(text):
            target, anchor = match.group(1).strip(), match.group(2) or ""
            numbers = [n for a, b in parse_anchor(anchor) for n in range(a, b + 1)]
            if not numbers:
                continue
            rel = path.relative_to(ws).as_posix()
            citing = lines[line_no - 1]
            cited = (ws / target).read_text().split("\n") if (ws / target).is_file() else []
            if any(n > len(cited) for n in numbers):
                failures.append(f"{rel}:{line_no} [[{target}#{anchor}]] past the end of {len(cited)} lines")
            elif target.endswith(".jsonl"):
                said = " ".join(message_text(json.loads(cited[n - 1])) for n in numbers if cited[n - 1].strip())
                for sentence in sentences(line_text(citing)):
                    if "```" in said and _words(_PLACEHOLDER_RE.sub(" ", sentence)) <= _words(said):
                        continue  # the prose around a pasted block, which the note names or leaves out
                    if _norm(sentence) not in _norm(said):
                        failures.append(f"{rel}:{line_no} cites {anchor} of {target}, which does not say {sentence!r}")
            elif rel.startswith("digest/"):
                quote = _norm(line_text(citing))
                held = [_norm(line_text(cited[n - 1])) for n in numbers]
                # the same text, one holding the other, or a clause of a line stating several facts
                if not any(h and (h == quote or quote in h or h in quote or _words(quote) <= _words(h)) for h in held):
                    failures.append(f"{rel}:{line_no} {quote!r} cites {target}#{anchor}: {held}")
    return failures


def digest_failures(ws: Path) -> list[str]:
    """A fact line twice in a node, or a history out of date order."""
    from memflow.tasks.dream.digest import facts_of

    failures = []
    for path in _md_files(ws, "digest"):
        facts = facts_of(path.read_text())
        texts = [_norm(f.text) for f in facts]
        failures += [f"{path.name}: {t!r} twice" for t in set(texts) if texts.count(t) > 1]
        for fact in facts:
            chain = [fact.date, *[h.date for h in fact.history]]
            if chain != sorted(chain, reverse=True):
                failures.append(f"{path.name}: history of {fact.text!r} out of date order: {chain}")
            said = [_norm(h.text) for h in [fact, *fact.history]]
            if len(set(said)) < len(said):
                failures.append(f"{path.name}: {fact.text!r} repeats a value in its history")
    return failures


_HEADER_RE = re.compile(r"^\[(?P<path>.+?):L(?P<first>\d+)-L(?P<last>\d+)\]")
_LABEL_RE = re.compile(r"\(replaced \d{4}-\d{2}-\d{2}\) ")
_HISTORY_RE = re.compile(r"^\s+- until \d{4}-\d{2}-\d{2}: ")


def misplaced_packed_lines(ws: Path, blocks: list[str]) -> list[str]:
    """Packed lines of Markdown notes that are not lines of their file between the block's
    L-numbers (links written out, replaced labels taken off), a history line (`  - until ...`)
    kept right under the line it follows in the file: each names the line and where it claimed
    to be. A note line shown a line off, or under a fact it does not belong to, is a wrong
    memory as much as a wrong value. A block may show its lines newest first (`packing`), so
    the order of its facts is not checked, only that each is one of its file's, once."""
    from memflow.tasks.recall import expand

    out = []
    for block in blocks:
        lines = expand(block).split("\n")
        header = _HEADER_RE.match(lines[0])
        if not header or not header["path"].endswith(".md"):
            continue
        file_lines = (ws / header["path"]).read_text(encoding="utf-8").split("\n")
        first, last = int(header["first"]), int(header["last"])
        free = set(range(first - 1, last))  # the block's file lines not yet shown
        at = None  # where the line before it was found
        for line in lines[1:]:
            if line == "…":
                at = None
                continue
            shown = _LABEL_RE.sub("", line, count=1)
            if _HISTORY_RE.match(shown) and at is not None:
                places = [at + 1] if at + 1 in free and file_lines[at + 1] == shown else []
            else:
                places = [n for n in sorted(free) if file_lines[n] == shown]
            if not places:
                out.append(f"{header['path']}:L{first}-L{last}: {line!r}")
                break
            at = places[0]
            free.discard(at)
    return out
