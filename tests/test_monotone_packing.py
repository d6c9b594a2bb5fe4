"""Budgets are monotone (issue #28): what the packed context holds at a budget it holds at every
larger one, over generated ranked lists (long and short lines, transcripts and notes citing
them) and, when the LoCoMo dev split is present, over its questions at 250 -> ... -> 4000."""

import json
import os
import random
import re
from pathlib import Path

import pytest

from memflow import api
from memflow.schemas.recall import SearchResult
from memflow.tasks.ground.tokens import count_tokens
from memflow.tasks.recall import expand, hit_packer, packer, search, term_weights

SEEDS = [int(x) for x in os.environ.get("MEMFLOW_SEEDS", "3,17,29,61").split(",")]
DEV = Path(__file__).resolve().parents[2] / "shared/data/locomo/locomo-dev.json"
BUDGETS = [250, 500, 1000, 2000, 4000]
SYLLABLES = ["ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "ze", "qua", "dri", "sho", "ple"]


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def generated_hits(rng: random.Random) -> tuple[list[SearchResult], dict[str, float]]:
    """Session windows (some lines very long) and daily notes whose lines cite them, ranked."""
    vocab = [word(rng) for _ in range(300)]
    asked = rng.sample(vocab, 4)
    weights = {w: rng.uniform(0.5, 3.0) for w in asked}
    hits = []
    for n in range(rng.randint(8, 30)):
        lines, session = [], f"session/dialog/s{n % 5}.jsonl"
        for _ in range(rng.randint(1, 8)):
            size = rng.choice([6, 12, 30, 120, 300])  # words: a long reply blocks a greedy prefix
            words = [rng.choice(asked) if rng.random() < 0.15 else rng.choice(vocab) for _ in range(size)]
            lines.append(f"{rng.choice(['user', 'assistant'])}: {' '.join(words)}")
        if rng.random() < 0.5:
            start = rng.randint(1, 40)
            text = "\n".join([f"# Session s{n % 5}, 2026-03-0{1 + n % 9}", *lines])
            hits.append(SearchResult(id=str(n), path=session, start_line=start,
                                     end_line=start + len(lines) - 1, text=text, score=1 / (n + 1)))
        else:
            facts = [f"- {line} [[{session}#L{rng.randint(1, 40)}]]" for line in lines]
            text = "\n".join(["## Facts", *facts])
            hits.append(SearchResult(id=str(n), path=f"daily/2026-03-0{1 + n % 9}/note-{n}.md",
                                     start_line=5, end_line=4 + len(facts), text=text, score=1 / (n + 1)))
    return hits, weights


def shown_lines(blocks: list[str]) -> set[str]:
    return {line for b in blocks for line in b.split("\n")[1:] if line != "…"}


def test_greedy_with_skip_is_not_monotone_but_the_packer_is():
    # a=300, b=100, c=100 tokens: greedy-with-skip packs {b, c} at 200 and {a} at 300
    text = {name: f"user: {' '.join([name * 3] * size)}" for name, size in (("a", 145), ("b", 45), ("c", 45))}
    hits = [SearchResult(id=k, path=f"session/dialog/{k}.jsonl", start_line=1, end_line=1,
                         text=f"# Session {k}\n{t}", score=1.0) for k, t in text.items()]
    pack = packer(hits, {}, count_tokens)
    before = set()
    for budget in range(20, 900, 10):
        now = shown_lines(pack(budget))
        assert before <= now, budget
        assert count_tokens("\n\n".join(pack(budget))) <= budget
        before = now
    assert shown_lines(pack(250)) == {text["b"], text["c"]}  # the long one does not block the short


@pytest.mark.parametrize("seed", SEEDS)
def test_what_a_budget_packs_every_larger_budget_packs(seed):
    rng = random.Random(seed)
    for _ in range(20):
        hits, weights = generated_hits(rng)
        pack = hit_packer(hits, weights, count_tokens, neighbours=rng.randint(0, 2))
        budgets = sorted(rng.sample(range(40, 6000), 8))
        before: set = set()
        for budget in budgets:
            packed = pack(budget)
            assert sum(count_tokens(t) for _, t in packed) + max(len(packed) - 1, 0) <= budget
            now = {(i, line) for i, t in packed for line in t.split("\n")[1:] if line != "…"}
            assert before <= now, (seed, budget)
            before = now


@pytest.fixture(scope="module")
def locomo_workspace(tmp_path_factory):
    if not DEV.exists():
        pytest.skip(f"LoCoMo dev split not present at {DEV}")
    from memflow.tasks.evaluate.locomo import session_messages, session_numbers

    sample = json.loads(DEV.read_text())[0]
    ws = tmp_path_factory.mktemp("monotone") / "ws"
    api.init(ws)
    for n in session_numbers(sample["conversation"]):
        api.capture(session_messages(sample, n), f"s{n}", ws)
    api.index(ws)
    return ws, sample


def test_every_locomo_question_keeps_its_context_as_the_budget_grows(locomo_workspace):
    ws, sample = locomo_workspace
    settings = api.settings_for(ws)
    for q in sample["qa"]:
        results = search(settings, q["question"], limit=100, link_limit=0, with_watermark=False).results
        pack = packer(results, term_weights(settings, q["question"]), count_tokens,
                      settings.keyword_tokenizer, settings.pack_neighbours)
        before: set = set()
        for budget in BUDGETS:
            blocks = pack(budget)
            assert count_tokens("\n\n".join(blocks)) <= budget
            now = {(re.match(r"\[(.+?):", b).group(1), line)
                   for b in blocks for line in expand(b).split("\n")[1:] if line != "…"}
            assert before <= now, (q["question"], budget, sorted(before - now)[:3])
            before = now


def test_every_locomo_question_keeps_its_context_with_its_opening(locomo_workspace):
    """As the API packs: the lines answering the question open the context (`answer_head`,
    with the values followed forward); a larger budget still holds every line a smaller one did
    (a line shown in part counts by its kept words)."""
    from memflow.tasks.recall import answer_head, follow_values

    ws, sample = locomo_workspace
    settings = api.settings_for(ws)
    for q in sample["qa"][:80]:
        results = search(settings, q["question"], limit=100, link_limit=0, with_watermark=False).results
        head = answer_head(settings, q["question"])
        results += follow_values(settings, q["question"], results) if head else []
        pack = packer(results, term_weights(settings, q["question"]), count_tokens,
                      settings.keyword_tokenizer, settings.pack_neighbours, head=head)
        before: set = set()
        for budget in BUDGETS:
            blocks = pack(budget)
            assert count_tokens("\n\n".join(blocks)) <= budget
            now = {(re.match(r"\[(.+?):", b).group(1), re.sub(r"\s*\[\[[^\]]*\]\]$", "", line))
                   for b in blocks for line in expand(b).split("\n")[1:] if line != "…"}
            assert before <= now, (q["question"], budget, sorted(before - now)[:3])
            before = now


@pytest.mark.parametrize("seed", SEEDS)
def test_a_floor_on_block_cost_packs_the_same_and_looks_at_fewer_hits(seed):
    """`floor`: hits not yet shown are not looked at once less than a block's least cost is
    left (one number, or one per hit's path: `block_floor`), and with `line_floor` a new block
    is not made once less than its path's floor and its line's words is left; the context is
    the same at every budget, and fewer texts are counted with each."""
    from memflow.tasks.ground.tokens import BLOCK_FLOOR, block_floor, least_tokens

    rng = random.Random(seed)
    floors = {"none": 0, "fixed": BLOCK_FLOOR, "per path": block_floor, "per line": block_floor}
    counted = dict.fromkeys(floors, 0)
    for _ in range(20):
        hits, weights = generated_hits(rng)
        folder = "/".join(word(rng) for _ in range(rng.randint(1, 4)))  # paths of many lengths
        hits += [SearchResult(id=f"x{n}", path=f"{folder}/2026-04-0{1 + n % 9}/{word(rng)}-{n}.md",
                              start_line=3, end_line=3, text=f"## Facts\n- {rng.choice(list(weights))} {word(rng)}",
                              score=0.01 / (n + 1)) for n in range(rng.randint(20, 120))]
        neighbours = rng.randint(0, 2)
        budgets = sorted(rng.sample(range(40, 3000), 6))
        packs = {}
        for name, floor in floors.items():
            def count(text: str, name=name) -> int:
                counted[name] += 1
                return count_tokens(text)
            pack = hit_packer(hits, weights, count, neighbours=neighbours, floor=floor,
                              line_floor=least_tokens if name == "per line" else None)
            packs[name] = [pack(budget) for budget in budgets]
        assert packs["fixed"] == packs["none"], seed
        assert packs["per path"] == packs["none"], seed
        assert packs["per line"] == packs["none"], seed
    assert counted["per line"] < counted["per path"] < counted["none"], counted
    assert counted["fixed"] <= counted["none"], counted


def test_no_block_costs_less_than_the_floor():
    """`BLOCK_FLOOR` is the least any block costs, and `block_floor(path)` no more than what
    a block of a hit in that path costs, whatever the path's characters (letters, digits,
    punctuation, spaces, CJK, emoji: where the pre-tokenizer cuts a header is what it rests on),
    the lines, the line numbers and the heading."""
    from memflow.tasks.ground.tokens import BLOCK_FLOOR, block_floor
    from memflow.tasks.recall.packing import block

    least, tight = 1 << 30, 0
    for hit in random_hits(11):
        path = hit.path
        text = block(hit, [0])
        parts = text.split("\n")
        cost = sum(count_tokens(p + "\n") for p in parts[:-1]) + count_tokens(parts[-1])
        assert cost >= block_floor(path), (path, text)
        tight += cost == block_floor(path)
        least = min(least, cost)
    assert BLOCK_FLOOR <= least <= BLOCK_FLOOR + 1, least
    assert tight > 100, tight  # the floor is reached, not only a bound


@pytest.mark.parametrize("seed", SEEDS)
def test_no_text_costs_fewer_tokens_than_its_words(seed):
    """`least_tokens` is a lower bound of cl100k's count on any text: words of many scripts,
    digits, punctuation runs, contractions, tabs, no-break and ideographic spaces, control
    characters Python calls whitespace and the pre-tokenizer does not (\\x1c), newlines."""
    from memflow.tasks.ground.tokens import least_tokens

    rng = random.Random(seed)
    pieces = ["a", "Zq", "é", "ß", "中", "文字", "ひら", "한", "Ωμ", "١٢", "7", "2026", "½", "²", "Ⅻ", "'s", "'LL",
              ".", "?!", "[[", "]]", "#", "-", "_", "🙂", "\u0301", "\u200b", " ", " ", "  ", "\t", "\u00a0",
              "\u3000", "\x1c", "\x85", "\n", "\r\n", "\u2028"]
    tight = 0
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        words, tokens = least_tokens(text), count_tokens(text)
        assert words <= tokens, (text, words, tokens)
        tight += words == tokens
    # and on lines as memory holds them, where it is the bound that saves the counting
    vocab = [word(rng) for _ in range(500)]
    for _ in range(2000):
        line = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 40)))
        line = rng.choice(["- ", "user: ", "- 2026-03-04: ", ""]) + line + rng.choice(["", ".", " [[daily/x.md#L3]]"])
        assert least_tokens(line) <= count_tokens(line), line
    assert tight > 50, tight  # reached, not only a bound


def test_a_header_counts_as_its_paths_prefix_and_the_rest():
    """Packing counts a block's header `[PATH:L12-L14] ...` as `[PATH:L` (one count per path,
    which `block_floor` makes too) plus the rest: exact for cl100k whatever the path's
    characters (letters, digits, punctuation, spaces, CJK, emoji, a `:L` and digits of its own),
    since the pre-tokenizer ends a piece between a letter and a digit."""
    from memflow.tasks.recall.packing import block

    for hit in random_hits(13):
        path, start = hit.path, hit.start_line
        header = block(hit, [0]).split("\n")[0]
        assert header.startswith(f"[{path}:L{start}")
        cuts = [at + 2 for at in range(len(header) - 2) if header[at:at + 2] == ":L" and header[at + 2] in "0123456789"]
        assert cuts, header
        for cut in cuts:  # packing cuts at the first: every one is exact
            assert count_tokens(header + "\n") == count_tokens(header[:cut]) + count_tokens(
                header[cut:] + "\n"), header


def random_hits(seed: int, n: int = 20000):
    """One-line hits whose paths and lines mix letters, digits, punctuation, spaces, CJK and
    emoji (where the pre-tokenizer cuts a block's header is what its counts rest on)."""
    rng = random.Random(seed)
    alphabet = "abcXYZ019 _-.:/[]()#^é中文🙂\t'\"Ls"
    for i in range(n):
        path = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3))).strip() or "x"
        start = rng.choice([1, 9, 12, 345, 99999])
        yield SearchResult(id=str(i), path=path, start_line=start, end_line=start, text=line, score=1.0,
                           heading_path=rng.choice(["", "# A", "## b > ### C"]))
