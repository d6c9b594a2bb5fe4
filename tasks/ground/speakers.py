"""Who said a line is metadata of the line, not words of it (pure).

A transcript line `user: hi`, a note line `- Caroline: I went ...` and a note heading `## Said by
the assistant` name a speaker. Indexed as words, the label made every line of a speaker match a
question that merely says "the user", and short lines (`user: hi`) ranked high on the label
alone. So a speaker goes into a line's terms as a marked token (`said:<token>`, which no word
tokenizes to), the rest of the line as its words. A query's word that is also a speaker's marked
token in the index adds that token (the query names a speaker: their lines count, as much as
BM25's idf says), but only in chunks that match a word of the query too: a speaker alone never
makes a hit (`user: hi` is not an answer to "where does the user live"). `speaker_mask` keeps
the chunks with a line of one speaker (the `speaker` filter).
"""

from __future__ import annotations

import re
from collections.abc import Container
from functools import lru_cache
from typing import TYPE_CHECKING

from memflow.tasks.ground.markdown import searchable_text
from memflow.tasks.ground.tokenize import joined_lines, tokenize, tokenize_lines
from memflow.tasks.ground.transcript import unmarked

if TYPE_CHECKING:
    import numpy as np

MARK = "said:"  # ':' ends every word of the tokenizer: no content word carries it
OTHERS_TITLE = "Said by"  # + who: a daily note's section of another speaker's words
# `- Caroline: ...`, `- 2024-05-01: Mary Ann: ...`: a capitalised name of one or two words
_NOTE_RE = re.compile(r"^(\s*[-*+]\s+(?:(?:until )?\d{4}-\d{2}-\d{2}: )?)"
                      r"([A-Z][a-z]+(?: [A-Z][a-z]+)?): ")
_SAID_BY_RE = re.compile(rf"(#+ ){OTHERS_TITLE} (.+?)(?= > #|$)")
_NOTE_LINE_RE = re.compile(_NOTE_RE.pattern, re.MULTILINE)  # any line of a text naming a speaker


def split_line(line: str, transcript: bool = False) -> tuple[str, str]:
    """(who the line names as its speaker, the line without that label). A transcript line is
    `Speaker: text` (whatever the name, as `transcript.message_line` writes it); a note line
    carries a capitalised name after its bullet (and date); a `Said by X` heading (also inside
    a breadcrumb) names its speakers and says nothing else."""
    if transcript:
        who, sep, said = line.partition(": ")
        return (who, said) if sep and who.strip() and "\n" not in who else ("", line)
    match = _NOTE_RE.match(line)
    if match:
        return match.group(2), match.group(1) + line[match.end():]
    if OTHERS_TITLE in line and "#" in line:
        names = [m.group(2) for m in _SAID_BY_RE.finditer(line)]
        if names:
            return " ".join(names), _SAID_BY_RE.sub(lambda m: m.group(1), line)
    return "", line


def speaker_tokens(who: str, kind: str = "bigram") -> list[str]:
    """A speaker's name as marked tokens (`the assistant` -> `said:assist`)."""
    return list(_speaker_tokens(who, kind))


@lru_cache(maxsize=4096)
def _speaker_tokens(who: str, kind: str) -> tuple[str, ...]:
    """Cached: a transcript names its few speakers on every line (the tokenizer is pure)."""
    return tuple(MARK + token for token in tokenize(who, kind))


def line_terms(text: str, kind: str = "bigram", transcript: bool = False) -> list[str]:
    """Keyword terms of text, line by line: the words of what each line says, its speaker as
    marked tokens."""
    out: list[str] = []
    for line in text.split("\n"):
        who, said = split_line(line, transcript)
        out.extend(tokenize(said, kind))
        if who:
            out.extend(_speaker_tokens(who, kind))
    return out


def line_words(line: str, kind: str = "bigram", transcript: bool = False) -> list[str]:
    """One line's search terms, as the index counts them and packing scores the line: its
    words as search sees them (`searchable_text`; a transcript piece's place is no words:
    `unmarked`) and its speaker marked."""
    return line_terms(searchable_text(unmarked(line) if transcript else line), kind, transcript)


def text_line_words(text: str, kind: str = "bigram", transcript: bool = False) -> list[list[str]]:
    """`line_words` of each line of `text`, its words found in one scan (`tokenize_lines`):
    neither a piece's place nor a link spans lines, so both come off the whole text at once."""
    whos, said = [], []
    for line in searchable_text(unmarked(text) if transcript else text).split("\n"):
        who, rest = split_line(line, transcript)
        whos.append(who)
        said.append(rest)
    words = tokenize_lines(said, kind)
    for line, who in zip(words, whos):
        if who:
            line.extend(_speaker_tokens(who, kind))
    return words


def text_line_terms(text: str, kind: str = "bigram") -> str:
    """`joined_words(text_line_words(text, kind))` of a note's or a resource's text (not a
    transcript): when no line names a speaker and no Han run needs its tokenizer, in one scan
    over the whole text (`tokenize.joined_lines`), not a loop per line; its `.split()` is the
    text's terms in order."""
    plain = searchable_text(text)
    if not _NOTE_LINE_RE.search(plain) and OTHERS_TITLE not in plain:
        joined = joined_lines(plain)  # None when a Han run is there: its tokenizer is `kind`'s
        if joined is not None:
            return joined
    return joined_words(text_line_words(text, kind))


def joined_words(lines: list[list[str]]) -> str:
    """Per-line terms as one string (terms by spaces, lines by newlines: no term holds either),
    what a chunk row stores so packing need not tokenize its lines again."""
    return "\n".join(" ".join(words) for words in lines)


def named_speakers(tokens: list[str], vocabulary: Container[str]) -> list[str]:
    """The marked tokens of the speakers a query names: each query token whose marked form the
    index holds."""
    return [MARK + t for t in dict.fromkeys(tokens) if not t.startswith(MARK) and MARK + t in vocabulary]


def rows_with(postings, size: int, tokens: list[str], every: bool = False) -> np.ndarray:
    """Rows (of `size`) holding any (`every`: each) of `tokens`, over a BM25 index's postings
    (`vocab_dict`, `get_scores`)."""
    import numpy as np  # search-time only: the index's parsing workers never load it

    if not every:
        known = [t for t in dict.fromkeys(tokens) if postings is not None and t in postings.vocab_dict]
        return (np.asarray(postings.get_scores(known))[:size] > 0) if known else np.zeros(size, dtype=bool)
    mask = np.ones(size, dtype=bool)
    for token in dict.fromkeys(tokens):
        if postings is None or token not in postings.vocab_dict:
            return np.zeros(size, dtype=bool)
        mask &= np.asarray(postings.get_scores([token]))[:size] > 0
    return mask


def speaker_mask(postings, size: int, name: str, kind: str = "bigram") -> np.ndarray:
    """Rows with a line said by `name` (every token of the name); none when the index never
    heard the name."""
    tokens = speaker_tokens(name, kind)
    if not tokens:
        raise ValueError(f"not a speaker name: {name!r}")
    return rows_with(postings, size, tokens, every=True)


def said_words(tokens: list[str]) -> list[str]:
    """A query's tokens without its speakers' marked tokens: what a hit must match."""
    return [t for t in tokens if not t.startswith(MARK)]
