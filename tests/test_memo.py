"""Search's remembered per-line answers cost the garbage collector nothing (ground.memo), and the
recall caches built on them answer as the functions do."""

import gc
import os
import random
import string

from memflow.tasks.ground.memo import memo
from memflow.tasks.ground.tokens import count_line_tokens, count_tokens
from memflow.tasks.recall.timeline import _said_terms, said_terms

SEED = int(os.environ.get("MEMFLOW_SEED", "7117"))


def _texts(rng: random.Random, count: int) -> list[str]:
    alphabet = string.ascii_letters + string.digits + " .,:-#[]()\u4e00\u4e8c\u4e09\u00e9\u00fc"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(count)]


def test_memo_answers_as_the_function_and_starts_again_when_full():
    calls = []

    def shape(text: str):
        calls.append(text)
        return [len(text), text.upper(), None, len(text) % 2 == 0, len(text) / 3][len(text) % 5]

    remembered = memo(50)(shape)
    rng = random.Random(SEED)
    texts = _texts(rng, 400)
    for text in texts + texts[::-1]:
        assert remembered(text) == shape(text)
    assert remembered.cache_size() <= 50
    before = len(calls)
    assert remembered(texts[0]) == shape(texts[0])  # the last text asked is remembered
    assert len(calls) == before + 1  # the one call is shape's own, above
    remembered.cache_clear()
    assert remembered.cache_size() == 0


def test_memo_table_is_never_walked_by_the_collector():
    remembered = memo(10_000)(lambda text: (len(text) or None) if len(text) % 3 else text[::-1])
    for text in _texts(random.Random(SEED + 1), 5_000):
        remembered(text)
    gc.collect()
    assert remembered.cache_size() > 1_000
    assert not gc.is_tracked(remembered.table)


def test_recall_caches_answer_as_computed_fresh():
    rng = random.Random(SEED + 2)
    letters = string.ascii_lowercase
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(300)]
    tails = ["", " [[daily/2026-01-02/x.md#L4]]", " (replaced 2026-02-03)", " 三月 的 会议"]
    lines = [f"- 2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}: "
             + " ".join(rng.choices(words, k=rng.randint(1, 12))) + rng.choice(tails) for _ in range(300)]
    for tokenizer in ("bigram", "jieba") if _has_jieba() else ("bigram",):
        for line in lines + lines:
            assert said_terms(line, tokenizer) == frozenset(_said_terms(line, tokenizer))
            assert count_line_tokens(line) == count_tokens(line)
    assert not gc.is_tracked(count_line_tokens.table)


def _has_jieba() -> bool:
    try:
        import jieba  # noqa: F401
    except ImportError:
        return False
    return True
