"""Generate a benchmark workspace: N Markdown notes with frontmatter, headings, lists, tables,
code fences and wikilinks, about 15% Chinese (seeded, so runs compare)."""

from __future__ import annotations

import random
from pathlib import Path

EN_WORDS = ("socket retry timeout deploy rollback cache index query latency budget invoice garden "
            "recipe flight hotel meeting review design schema migration kernel patch server client "
            "token vector cluster node backup restore alert metric dashboard tenant billing").split()
ZH_WORDS = "服务器 数据库 缓存 部署 回滚 会议 预算 发票 花园 食谱 航班 酒店 评审 设计 迁移 内核 补丁 客户端 集群 节点 备份 告警".split()
IDENTIFIERS = ["handleWebSocketReconnect", "ECONNREFUSED", "P99", "retryWithBackoff", "OOMKilled"]


def sentence(rng: random.Random, zh: bool) -> str:
    if zh:
        return "".join(rng.choice(ZH_WORDS) for _ in range(rng.randint(4, 9))) + "。"
    words = [rng.choice(EN_WORDS) for _ in range(rng.randint(6, 14))]
    if rng.random() < 0.1:
        words.insert(rng.randrange(len(words)), rng.choice(IDENTIFIERS))
    return " ".join(words).capitalize() + "."


def note_text(rng: random.Random, n: int, total: int) -> str:
    zh = rng.random() < 0.15
    title = sentence(rng, zh)[:40]
    parts = [f"---\nname: {title!r}\ndescription: {sentence(rng, zh)!r}\ntags: [bench, n{n % 7}]\n---\n",
             f"# {title}\n", " ".join(sentence(rng, zh) for _ in range(3)) + "\n"]
    for section in range(rng.randint(1, 3)):
        parts.append(f"## Part {section}\n")
        parts.append("\n".join(f"- {sentence(rng, zh)} [[daily/2026-01-{1 + rng.randrange(28):02d}/n{rng.randrange(total)}.md]]"
                               for _ in range(rng.randint(2, 6))) + "\n")
        if rng.random() < 0.3:
            parts.append("| key | value |\n|---|---|\n" + "\n".join(
                f"| {rng.choice(EN_WORDS)} | {rng.randint(1, 999)} |" for _ in range(rng.randint(2, 8))) + "\n")
        if rng.random() < 0.2:
            parts.append("```python\n" + "\n".join(f"{rng.choice(EN_WORDS)}_{i} = {i}" for i in range(rng.randint(2, 10))) + "\n```\n")
    return "\n".join(parts)


def build(root: Path, count: int, seed: int = 1) -> list[Path]:
    """Write `count` notes under root/daily and root/digest; returns their paths."""
    rng = random.Random(seed)
    paths = []
    for n in range(count):
        folder = f"daily/2026-01-{1 + n % 28:02d}" if n % 5 else "digest/wiki"
        path = root / folder / f"n{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(rng, n, count), encoding="utf-8")
        paths.append(path)
    return paths


QUERIES = ["handleWebSocketReconnect timeout", "ECONNREFUSED server restart", "deploy rollback budget",
           "缓存 服务器", "数据库迁移", "P99 latency dashboard", "invoice billing tenant", "backup restore node"]
