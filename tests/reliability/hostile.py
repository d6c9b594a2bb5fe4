"""A generated hostile corpus: files a workspace may meet in the wild, each kind named so a run
summary can be checked against what was planted. Deterministic for a seed."""

from __future__ import annotations

import os
import random
from pathlib import Path

# kind -> (folder, file name, bytes); every kind is written `count` times with variations
KINDS = (
    "bad_yaml", "yaml_not_mapping", "yaml_unhashable_key", "yaml_alias_bomb", "huge_frontmatter",
    "deep_list", "deep_quote", "huge_line", "nul_bytes", "invalid_utf8", "random_bytes",
    "empty", "only_frontmatter", "weird_name", "crlf_mix", "long_heading_chain", "huge_table_row",
    "yaml_bad_timestamp", "yaml_unknown_tag", "alias_long_string", "huge_heading",
)


def _alias_bomb() -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines)


def content(kind: str, rng: random.Random, n: int) -> bytes:
    word = f"needle{n}"
    if kind == "bad_yaml":
        return f"---\nname: [unclosed\ndescription: {{bad\n---\n\n# Note {n}\n\n{word} body\n".encode()
    if kind == "yaml_not_mapping":
        return f"---\n- just\n- a list\n---\n\n{word}\n".encode()
    if kind == "yaml_unhashable_key":
        return f"---\n? [a, b]\n: value\n---\n\n{word}\n".encode()
    if kind == "yaml_alias_bomb":
        return f"---\n{_alias_bomb()}\n---\n\n{word}\n".encode()
    if kind == "huge_frontmatter":
        return (f"---\nname: {'x' * (3_000_000 + n)}\n---\n\n{word}\n").encode()
    if kind == "deep_list":
        depth = 3000 + rng.randrange(500)
        return ("".join("  " * i + "- item\n" for i in range(depth)) + word).encode()
    if kind == "deep_quote":
        return (">" * (5000 + rng.randrange(500)) + f" {word}\n").encode()
    if kind == "huge_line":
        return (f"# Long\n\n{word} " + "abc " * (1_000_000 + n)).encode()
    if kind == "nul_bytes":
        return f"# Nul\n\n{word}\x00\x00 after nul\n".encode()
    if kind == "invalid_utf8":
        return b"# Bad bytes\n\n" + word.encode() + b" \xff\xfe\xc3\x28 tail\n"
    if kind == "random_bytes":
        return rng.randbytes(2000 + rng.randrange(2000))
    if kind == "empty":
        return b""
    if kind == "only_frontmatter":
        return b"---\nname: nothing else\n---\n"
    if kind == "weird_name":
        return f"# Weird\n\n{word}\n".encode()
    if kind == "crlf_mix":
        return f"# Mixed\r\n\r\n- one {word}\r- two\n- three\r\n".encode()
    if kind == "long_heading_chain":
        return ("".join(f"{'#' * (1 + i % 6)} h{i}\n\ntext {i}\n\n" for i in range(5000)) + word).encode()
    if kind == "huge_table_row":
        return (f"| a | b |\n|---|---|\n| {word} | {'y' * 2_000_000} |\n").encode()
    if kind == "yaml_bad_timestamp":
        return f"---\nname: T{n}\nwhen: !!timestamp 'yesterday'\n---\n\n- {word} likes tea.\n".encode()
    if kind == "yaml_unknown_tag":
        return f"---\nname: !!python/object/apply:os.system ['true']\nx: !!binary aGk=\n---\n\n{word}\n".encode()
    if kind == "alias_long_string":  # 60 KB of text, a name of 60 MB once aliases are expanded
        refs = ", ".join(["*a"] * 2000)
        return f"---\nblob: &a \"{'x' * 30_000}\"\nname: [{refs}]\n---\n\n{word}\n".encode()
    if kind == "huge_heading":  # a 3 MB heading every chunk under it would repeat
        return ("# " + "h" * (3_000_000 + n) + "\n\n"
                + "".join(f"para {j} {word}\n\n" for j in range(300))).encode()
    raise ValueError(kind)


def name_for(kind: str, n: int) -> str:
    if kind == "weird_name":
        return ["semi;colon", "spa ce", "ünïcödé", "quote'\"", "dash-leading", "emoji🙂",
                "back\\slash", "percent%20"][n % 8] + f"-{n}.md"
    return f"{kind}-{n}.md"


def make_hostile(root: Path, per_kind: int, seed: int = 7) -> dict[str, str]:
    """Write `per_kind` files of every kind under root/daily/2026-01-01/ (and specials: a
    symlink loop, a FIFO). Returns rel path -> kind."""
    rng = random.Random(seed)
    folder = root / "daily" / "2026-01-01"
    folder.mkdir(parents=True, exist_ok=True)
    planted: dict[str, str] = {}
    for kind in KINDS:
        for n in range(min(per_kind, 10) if kind.startswith("huge") else per_kind):  # MBs each
            path = folder / name_for(kind, n)
            path.write_bytes(content(kind, rng, n))
            planted[path.relative_to(root).as_posix()] = kind
    loop = root / "daily" / "loop"
    if not loop.exists():
        loop.symlink_to(root / "daily", target_is_directory=True)
    self_link = folder / "self.md"
    if not self_link.is_symlink():
        self_link.symlink_to(self_link)
    if hasattr(os, "mkfifo") and not (folder / "fifo.md").exists():
        os.mkfifo(folder / "fifo.md")
    return planted


# digest/ and resource/ entries no job may choke on (workspace path -> what it is)
SPECIALS = {"digest/fifo.md": "fifo", "digest/dangling.md": "dangling_symlink",
            "digest/loop.md": "symlink_loop", "digest/x.md": "folder_named_md",
            "digest/wiki/bad-timestamp.md": "yaml_bad_timestamp",
            "resource/noise.txt": "random_bytes_no_nul"}


def make_hostile_specials(root: Path, seed: int = 7) -> dict[str, str]:
    """Plant SPECIALS (a FIFO, a dangling symlink, a symlink loop and a folder named x.md
    under digest/, a digest node with a bad timestamp tag, random bytes without NUL as a .txt
    resource). Returns SPECIALS."""
    rng = random.Random(seed)
    digest = root / "digest"
    (digest / "wiki").mkdir(parents=True, exist_ok=True)
    if hasattr(os, "mkfifo") and not (digest / "fifo.md").exists():
        os.mkfifo(digest / "fifo.md")
    for name, target in (("dangling.md", "nowhere.md"), ("loop.md", "loop.md")):
        if not (digest / name).is_symlink():
            (digest / name).symlink_to(target)
    (digest / "x.md").mkdir(exist_ok=True)
    (digest / "wiki" / "bad-timestamp.md").write_bytes(content("yaml_bad_timestamp", rng, 0))
    (root / "resource").mkdir(exist_ok=True)
    (root / "resource" / "noise.txt").write_bytes(bytes(rng.randrange(1, 256) for _ in range(3000)))
    return dict(SPECIALS)


def deep_json(depth: int = 200_000) -> str:
    """A 'conversation' that is only an opening bracket nested `depth` times."""
    return "[" * depth
