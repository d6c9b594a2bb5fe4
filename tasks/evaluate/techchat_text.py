"""Text of the generated technical chats (pure, seeded): pseudo-word pools, pasted code and
logs, long Markdown replies. `tasks/evaluate/techchat.py` decides what is said where; this
module only writes it, from an `random.Random` it is handed (same seed, same text)."""

from __future__ import annotations

import random
from dataclasses import dataclass

_ONSETS = "b c d f g h j k l m n p r s t v z br cr dr fl gr kl pr st tr sk sn ch sh".split()
_VOWELS = "a e i o u ai ea io ou ei".split()
_CODAS = ["", "", "n", "r", "s", "x", "l", "m", "k", "th", "nd", "rt"]
# generic words a technical chat is made of around the pseudo-words (the text's glue)
_TECH = ("cache queue handler worker request payload schema migration build deploy cluster "
         "config client server index shard buffer pipeline job retry socket token session "
         "stream batch endpoint container image release branch test fixture metric alert").split()
_LEVELS = ("DEBUG", "INFO", "WARN", "ERROR")


def pseudo_words(rng: random.Random, n: int, taken: set[str] | None = None) -> list[str]:
    """`n` distinct pronounceable non-words of 2-3 syllables, none in `taken` (which grows)."""
    taken = taken if taken is not None else set()
    out: list[str] = []
    while len(out) < n:
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                       for _ in range(rng.choice((2, 2, 3))))
        if word not in taken and len(word) >= 5:
            taken.add(word)
            out.append(word)
    return out


@dataclass(frozen=True)
class Pools:
    """The pseudo-word pools one conversation draws from."""

    projects: list[str]
    components: list[str]
    libraries: list[str]
    products: list[str]
    people: list[str]
    words: list[str]  # identifiers, modules, nouns of the filler


def make_pools(rng: random.Random, projects: int, components: int, libraries: int,
               words: int = 1500) -> Pools:
    taken: set[str] = set()
    return Pools(projects=[w.capitalize() for w in pseudo_words(rng, projects, taken)],
                 components=pseudo_words(rng, components, taken),
                 libraries=pseudo_words(rng, libraries, taken),
                 products=[w.capitalize() for w in pseudo_words(rng, 40, taken)],
                 people=[w.capitalize() for w in pseudo_words(rng, 30, taken)],
                 words=pseudo_words(rng, words, taken))


class Writer:
    """Sentences, code and logs about a project from one seeded generator."""

    def __init__(self, rng: random.Random, pools: Pools):
        self.rng, self.pools = rng, pools

    def word(self) -> str:
        return self.rng.choice(self.pools.words)

    def tech(self) -> str:
        return self.rng.choice(_TECH)

    def sentence(self, project: str, component: str) -> str:
        r, w, t = self.rng, self.word, self.tech
        forms = (
            f"The {w()} {t()} in {component} drops {w()} frames when the {t()} is full.",
            f"I moved the {w()} step of {project} behind the {t()} so {w()} stays idempotent.",
            f"After the last {t()} the {component} {w()} stopped emitting {w()} events.",
            f"We still call {w()}_{w()}() from the {t()} on every {w()} tick.",
            f"Nothing in {w()} reads the {t()} before {component} has finished its {w()} pass.",
            f"The {t()} for {w()} is rebuilt whenever {project} rotates the {w()} keys.",
            f"Half of the {w()} tests in {component} time out on the {t()} fixture.",
            f"It only happens when {w()} and {w()} share one {t()}.",
        )
        return r.choice(forms)

    def paragraph(self, project: str, component: str, n: int) -> str:
        return " ".join(self.sentence(project, component) for _ in range(n))

    def log(self, project: str, component: str, lines: int) -> str:
        r = self.rng
        out = []
        for i in range(lines):
            stamp = f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:" \
                    f"{r.randint(0, 59):02d}:{r.randint(0, 59):02d}Z"
            out.append(f"{stamp} {r.choice(_LEVELS)} {component}.{self.word()} {self.word()} "
                       f"{self.tech()} {self.word()} code={r.randint(100, 599)} "
                       f"req={r.getrandbits(32):08x} {project.lower()}")
        return "```\n" + "\n".join(out) + "\n```"

    def code(self, project: str, component: str, lines: int, extra: str = "") -> str:
        """A Python snippet of about `lines` lines; `extra` (a config line) goes inside it."""
        r, w = self.rng, self.word
        lib = r.choice(self.pools.libraries)
        body = [f"# {project.lower()}/{component}/{w()}.py", f"import {lib}",
                f"from {project.lower()}.{component} import {w()}", "",
                f"def {w()}_{w()}(payload, *, {w()}=None):"]
        while len(body) < lines:
            body.append(r.choice((
                f"    {w()} = {lib}.{w()}({w()}, {w()}={r.randint(1, 64)})",
                f"    if {w()}.{w()} is None:",
                f"        raise ValueError(\"missing {w()}\")",
                f"    for {w()} in payload.{w()}():",
                f"        {w()}.{w()}({w()})",
                f"    log.info(\"{w()} %s\", {w()})",
            )))
        if extra:
            body.insert(r.randint(5, len(body)), f"    # {extra}")
        body.append(f"    return {w()}")
        return "```python\n" + "\n".join(body) + "\n```"

    def config(self, component: str, lines: int) -> str:
        r = self.rng
        body = [f"{component}:"] + [f"  {self.word()}: {r.choice((str(r.randint(1, 900)), self.word(), 'true'))}"
                                    for _ in range(lines)]
        return "```yaml\n" + "\n".join(body) + "\n```"

    def reply(self, project: str, component: str, statement: str = "") -> str:
        """An assistant reply of roughly 300-800 tokens: heading, paragraphs, a list, code;
        `statement` (advice the question may ask about) sits in one of the paragraphs."""
        r, w = self.rng, self.word
        parts = [f"## {w().capitalize()} {self.tech()} in {component}",
                 self.paragraph(project, component, r.randint(2, 4))]
        parts.append("\n".join(f"- **{w()}**: {self.sentence(project, component)}"
                               for _ in range(r.randint(3, 6))))
        parts.append(self.code(project, component, r.randint(8, 16)))
        closing = self.paragraph(project, component, r.randint(2, 3))
        parts.append(f"{closing} {statement}".strip() if statement and r.random() < 0.5 else closing)
        if statement and statement not in parts[-1]:
            parts.insert(2, f"{statement} {self.paragraph(project, component, 1)}")
        parts.append(f"### {w().capitalize()} steps\n" + "\n".join(
            f"{i}. {self.sentence(project, component)}" for i in range(1, r.randint(3, 5))))
        return "\n\n".join(parts)

    def paste(self, project: str, component: str, statement: str, opening: str = "") -> str:
        """A user message: an opening line, a pasted log or snippet, the statement between
        pasted blocks, and more paste."""
        r = self.rng
        first = r.choice((self.log(project, component, r.randint(8, 18)),
                          self.code(project, component, r.randint(10, 18)),
                          self.config(component, r.randint(6, 12))))
        second = r.choice((self.log(project, component, r.randint(5, 12)),
                           self.code(project, component, r.randint(6, 12))))
        head = opening or self.sentence(project, component)
        return "\n\n".join([head, first, f"{statement} {self.sentence(project, component)}".strip(),
                            second])
