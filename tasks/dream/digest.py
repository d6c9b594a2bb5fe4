"""Digest nodes (pure text functions): one node per subject, one line per fact.

```
---
name: Jonas – home and family
description: I moved from Berlin to Lisbon last week.
subject: person:jonas:home-and-family
format: facts-1
---

# Jonas – home and family

- 2026-03-09: I moved from Berlin to Lisbon last week. [[daily/2026-03-09/move.md#L12]]
  - until 2026-03-09: I live in Berlin. [[daily/2026-03-02/intro.md#L12]]
- 2026-03-02: My cat Mochi is three years old. [[daily/2026-03-02/intro.md#L13]]
```

A fact line carries the date it was stated and its source links, once; a replaced fact stays
under the current one as dated history. Edits are line operations: add a line, add a link to a
line, or put a new value above an old one; `check_only_changed` proves after every edit that no
other line of the node moved or changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memflow.tasks.ground.markdown import RELATED, parse_links
from memflow.tasks.ground.notes import parse_note, render_note

FORMAT = "facts-1"
_FACT_RE = re.compile(r"^- (\d{4}-\d{2}-\d{2}): (.*?)((?:\s*\[\[[^\[\]]+\]\])*)\s*$")
_HISTORY_RE = re.compile(r"^  - until (\d{4}-\d{2}-\d{2}): (.*?)((?:\s*\[\[[^\[\]]+\]\])*)\s*$")
_TRAILING_LINKS_RE = re.compile(r"(\s*\[\[[^\]]+\]\])+\s*$")


def plain(text: str) -> str:
    """A fact without its bullet and trailing provenance links."""
    return _TRAILING_LINKS_RE.sub("", text.strip().removeprefix("- ")).strip()


@dataclass
class FactLine:
    line: int               # 0-based index in the node's lines
    date: str               # when it was stated (a current fact) or until when it held (history)
    text: str
    links: list[str] = field(default_factory=list)   # `target#anchor`
    history: list["FactLine"] = field(default_factory=list)


def _links(tail: str) -> list[str]:
    return [f"{l.target}#{l.anchor}" if l.anchor else l.target for l in parse_links(tail)]


# a role before a fact taken from a chat's other party ("Assistant: Run deploy/rollback.sh ..."):
# the line says who said it, as its daily line does; a node's description is the words alone
ROLE_RE = re.compile(r"^(Assistant|Tool|System): ", re.IGNORECASE)


def described(fact: str) -> str:
    """A node's description from a fact's text: its words without a role, at most 200 characters."""
    return ROLE_RE.sub("", fact)[:200]


def fact_line(day: str, text: str, links: list[str]) -> str:
    return f"- {day}: {' '.join(text.split())}" + "".join(f" [[{link}]]" for link in links)


def history_line(until: str, text: str, links: list[str]) -> str:
    return f"  - until {until}: {' '.join(text.split())}" + "".join(f" [[{link}]]" for link in links)


def render_node(name: str, subject: str, facts: list[tuple[str, str, list[str]]],
                related: list[str] | None = None, extra_meta: dict | None = None) -> str:
    """A new node: `facts` are (date, text, links), in the order given."""
    body = [f"# {name}", "", *[fact_line(*f) for f in facts]]
    if related:
        body += ["", RELATED + ", ".join(f"[[{r}]]" for r in related)]
    meta = {"name": name, "description": described(facts[0][1]) if facts else "", "subject": subject,
            "format": FORMAT, **(extra_meta or {})}
    return render_note(meta, "\n" + "\n".join(body) + "\n")


def is_fact_node(text: str) -> bool:
    return parse_note("node", text).metadata.get("format") == FORMAT


def facts_of(text: str) -> list[FactLine]:
    """The current facts of a node, in order, each with its history lines."""
    facts: list[FactLine] = []
    for i, line in enumerate(text.split("\n")):
        if m := _FACT_RE.match(line):
            facts.append(FactLine(i, m.group(1), m.group(2), _links(m.group(3))))
        elif (m := _HISTORY_RE.match(line)) and facts:
            facts[-1].history.append(FactLine(i, m.group(1), m.group(2), _links(m.group(3))))
    return facts


def cited(text: str) -> set[str]:
    """Every `target#anchor` a node's fact and history lines cite."""
    return {link for f in facts_of(text) for line in [f, *f.history] for link in line.links}


def _end_of_facts(lines: list[str]) -> int:
    last = max((i for i, line in enumerate(lines) if _FACT_RE.match(line) or _HISTORY_RE.match(line)),
               default=None)
    if last is not None:
        return last + 1
    heading = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
    return (heading + 2) if heading is not None else len(lines)


def add_fact(text: str, day: str, fact: str, links: list[str], before: FactLine | None = None) -> str:
    """A new fact line at the end of the facts, or just above `before` (a newer statement of some
    of an old fact's attributes goes first; the old line stays whole)."""
    lines = text.split("\n")
    at = before.line if before else _end_of_facts(lines)
    if at > len(lines) - 1 and lines and lines[-1] == "":
        at = len(lines) - 1
    lines.insert(at, fact_line(day, fact, links))
    return "\n".join(lines)


def add_links(text: str, fact: FactLine, links: list[str]) -> str:
    """CORROBORATE: the same fact stated again; its new sources are added to its line."""
    lines = text.split("\n")
    new = [link for link in links if link not in fact.links]
    lines[fact.line] = fact_line(fact.date, fact.text, fact.links + new)
    return "\n".join(lines)


def supersede(text: str, old: FactLine, day: str, new: str, links: list[str]) -> str:
    """CORRECT: `new` (stated on `day`) takes the old fact's place; the old fact becomes the
    first history line under it ("until <day>"), its own history kept below."""
    lines = text.split("\n")
    lines[old.line:old.line + 1] = [fact_line(day, new, links), history_line(day, old.text, old.links)]
    return "\n".join(lines)


def set_meta(text: str, **values: object) -> str:
    note = parse_note("node", text)
    return render_note({**note.metadata, **values}, note.body)


class NodeEditError(ValueError):
    """An edit would change or drop a fact line it was not about."""


def check_only_changed(before: str, after: str, touched: FactLine | None = None) -> None:
    """Every fact and history line of `before` is in `after`, in the same order, byte-identical,
    except `touched` (whose text must then survive as a history line or keep its words)."""
    old_lines = [(f.line, before.split("\n")[f.line]) for f in facts_of(before)
                 for f in [f, *f.history]]
    new_text = after.split("\n")
    new_set = [line for line in new_text if _FACT_RE.match(line) or _HISTORY_RE.match(line)]
    position = 0
    for index, line in old_lines:
        if touched is not None and index == touched.line:
            if not any(touched.text in other for other in new_set):
                raise NodeEditError(f"the fact being replaced is gone: {touched.text[:80]!r}")
            continue
        try:
            position = new_set.index(line, position) + 1
        except ValueError:
            raise NodeEditError(f"an edit changed or dropped a fact it was not about: {line.strip()[:80]!r}") \
                from None
