"""File operations on a workspace: read, write, edit, move (rewriting inbound links), delete,
frontmatter get/set. Plain functions behind the CLI, the Python API and the MCP server.

Writes refuse the folders memory-flows manages (`metadata/`: derived index and job state;
`session/`: logs that only grow through `capture`), and each leaves an inbox event.

Rewrites keep bytes they do not touch: files are decoded with `surrogateescape` and CRLF line
ends are kept, so a link rewrite never mangles invalid UTF-8 or line endings elsewhere.
"""

from __future__ import annotations

import os

import yaml

from memflow.tasks.ground.events import append_event
from memflow.tasks.ground.markdown import parse_links, rewrite_links
from memflow.tasks.ground.notes import load_yaml, parse_note, render_note
from memflow.tasks.ground.workspace import (
    Layout,
    PathError,
    markdown_files,
    rel_path,
    safe_path,
)
from memflow.tasks.stores.files import (
    DecodePolicy,
    NotRegular,
    atomic_write_bytes,
    atomic_write_text,
    decode,
    read_regular,
)


class EditError(ValueError):
    """An edit whose old text does not match exactly once."""


def _existing(lay: Layout, rel: str):
    path = safe_path(lay.root, rel)
    if not path.is_file():
        if path.is_dir():
            raise NotRegular(rel, "is a folder, not a file")
        if os.path.lexists(path):
            try:
                read_regular(path, 0)  # raises the reason: FIFO, device, broken link
            except NotRegular as exc:
                raise NotRegular(rel, exc.reason) from exc
        raise FileNotFoundError(f"no such file in the workspace: {rel}")
    return path


def writable(lay: Layout, rel: str):
    """The path of `rel` if a file operation may change it; PathError under `metadata/` or
    `session/` (a hand-written lock or a rewritten log would break the jobs that own them)."""
    path = safe_path(lay.root, rel)
    inside = path.relative_to(lay.root.resolve()).as_posix() if path != lay.root.resolve() else ""
    for folder, why in ((lay.metadata, "holds the index and job state memory-flows manages"),
                        (lay.session, "holds conversation logs that only grow through `capture`")):
        if inside == folder or inside.startswith(folder + "/"):
            raise PathError(f"refused: {rel} is under {folder}/, which {why}")
    return path


def read_file(lay: Layout, rel: str, start: int | None = None, end: int | None = None,
              policy: DecodePolicy = "replace") -> str:
    """Lines start..end (1-based, inclusive) of a workspace file."""
    path = _existing(lay, rel)
    text = decode(read_regular(path), policy, rel)
    if start is None and end is None:
        return text
    lines = text.splitlines(keepends=True)
    first = max(1, start or 1)
    last = len(lines) if end is None else min(end, len(lines))
    if first > last and lines:
        raise ValueError(f"empty line range {first}-{last} (file has {len(lines)} lines)")
    return "".join(lines[first - 1:last])


def write_file(lay: Layout, rel: str, content: str, name: str | None = None,
               description: str | None = None, meta: dict | None = None) -> str:
    """Create or overwrite a file; name/description/meta go into its frontmatter."""
    path = writable(lay, rel)
    existed = path.exists()
    if path.is_dir():
        raise IsADirectoryError(f"is a folder: {rel}")
    extra = dict(meta or {})
    if name is not None:
        extra["name"] = name
    if description is not None:
        extra["description"] = description
    if extra:
        note = parse_note(rel, content)
        if note.warning:
            raise ValueError(f"{rel}: {note.warning}; fix it before adding frontmatter keys")
        metadata = {**note.metadata}
        for key in ("name", "description"):
            if key in extra:
                metadata[key] = extra.pop(key)
        metadata.update(extra)
        ordered = {k: metadata[k] for k in ("name", "description") if k in metadata}
        ordered.update({k: v for k, v in metadata.items() if k not in ordered})
        body = note.body if note.body.startswith("\n") or not note.body else "\n" + note.body
        content = render_note(ordered, body)
    atomic_write_text(path, content)
    written = rel_path(lay.root, path)
    append_event(lay, "write", [written], f"{'overwrote' if existed else 'created'} {written}")
    return written


def _raw(path) -> str:
    return read_regular(path).decode("utf-8", errors="surrogateescape")


def _put_raw(path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8", errors="surrogateescape"))


def edit_file(lay: Layout, rel: str, old: str, new: str) -> None:
    """Replace the one occurrence of `old` with `new`; 0 or several matches is an error."""
    writable(lay, rel)
    path = _existing(lay, rel)
    text = _raw(path)
    count = text.count(old) if old else 0
    if count != 1:
        raise EditError(f"{rel}: old text matches {count} times (must match exactly once)")
    _put_raw(path, text.replace(old, new, 1))
    append_event(lay, "edit", [rel_path(lay.root, path)], f"edited {rel_path(lay.root, path)}")


def move_file(lay: Layout, src: str, dst: str) -> list[str]:
    """Move src to dst and rewrite every inbound `[[src...]]`; returns the files rewritten."""
    writable(lay, src)
    source = _existing(lay, src)
    target = writable(lay, dst)
    src_rel, dst_rel = rel_path(lay.root, source), target.relative_to(lay.root).as_posix()
    if target.exists():
        raise FileExistsError(f"target exists: {dst_rel}")
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, target)
    rewritten = []
    for rel in markdown_files(lay):
        path = lay.root / rel
        text = _raw(path)
        if f"[[{src_rel}" not in text:
            continue
        new_text, count = rewrite_links(text, src_rel, dst_rel)
        if count:
            _put_raw(path, new_text)
            rewritten.append(rel)
    append_event(lay, "move", [src_rel, dst_rel, *rewritten],
          f"moved {src_rel} to {dst_rel}; {len(rewritten)} file(s) relinked")
    return rewritten


def inbound_links(lay: Layout, rel: str) -> list[str]:
    """Workspace Markdown files with a link to `rel`."""
    found = []
    for other in markdown_files(lay):
        text = _raw(lay.root / other)
        if f"[[{rel}" in text and any(link.target == rel for link in parse_links(text)):
            found.append(other)
    return found


def delete_file(lay: Layout, rel: str) -> list[str]:
    """Delete a file; returns the files that still link to it."""
    writable(lay, rel)
    path = _existing(lay, rel)
    rel = rel_path(lay.root, path)
    path.unlink()
    still = inbound_links(lay, rel)
    append_event(lay, "delete", [rel], f"deleted {rel}" + (f"; still linked from {len(still)} file(s)" if still else ""))
    return still


def fm_get(lay: Layout, rel: str, policy: DecodePolicy = "replace") -> dict:
    note = parse_note(rel, decode(read_regular(_existing(lay, rel)), policy, rel))
    if note.warning:
        raise ValueError(f"{rel}: {note.warning}")
    return note.metadata


def parse_assignments(pairs: list[str]) -> dict:
    """`k=v` strings -> dict; values are YAML scalars (numbers, dates, booleans keep types)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"expected key=value, got {pair!r}")
        try:
            out[key.strip()] = load_yaml(value) if value.strip() else ""
        except yaml.YAMLError as exc:
            raise ValueError(f"{pair!r}: the value is not plain YAML ({str(exc).splitlines()[0]}); "
                             "quote it to store it as text") from exc
    return out


def fm_set(lay: Layout, rel: str, values: dict) -> dict:
    """Set frontmatter keys (others kept in order); returns the new frontmatter."""
    writable(lay, rel)
    path = _existing(lay, rel)
    raw = _raw(path)
    note = parse_note(rel, raw)
    if note.warning:
        raise ValueError(f"{rel}: {note.warning}")
    metadata = {**note.metadata, **values}
    text = render_note(metadata, note.body if note.metadata else "\n" + note.body)
    if "\r\n" in raw:
        text = text.replace("\n", "\r\n")
    _put_raw(path, text)
    append_event(lay, "fm-set", [rel_path(lay.root, path)], f"set {', '.join(values)} in {rel_path(lay.root, path)}")
    return metadata


__all__ = ["EditError", "PathError", "read_file", "write_file", "edit_file", "move_file",
           "delete_file", "inbound_links", "fm_get", "fm_set", "parse_assignments", "writable"]
