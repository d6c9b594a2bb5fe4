"""Generate a workspace shaped like one kept daily for years (issue #58): a folder per day, the
files capture, auto_resource and dream write, in their formats, with their dates as mtimes.

    .venv/bin/python benchmarks/realistic.py /tmp/ws24k --files 24000

What a day holds (the shares are of `--files`):
- `daily/<date>.md`, the day index, and `daily/<date>/<slug>.md`, the day's notes (capture's
  format: frontmatter with `session_id` and `source_conversation`, a `memory:auto` block of
  `## Facts` / `## Decisions` / `## Open items` items, each ending in its session line link);
- `session/dialog/<date>-<n>.jsonl`, the session logs those notes cite (~25%);
- `resource/<year>/<slug>.md|.txt`, documents a person dropped in (~6%), each with its
  `daily/<date>/resource-<slug>.md` note as auto_resource writes it;
- `digest/{personal,procedure,wiki}/<slug>.md`, dream's fact nodes (`facts-1`, ~3%), whose
  lines cite daily notes of the days they were stated.

Days: one folder per day over `files // 10` days (about 7 years at 24k files), at most 20 years
(7,300 days: bigger workspaces are denser, not older). Every file's and folder's mtime is the
day it was written, so a folder last touched years ago looks it. Text is drawn from a Zipf
vocabulary of generated words (about 10% of notes in Chinese characters), names, places and
identifiers, seeded: the same arguments write the same bytes. Nothing is indexed here.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from datetime import date, datetime, timedelta, timezone
from itertools import accumulate
from pathlib import Path

END = date(2026, 11, 30)
MAX_DAYS = 7300
SYLLABLES = ("ka ri to ne mo la su vi de ro pa chi ban tor el an is ul or em ix quo zen "
             "fer gal hol jin kel mur nor pex rin sal tav wen yor").split()
FUNCTION_WORDS = "the a of to and in on for with at from by is was it that this we I".split()
BUCKETS = ("personal", "procedure", "wiki")
SECTION_TITLES = ("Facts", "Decisions", "Open items")


class Vocabulary:
    """Seeded word sources: a Zipf-weighted generated vocabulary, names, places, identifiers."""

    def __init__(self, rng: random.Random, size: int = 30000):
        words: list[str] = []
        seen: set[str] = set()
        while len(words) < size:
            word = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 2, 3, 3, 4))))
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        self.cum = list(accumulate(1.0 / (rank + 1) ** 1.05 for rank in range(size)))
        self.names = [w.capitalize() for w in rng.sample(words[2000:8000], 300)]
        self.places = [w.capitalize() + rng.choice(("burg", "ville", "port", "stad", "ford")) for w in
                       rng.sample(words[3000:9000], 120)]
        self.idents = [f"{a}{b.capitalize()}{c.capitalize()}" for a, b, c in
                       (rng.sample(words[:3000], 3) for _ in range(400))]
        self.hans = [chr(0x4E00 + rng.randrange(0x5000)) for _ in range(3000)]
        self.hans_cum = list(accumulate(1.0 / (rank + 1) for rank in range(len(self.hans))))

    def sentence(self, rng: random.Random, zh: bool = False) -> str:
        if zh:
            return "".join(rng.choices(self.hans, cum_weights=self.hans_cum, k=rng.randint(8, 24))) + "。"
        words = rng.choices(self.words, cum_weights=self.cum, k=rng.randint(6, 16))
        for _ in range(rng.randint(1, 4)):
            words.insert(rng.randrange(len(words)), rng.choice(FUNCTION_WORDS))
        roll = rng.random()
        if roll < 0.25:
            words.insert(rng.randrange(len(words)), rng.choice(self.names))
        elif roll < 0.35:
            words.insert(rng.randrange(len(words)), rng.choice(self.places))
        elif roll < 0.42:
            words.insert(rng.randrange(len(words)), rng.choice(self.idents))
        elif roll < 0.50:
            words.insert(rng.randrange(len(words)), str(rng.randint(2, 2000)))
        text = " ".join(words)
        return text[0].upper() + text[1:] + "."

    def slug(self, rng: random.Random) -> str:
        return "-".join(rng.choices(self.words[:6000], k=3))


def plan_days(files: int) -> list[date]:
    days = max(30, min(MAX_DAYS, files // 10))
    return [END - timedelta(days=days - 1 - n) for n in range(days)]


def stamp(day: date, rng: random.Random) -> tuple[datetime, int]:
    moment = datetime(day.year, day.month, day.day, 8, tzinfo=timezone.utc) + timedelta(seconds=rng.randrange(12 * 3600))
    return moment, int(moment.timestamp() * 1e9)


def session_log(vocab: Vocabulary, rng: random.Random, day: date, zh: bool) -> list[str]:
    moment, _ = stamp(day, rng)
    lines = []
    for n in range(rng.randint(6, 18)):
        role = "user" if n % 2 == 0 else "assistant"
        text = " ".join(vocab.sentence(rng, zh) for _ in range(rng.randint(1, 3)))
        at = (moment + timedelta(seconds=40 * n)).isoformat().replace("+00:00", "Z")
        lines.append(json.dumps({"role": role, "content": text, "timestamp": at}, ensure_ascii=False))
    return lines


def daily_note(vocab: Vocabulary, rng: random.Random, session: str, user_lines: list[int], zh: bool) -> tuple[str, str, str]:
    """(name, description, text) of a captured note citing `user_lines` of `session`."""
    items = [(vocab.sentence(rng, zh), line) for line in user_lines]
    name = ", ".join(rng.choices(vocab.words[:5000], k=3))
    description = items[0][0][:120]
    body = ["<!-- memory:auto -->", f"# {name}", ""]
    at = 0
    for title in SECTION_TITLES:
        take = items[at:at + rng.randint(1, 4)] if title != "Facts" else items[at:at + max(1, len(items) // 2)]
        at += len(take)
        if not take:
            continue
        body += [f"## {title}", "", *(f"- {text} [[{session}#L{line}]]" for text, line in take), ""]
    body.append("<!-- /memory:auto -->")
    meta = (f"---\nname: {json.dumps(name, ensure_ascii=False)}\ndescription: {json.dumps(description, ensure_ascii=False)}\n"
            f"session_id: {session.rsplit('/', 1)[1][:-6]}\nsource_conversation: '[[{session}]]'\n---\n\n")
    return name, description, meta + "\n".join(body) + "\n"


def resource_doc(vocab: Vocabulary, rng: random.Random, title: str) -> str:
    parts = [f"# {title}\n"]
    for section in range(rng.randint(2, 5)):
        parts.append(f"## {vocab.sentence(rng)[:40].rstrip('.')}\n")
        parts.append(" ".join(vocab.sentence(rng) for _ in range(rng.randint(2, 6))) + "\n")
        if rng.random() < 0.3:
            parts.append("```\n" + "\n".join(f"{rng.choice(vocab.idents)}({rng.randint(1, 99)})"
                                              for _ in range(rng.randint(2, 6))) + "\n```\n")
    return "\n".join(parts)


class Writer:
    """Writes files and remembers each folder's newest mtime (set on the folders at the end)."""

    def __init__(self, root: Path):
        self.root = root
        self.folders: dict[str, int] = {}
        self.count = 0

    def write(self, rel: str, text: str, mtime_ns: int) -> None:
        path = self.root / rel
        folder = os.path.dirname(rel)
        if folder not in self.folders:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.folders[folder] = 0
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.utime(path, ns=(mtime_ns, mtime_ns))
        self.folders[folder] = max(self.folders[folder], mtime_ns)
        self.count += 1

    def close(self) -> None:
        """Every folder's mtime is its newest entry's (parents after children: a child's
        creation changed its parent's)."""
        newest: dict[str, int] = {}
        for folder, mtime in self.folders.items():
            parts = folder.split("/")
            for n in range(1, len(parts) + 1):
                key = "/".join(parts[:n])
                newest[key] = max(newest.get(key, 0), mtime)
        for folder in sorted(newest, key=lambda f: -f.count("/")):
            os.utime(self.root / folder, ns=(newest[folder], newest[folder]))


def shares(files: int, days: int) -> dict[str, int]:
    digest = max(3, files * 3 // 100)
    resources = max(1, files * 6 // 200)  # each also has its daily note: 6% in all
    sessions = files // 4
    notes = files - digest - 2 * resources - sessions - days
    if notes < days:
        raise SystemExit(f"--files {files} is too few for {days} days")
    return {"digest": digest, "resources": resources, "sessions": sessions, "notes": notes}


def build(root: Path, files: int, seed: int = 1) -> dict:
    """Write about `files` indexed files under `root` (a new or empty folder); returns counts."""
    rng = random.Random(seed)
    vocab = Vocabulary(rng)
    days = plan_days(files)
    share = shares(files, len(days))
    out = Writer(root)
    for folder in ("session/dialog", "resource", "daily", *(f"digest/{b}" for b in BUCKETS), "metadata/index", "metadata/state"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    # every day has a note; the other notes and the sessions fall on days at random
    note_days = sorted(list(range(len(days))) + [rng.randrange(len(days)) for _ in range(share["notes"] - len(days))])
    session_of_note = {}
    sessions_by_day: dict[int, list[str]] = {}
    session_days = [rng.randrange(len(days)) for _ in range(share["sessions"])]
    for n, d in enumerate(sorted(session_days)):
        sessions_by_day.setdefault(d, []).append(f"session/dialog/{days[d].isoformat()}-{n}.jsonl")
    listing: dict[int, list[str]] = {}
    logs: dict[str, list[int]] = {}
    for d, day in enumerate(days):
        for rel in sessions_by_day.get(d, []):
            zh = rng.random() < 0.1
            lines = session_log(vocab, rng, day, zh)
            logs[rel] = [n + 1 for n in range(0, len(lines), 2)]
            out.write(rel, "\n".join(lines) + "\n", stamp(day, rng)[1])
    all_sessions = sorted(logs)
    for n, d in enumerate(note_days):
        day = days[d]
        own = sessions_by_day.get(d) or [rng.choice(all_sessions)]
        session = own[n % len(own)]
        zh = rng.random() < 0.1
        name, description, text = daily_note(vocab, rng, session, logs[session][:rng.randint(2, 9)], zh)
        rel = f"daily/{day.isoformat()}/{vocab.slug(rng)}-{n}.md"
        out.write(rel, text, stamp(day, rng)[1])
        listing.setdefault(d, []).append(f"- [[{rel}]] name: {name} description: {description}")
        session_of_note[rel] = session
    for n in range(share["resources"]):
        d = rng.randrange(len(days))
        day, slug = days[d], vocab.slug(rng)
        suffix = ".md" if rng.random() < 0.8 else ".txt"
        title = vocab.sentence(rng)[:50].rstrip(".")
        doc = resource_doc(vocab, rng, title)
        source = f"resource/{day.year}/{slug}-{n}{suffix}"
        out.write(source, doc, stamp(day, rng)[1])
        lines = [(i + 1, line) for i, line in enumerate(doc.split("\n")) if line.strip() and not line.startswith("```")]
        note = (f"---\nname: {slug}-{n}{suffix}\ndescription: {json.dumps(f'{slug}{suffix}: {title}')}\n"
                f"source_resource: '[[{source}]]'\n---\n\n# {slug}-{n}{suffix}\n\n"
                + "\n".join(f"- {line.lstrip('# ')} [[{source}#L{i}]]" for i, line in lines[:12]) + "\n")
        rel = f"daily/{day.isoformat()}/resource-{slug}-{n}.md"
        out.write(rel, note, stamp(day, rng)[1])
        listing.setdefault(d, []).append(f"- [[{rel}]] name: {slug}-{n}{suffix} description: {title}")
    for d, entries in listing.items():
        day = days[d].isoformat()
        text = (f"---\nname: '{day}'\ndescription: {len(entries)} note(s) today.\n---\n\n# {day}\n\n"
                "<!-- notes:auto -->\n" + "\n".join(entries) + "\n<!-- /notes:auto -->\n")
        out.write(f"daily/{day}.md", text, stamp(days[d], rng)[1])
    notes = sorted(session_of_note)
    for n in range(share["digest"]):
        bucket = BUCKETS[n % 3]
        name = f"{rng.choice(vocab.names)} – {' '.join(rng.choices(vocab.words[:3000], k=2))}"
        cited = sorted(rng.sample(notes, rng.randint(3, 20)))
        facts = [f"- {c.split('/')[1]}: {vocab.sentence(rng)} [[{c}#L{rng.randint(13, 14)}]]" for c in cited]
        for i in range(len(facts) - 1, 0, -1):
            if rng.random() < 0.1:
                facts.insert(i, f"  - until {cited[i].split('/')[1]}: {vocab.sentence(rng)} [[{cited[i - 1]}#L13]]")
        text = (f"---\nname: {json.dumps(name, ensure_ascii=False)}\ndescription: {json.dumps(facts[0][14:120])}\n"
                f"subject: {bucket}:{vocab.slug(rng)}\nformat: facts-1\n---\n\n# {name}\n\n" + "\n".join(facts) + "\n")
        last = date.fromisoformat(cited[-1].split("/")[1])
        out.write(f"digest/{bucket}/{vocab.slug(rng)}-{n}.md", text, stamp(last, rng)[1])
    out.close()
    return {"files": out.count, "days": len(days), "first_day": days[0].isoformat(), "last_day": days[-1].isoformat(),
            "folders": len(out.folders), **share}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="a new or empty folder")
    parser.add_argument("--files", type=int, default=24000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.root.exists() and any(args.root.iterdir()):
        raise SystemExit(f"{args.root} is not empty")
    started = time.perf_counter()
    summary = build(args.root, args.files, args.seed)
    print(json.dumps({**summary, "seconds": round(time.perf_counter() - started, 1)}))


if __name__ == "__main__":
    main()
