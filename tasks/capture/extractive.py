"""The offline writer (pure): session-log lines -> StructuredNote without a model.

Keeps informative sentences verbatim (greetings, acknowledgements and small talk are dropped),
sorts them into facts, decisions, open items and reflections by cue words, titles the note from
its most salient terms and describes it by its main facts. Each item cites the one log line its
sentence came from.
"""

from __future__ import annotations

import re
from collections import Counter

from memflow.schemas.capture import Item, StructuredNote
from memflow.tasks.capture.sessionlog import message_text
from memflow.tasks.ground.tokenize import STOPWORDS

_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_SMALL_TALK = re.compile(
    r"^(hi|hello|hey|hello again|good (morning|afternoon|evening|night)|morning|thanks?|thank you"
    r"( so much| very much)?|thx|ok(ay)?|sure|great|cool|nice|perfect|awesome|bye|goodbye|see you"
    r"( later)?|yes|no|yep|nope|yeah|got it|that worked|it worked|sounds good|you'?re welcome|"
    r"no problem|how can i help( you)?( today)?|how are you( doing)?|i'?m (fine|good)|"
    r"好的?|谢谢(你|您)?|你好|您好|嗯+|哦+|再见|收到|没问题|早上?好|晚安|好的谢谢|对|是的|行)$")
_ACK_START = re.compile(r"^(noted|got it|understood|updated|sure|okay|ok|will do|done|"
                        r"好的|记住了|收到|明白)\b[:,：，!！ ]", re.IGNORECASE)
_REFLECTION = re.compile(r"\b(next time|should have|we forgot|i forgot|lesson|in the future|"
                         r"avoid .* again)\b|下次|以后要|教训|忘了", re.IGNORECASE)
_DECISION = re.compile(r"\b(we decided|decided to|we will|we'll|let's|agreed|going to)\b|决定|我们会|打算",
                       re.IGNORECASE)
_OPEN = re.compile(r"\b(todo|to do|need to|needs|must|should|pending|follow up)\b|需要|待办|还没",
                   re.IGNORECASE)
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]+|[\u3400-\u4dbf\u4e00-\u9fff]+")


def sentences(text: str) -> list[str]:
    """Sentences, split after . ! ? followed by a space, after 。！？ and at line breaks (so
    `deploy/rollback.sh` stays whole)."""
    return [s.strip() for s in _SENTENCE_END_RE.split(text) if s and s.strip()]


_EMOTIVE = frozenset("""wow oh ah haha lol yeah yay hey hi hello thanks thank awesome amazing great
cool nice fantastic wonderful lovely love glad happy sure totally really so much very good glad
sounds super incredible beautiful proud congrats congratulations omg aww sweet exciting excited
inspiring true agree absolutely definitely""".split())


def informative(sentence: str, role: str) -> bool:
    bare = re.sub(r"[\s.!?,。！？，~…:：;；]+$", "", sentence.strip()).strip().lower()
    bare = re.sub(r"[.!?,。！？，]", "", bare) if len(bare) < 40 else bare
    if not bare or _SMALL_TALK.match(bare):
        return False
    if role == "assistant" and _ACK_START.match(sentence.strip()):
        return False
    if sentence.rstrip().endswith(("?", "？")):
        return False  # questions are context; the answer carries the fact
    han = len(_HAN_RE.findall(sentence))
    words = [w for w in re.findall(r"[A-Za-z0-9_]+", sentence)
             if w.lower() not in STOPWORDS and w.lower() not in _EMOTIVE]
    if han < 6 and len(words) < 4 and sentence.rstrip().endswith("!"):
        return False  # an exclamation of few content words: "Wow, fantastic, Caroline!"
    return han >= 6 or len(words) >= 3 or (len(words) >= 2 and any(c.isdigit() for c in sentence))


def classify(sentence: str) -> str:
    if _REFLECTION.search(sentence):
        return "reflections"
    if _DECISION.search(sentence):
        return "decisions"
    if _OPEN.search(sentence):
        return "open_items"
    return "facts"


def salient_terms(texts: list[str], hint: str = "", n: int = 3) -> list[str]:
    """Most salient terms: identifiers, names and repeated words for Latin text; jieba's
    TF-IDF keywords for Chinese text."""
    joined = "\n".join(texts)
    if len(_HAN_RE.findall(joined)) > len(re.findall(r"[A-Za-z]", joined)) / 3:
        from memflow.tasks.ground.tokenize import load_jieba

        load_jieba()
        import jieba.analyse

        return jieba.analyse.extract_tags(f"{hint}\n{joined}", topK=n)
    counts: Counter[str] = Counter()
    shown: dict[str, str] = {}
    hint_words = {w.lower() for w in _WORD_RE.findall(hint)}
    for text in texts:
        for position, word in enumerate(_WORD_RE.findall(text)):
            key = word.lower()
            if key in STOPWORDS or key in _FILLERS or _HAN_RE.match(word) or (
                    len(word) < 4 and not word.isupper()):
                continue
            named = any(c.isupper() for c in word[1:]) or (word[0].isupper() and position > 0)
            counts[key] += 1.0 + (1.5 if named else 0.0) + (2.0 if key in hint_words else 0.0)
            shown.setdefault(key, word)
    return [shown[k] for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


_FILLERS = frozenset("also next then still just really correction actually please here there "
                     "today tomorrow yesterday always never every would could".split())


def write_extractive(log: list[dict], lines: list[int], hint: str = "") -> StructuredNote:
    """Log lines of one session and date -> a structured note (keep=False if nothing informative)."""
    buckets: dict[str, list[Item]] = {"facts": [], "decisions": [], "open_items": [], "reflections": []}
    seen: set[str] = set()
    for number in lines:
        message = log[number - 1]
        kept: dict[str, list[str]] = {}
        for sentence in sentences(message_text(message)):
            key = sentence.lower()
            if key in seen or not informative(sentence, message.get("role", "")):
                continue
            seen.add(key)
            kept.setdefault(classify(sentence), []).append(sentence)
        # One line per message and section: the provenance link is paid for once per turn.
        for section, texts in kept.items():
            buckets[section].append(Item(text=" ".join(texts), who=str(message.get("name") or ""),
                                         lines=[number]))
    items = [i for group in buckets.values() for i in group]
    if not items:
        return StructuredNote(keep=False)
    terms = salient_terms([i.text for i in items], hint)
    name = ", ".join(terms) if terms else items[0].text[:60]
    main = (buckets["facts"] or items)[:3]
    description = "; ".join(_short(i.text) for i in main)
    return StructuredNote(name=name, description=description[:300], **buckets)


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split()).rstrip(".。")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
