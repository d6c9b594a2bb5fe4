"""Digest nodes (pure text functions): render a node, read its claims and sources, and apply the
additive edits of CORROBORATE, REFINE and CORRECT. Nothing here drops an existing source or link.
"""

from __future__ import annotations

import re

from memflow.tasks.ground.markdown import parse_links
from memflow.tasks.ground.notes import parse_note, render_note

SOURCES = "## Sources"
_BULLET_RE = re.compile(r"^- (.+)$")
_TRAILING_LINKS_RE = re.compile(r"(\s*\[\[[^\]]+\]\])+\s*$")


def plain(text: str) -> str:
    """A fact line without its bullet and trailing provenance links."""
    return _TRAILING_LINKS_RE.sub("", text.strip().removeprefix("- ")).strip()


def source_line(verb: str, link: str, fact: str) -> str:
    return f"- {verb} [[{link}]]: {fact}"


def render_node(name: str, description: str, claims: list[str], related: list[str],
                sources: list[str], extra_meta: dict | None = None) -> str:
    body = [f"# {name}", ""]
    body += [f"- {c}" for c in claims]
    if related:
        body += ["", "Related: " + ", ".join(f"[[{r}]]" for r in related)]
    body += ["", SOURCES, "", *sources, ""]
    meta = {"name": name, "description": description, **(extra_meta or {})}
    return render_note(meta, "\n" + "\n".join(body))


def _split(text: str) -> tuple[list[str], int]:
    lines = text.split("\n")
    try:
        index = next(i for i, line in enumerate(lines) if line.strip() == SOURCES)
    except StopIteration:
        if lines and lines[-1] == "":
            lines.pop()
        lines += ["", SOURCES, ""]
        index = len(lines) - 2
    return lines, index


def claims_of(text: str) -> list[str]:
    """Claim bullets of a node (before `## Sources`)."""
    lines, index = _split(text)
    note = parse_note("node", "\n".join(lines[:index]))
    return [plain(m.group(1)) for line in note.body.split("\n") if (m := _BULLET_RE.match(line))]


def sources_of(text: str) -> set[str]:
    """`target#anchor` of every link in the Sources section."""
    lines, index = _split(text)
    section = "\n".join(lines[index + 1:])
    return {f"{l.target}#{l.anchor}" if l.anchor else l.target for l in parse_links(section)}


def add_source(text: str, line: str) -> str:
    lines, index = _split(text)
    end = len(lines)
    while end > index + 1 and not lines[end - 1].strip():
        end -= 1
    lines.insert(end, line)
    return "\n".join(lines).rstrip("\n") + "\n"


def add_claims(text: str, claims: list[str]) -> str:
    """Insert claim bullets after the last bullet before `## Sources` (or before Related/Sources)."""
    lines, index = _split(text)
    last = max((i for i in range(index) if _BULLET_RE.match(lines[i]) or lines[i].startswith("> note:")),
               default=None)
    if last is None:
        last = next((i - 1 for i in range(index) if lines[i].startswith("Related:")), index - 1)
        while last > 0 and not lines[last].strip():
            last -= 1
    for offset, claim in enumerate(claims, 1):
        lines.insert(last + offset, f"- {claim}")
    return "\n".join(lines)


def correct_claim(text: str, old: str, new: str, link: str, reason: str) -> str:
    """Replace the claim `old` with `new` and mark it `> note: contradicted by [[link]] - ...`."""
    lines, index = _split(text)
    target = plain(old)
    for i in range(index):
        match = _BULLET_RE.match(lines[i])
        if match and plain(match.group(1)) == target:
            note = f"> note: contradicted by [[{link}]] - was: {target}"
            if reason:
                note += f" ({reason})"
            lines[i:i + 1] = [f"- {new}", note]
            return "\n".join(lines)
    raise ValueError(f"claim to correct not found in the node: {old[:80]!r}")


def set_meta(text: str, **values: object) -> str:
    note = parse_note("node", text)
    return render_note({**note.metadata, **values}, note.body)


def related_links(text: str) -> list[str]:
    lines, index = _split(text)
    return [l.target for l in parse_links("\n".join(lines[:index])) if l.target.endswith(".md")]
