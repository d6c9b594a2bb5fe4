"""File operations on a workspace: read, write, edit, move (rewriting inbound links), delete,
frontmatter get/set. Plain functions behind the CLI, the Python API and the MCP server.

Private by default: every operation resolves its path (symlinks followed) and refuses anything
outside the memory layers (`readable`: session/, resource/, daily/, digest/; `writable`: the
same but session/, whose logs only grow through `capture`), so `memflow.toml` (settings and
keys) and `metadata/` (index, job state, the forgotten texts) are never read or written
through a file tool. Each write leaves an inbox event.

Rewrites keep bytes they do not touch: files are decoded with `surrogateescape` and CRLF line
ends are kept, so a link rewrite never mangles invalid UTF-8 or line endings elsewhere.
"""

from __future__ import annotations

import os

import yaml

from memflow.tasks.ground.anchors import repoint_inbound
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


def _under(inside: str, folder: str) -> bool:
    return inside == folder or inside.startswith(folder + "/")


def _layer_path(lay: Layout, rel: str, layers: tuple[str, ...], verb: str):
    """The resolved path of `rel` (symlinks followed) if it lies in one of `layers`; PathError
    saying why not. `metadata/` (index, job state, the forgotten texts) and `memflow.toml`
    (settings, keys) are never reachable through a file tool."""
    path = safe_path(lay.root, rel)
    inside = path.relative_to(lay.root.resolve()).as_posix() if path != lay.root.resolve() else ""
    if _under(inside, lay.metadata):
        raise PathError(f"refused: {rel} is under {lay.metadata}/, which holds the index and job state "
                        "memory-flows manages")
    if not any(_under(inside, folder) and inside != folder for folder in layers):
        folders = ", ".join(f"{folder}/" for folder in layers)
        raise PathError(f"refused: {rel} is not in a memory layer; file tools {verb} only files under {folders}")
    return path


def readable(lay: Layout, rel: str):
    """The path of `rel` if a file tool may read it: a file in session/, resource/, daily/ or
    digest/; PathError otherwise (memflow.toml, metadata/, anything else in the workspace)."""
    return _layer_path(lay, rel, (lay.session, lay.resource, lay.daily, lay.digest), "read")


def _existing(lay: Layout, rel: str):
    path = readable(lay, rel)
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
    """The path of `rel` if a file operation may change it: a file under resource/, daily/ or
    digest/. PathError under `metadata/` or `session/` (a hand-written lock or a rewritten log
    would break the jobs that own them) and anywhere outside the memory layers."""
    path = safe_path(lay.root, rel)
    inside = path.relative_to(lay.root.resolve()).as_posix() if path != lay.root.resolve() else ""
    if _under(inside, lay.session):
        raise PathError(f"refused: {rel} is under {lay.session}/, which holds conversation logs that "
                        "only grow through `capture`")
    return _layer_path(lay, rel, (lay.resource, lay.daily, lay.digest), "write")


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
    before = _raw(path) if existed else ""
    atomic_write_text(path, content)
    written = rel_path(lay.root, path)
    relinked = repoint_inbound(lay, written, before, _raw(path)) if existed else []
    append_event(lay, "write", [written, *relinked], f"{'overwrote' if existed else 'created'} {written}"
                 + _relinked(relinked))
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
    after = text.replace(old, new, 1)
    _put_raw(path, after)
    rel = rel_path(lay.root, path)
    relinked = repoint_inbound(lay, rel, text, after)
    append_event(lay, "edit", [rel, *relinked], f"edited {rel}" + _relinked(relinked))


def _relinked(files: list[str]) -> str:
    """The event's note of links that followed their text to its new line."""
    return f"; re-pointed line links in {len(files)} file(s)" if files else ""


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


LIST_KEYS = ("tags", "aliases")  # frontmatter keys whose value is a list


def parse_assignments(pairs: list[str]) -> dict:
    """`k=v` strings -> dict; values are YAML (numbers, dates and booleans keep their types,
    `[a, b]` is a list); `tags` and `aliases` are always lists: `tags=a,b` -> [a, b]."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"expected key=value, got {pair!r}")
        try:
            out[key.strip()] = load_yaml(value) if value.strip() else ""
            if key.strip() in LIST_KEYS and not isinstance(out[key.strip()], list):
                out[key.strip()] = [v.strip() for v in value.split(",") if v.strip()]
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
    rel = rel_path(lay.root, path)
    relinked = repoint_inbound(lay, rel, raw, text)
    append_event(lay, "fm-set", [rel, *relinked], f"set {', '.join(values)} in {rel}" + _relinked(relinked))
    return metadata


__all__ = ["EditError", "PathError", "read_file", "write_file", "edit_file", "move_file",
           "delete_file", "inbound_links", "fm_get", "fm_set", "parse_assignments", "readable", "writable"]
