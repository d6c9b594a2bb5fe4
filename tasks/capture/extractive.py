"""The offline writer (pure): session-log lines -> StructuredNote without a model.

Keeps every statement verbatim, short ones included ("Call me Jo."); only greetings,
acknowledgements, bare exclamations and scaffolding ("Here is the code:") are dropped.
Who said it decides where a sentence goes: the user's statements are sorted into facts,
decisions, open items and reflections by cue words, the user's questions and requests are kept
as such (`questions`), and whatever the assistant or another speaker said goes to `others` under
their name, never among the user's facts. The note is titled from the salient terms of the
user's own words and described by its main facts. Each item cites the one log line its sentences
came from.
"""

from __future__ import annotations

import re
from collections import Counter

from memflow.schemas.capture import Item, StructuredNote
from memflow.tasks.capture.sessionlog import message_text
from memflow.tasks.ground.tokenize import INDEFINITE_PRONOUNS, STOPWORDS

_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_SMALL_TALK = re.compile(
    r"^(hi|hello|hey|hello again|good (morning|afternoon|evening|night)|morning|thanks?|thank you"
    r"( so much| very much)?|thx|ok(ay)?|sure|great|cool|nice|perfect|awesome|bye|goodbye|see you"
    r"( later)?|yes|no|yep|nope|yeah|got it|that worked|it worked|sounds good|you'?re welcome|"
    r"no problem|how can i help( you)?( today)?|how are you( doing)?( today)?|i'?m (fine|good)|"
    r"how have you been( lately)?|how('?s| is) (it going|everything|life)|what'?s up|"
    r"(it'?s )?(good|great|nice) to (see|hear from|meet) you|long time no see|noted|understood|will do|done|"
    r"glad (i could|to) help|happy to help|any ?time|my pleasure|"
    r"好的?|(非常)?(谢谢|感谢)(你|您)?|你好|您好|嗯+|哦+|再见|收到|没问题|早上?好|晚安|好的谢谢|对|是的|行|记住了|明白)$")
# what a reply opens on when it only acknowledges ("Noted: ...", "Sure, ...")
_ACK_START = re.compile(r"^(noted|got it|understood|updated|sure|okay|ok|will do|done|"
                        r"好的|记住了|收到|明白)\b[:,：，!！ ]", re.IGNORECASE)
# a courtesy that opens a sentence and offers nothing ("Let me know if ...", "Hope this helps")
_COURTESY = re.compile(r"^(let me know if|feel free to|hope (this|that) helps|glad (i could|to)|happy to help|"
                       r"is there anything else|anything else|great question|you'?re welcome|no worries|"
                       r"有什么(其他|别的)|还有什么)", re.IGNORECASE)
_REFLECTION = re.compile(r"\b(next time|should have|we forgot|i forgot|lesson|in the future|"
                         r"avoid .* again)\b|下次|以后要|教训|忘了", re.IGNORECASE)
_DECISION = re.compile(r"\b(we decided|decided to|we will|we'll|let's|agreed|going to)\b|决定|我们会|打算",
                       re.IGNORECASE)
_OPEN = re.compile(r"\b(todo|to do|need to|needs|must|should|pending|follow up)\b|需要|待办|还没",
                   re.IGNORECASE)
_REQUEST = re.compile(r"^(please|pls|can you|could you|would you|will you|help me|remind me|tell me|"
                      r"show me|let me know|give me|i need you to|i want you to|i'?d like you to)\b|"
                      r"^(请|帮我|麻烦|能不能|可以帮|提醒我|告诉我)", re.IGNORECASE)
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]+|[\u3400-\u4dbf\u4e00-\u9fff]+")


def sentences(text: str) -> list[str]:
    """Sentences, split after . ! ? followed by a space, after 。！？ and at line breaks (so
    `deploy/rollback.sh` stays whole)."""
    return [s.strip() for s in _SENTENCE_END_RE.split(text) if s and s.strip()]


_EMOTIVE = frozenset("""wow oh ah haha lol yeah yay hey hi hello thanks thank awesome amazing great
cool nice fantastic wonderful lovely love glad happy sure totally really so much very good glad
sounds super incredible beautiful proud congrats congratulations omg aww sweet exciting excited
inspiring true agree absolutely definitely ok okay yes yep yeah right indeed exactly""".split())
# Han interjections and particles: a sentence of nothing else is an exclamation ("哈哈哈！")
_HAN_CHATTER = frozenset("哈啊呀哇哦嗯呢吧嘛啦唉噢耶嘿喔哎诶")
# leave-taking routines (a closed class) and the time or occasion they name ("See you next
# week!", "下个版本见"): said to part, nothing more; a first person, a digit or a name after the
# routine makes it a plan ("See you at 9 at Ana's"), and so does anything longer
_LEAVE_RE = re.compile(r"^(?:see you|talk soon|catch you)(?P<en>(?: [a-z]+){0,3})$|^(?P<zh>[^我咱你您他她它们0-9]{0,6})见$",
                       re.IGNORECASE)
# a Han part as short as one word ("完美", "太好了"): beside chatter it is chatter, as an
# English one-word part is ("Splendid, thanks!"); alone, or beside other words, it is kept
_HAN_WORD_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{1,3}")
# A name said to the listener ("Wow, fantastic, Caroline!", "Jo, thanks"): not about anyone.
_VOCATIVE_RE = re.compile(r"[,，]\s*[A-Z][a-z]+(?: [A-Z][a-z]+)?(?=[\s!.?~…]*$)|^[A-Z][a-z]+(?=\s*[,，])")
_CONTRACTION_RE = re.compile(r"['’][A-Za-z]+")  # I'm, you're, we'll: the tail is no word


def _content_words(sentence: str) -> list[str]:
    bare = _CONTRACTION_RE.sub("", _VOCATIVE_RE.sub("", sentence.strip()))
    return [w for w in re.findall(r"[A-Za-z0-9_]+", bare)
            if w.lower() not in STOPWORDS and w.lower() not in _EMOTIVE]


def _says_something(sentence: str) -> bool:
    """A content word (not a stopword, not an interjection, not a name the speaker addresses),
    a number, or Han text that is more than interjections."""
    han = _HAN_RE.findall(sentence)
    return bool(_content_words(sentence)) or any(c.isdigit() for c in sentence) or \
        any(c not in _HAN_CHATTER for c in han)


def small_talk(sentence: str, role: str) -> bool:
    """A greeting, thanks or acknowledgement that carries nothing. (In a turn that says
    something, every other sentence is kept: exclamations and asides are context of it.)"""
    opening = _ACK_START.match(sentence.strip())
    if opening:
        # an assistant's acknowledgement is chatter; anyone's is when nothing after it says
        # two things ("Sure thing!", "Done deal"; not "Sure, the dogs are in the park")
        rest = sentence.strip()[opening.end():]
        if role == "assistant" or small_talk(rest, role) or len(_content_words(rest)) + len(
                [c for c in _HAN_RE.findall(rest) if c not in _HAN_CHATTER]) < 2:
            return True
    if _COURTESY.match(sentence.strip()):
        return True
    # chatter part by part: "Good morning, Melanie!", "Hey Mel, how are you?"
    # (a name is chatter only beside chatter: "Thanks, Caroline!", not "Berlin, Lisbon, Porto.")
    kinds = [_chatter(part) for part in re.split(r"[,，]\s*", sentence.strip())]
    return all(kinds) and any(kind is True for kind in kinds)


def _chatter(part: str) -> bool | str:
    bare = re.sub(r"[\s.!?,。！？，~…:：;；]+$", "", part.strip()).strip()
    bare = re.sub(r"(\s+[A-Z][a-z]+)+$", "", bare) if " " in bare else bare  # "Hey Mel" -> "Hey"
    bare = re.sub(r"[.!?。！？]", "", bare).lower() if len(bare) < 40 else bare.lower()
    # a greeting or thanks, a leave-taking, or nothing but emotive or function words ("Me too!",
    # "哈哈！")
    if not bare or _SMALL_TALK.match(bare) or _leave_taking(part) or not _says_something(part):
        return True
    if re.fullmatch(r"[A-Z][a-z]+", part.strip(" .!?~…")) or _han_word(bare):
        return "name"  # the listener's name, or an answer ("Porto.", "完美")
    return False


# what makes a short Han part a statement, not a word said in passing: a personal pronoun, a
# negation or a numeral (closed classes: "我到了", "还没定", "两岁")
_STATES_RE = re.compile(r"[我咱你您他她它不没未别无零一二两三四五六七八九十百千万]")


def _han_word(bare: str) -> bool:
    """A Han part of one word (`_HAN_WORD_RE`, modal particles after it aside: "太好了")."""
    word = bare.rstrip("了" + "".join(_HAN_CHATTER))
    return bool(_HAN_WORD_RE.fullmatch(word)) and not _STATES_RE.search(word)


def _leave_taking(part: str) -> bool:
    """A leave-taking routine with at most a short time or occasion after it ("See you next
    week", "明天见"), no emoji or punctuation counted."""
    bare = re.sub(r"[\W_]+$", "", re.sub(r"^[\W_]+", "", part.strip())).strip()
    return bool(_LEAVE_RE.match(bare))


def scaffolding(sentence: str) -> bool:
    """A lead-in that only announces what follows ("Here is the code:", "Step 2:")."""
    return sentence.rstrip().endswith((":", "：")) and len(_content_words(sentence)) <= 2 \
        and not _HAN_RE.search(sentence)


def informative(sentence: str, role: str) -> bool:
    """Worth keeping: every statement, question or request that says something, however short
    ("Call me Jo.", "My partner is Ana."); only chatter (greetings, thanks, acknowledgements,
    bare exclamations) and scaffolding are left out."""
    return not small_talk(sentence, role) and not scaffolding(sentence)


def is_question(sentence: str) -> bool:
    """A question or a request to the other side: kept as asked, never as a fact."""
    text = sentence.strip()
    return text.endswith(("?", "？")) or bool(_REQUEST.match(text))


def classify(sentence: str) -> str:
    """Section of one of the user's sentences."""
    if is_question(sentence):
        return "questions"
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
        for position, word in enumerate(_WORD_RE.findall(_CODE_MARKER_RE.sub(" ", text))):
            key = word.lower()
            if key in STOPWORDS or key in _FILLERS or key in INDEFINITE_PRONOUNS or _HAN_RE.match(word) or (
                    len(word) < 4 and not word.isupper()):
                continue
            named = any(c.isupper() for c in word[1:]) or (word[0].isupper() and position > 0)
            counts[key] += 1.0 + (1.5 if named else 0.0) + (2.0 if key in hint_words else 0.0)
            shown.setdefault(key, word)
    # Ties go to the term said first: a note's subject tends to come up early.
    first = {key: position for position, key in enumerate(shown)}
    return [shown[k] for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], first[kv[0]]))[:n]]


def title_of(texts: list[str], hint: str = "") -> str:
    """A note's title: a short phrase of its main statement (the clause sharing most words with
    the rest of the note), cut to `TITLE_WORDS` words (Chinese:
    `TITLE_HAN` characters), not a list of rare words."""
    texts = [t for t in (_CODE_MARKER_RE.sub("", t).strip() for t in texts) if t]
    if not texts:
        return "note"
    clauses = [c.strip() for t in texts for c in _CLAUSE_END_RE.split(t) if c and c.strip()] or texts
    words = [{w.lower() for w in _WORD_RE.findall(c) if w.lower() not in STOPWORDS} for c in clauses]
    said = Counter(w for ws in words for w in ws) + Counter(w.lower() for w in _WORD_RE.findall(hint))
    # the clause sharing most words with the rest of the note (what the note keeps coming back
    # to); on a tie the first. "Back on Fiontour today" names the subject once; the clause that
    # names it with what else the note is about says more.
    main = max(range(len(clauses)), key=lambda n: (bool(words[n]), sum(said[w] > 1 for w in words[n]), -n))
    clause = clauses[main]
    if len(_HAN_RE.findall(clause)) > len(clause) / 2:
        return clause[:TITLE_HAN]
    words = clause.split()[:TITLE_WORDS]
    while len(words) > 2 and words[-1].lower().strip(".,;:!?") in STOPWORDS:
        words.pop()  # a phrase ends on a word that says something, not "in" or "the"
    phrase = " ".join(words).rstrip(".,;:!?")
    return phrase[:1].upper() + phrase[1:]


TITLE_WORDS = 8
TITLE_HAN = 14
_CLAUSE_END_RE = re.compile(r"(?<=\S)[.!?;:,](?:\s|$)|[。！？；：，]|\s[-–—]\s")


_FILLERS = frozenset("also next then still just really correction actually please here there "
                     "today tomorrow yesterday always never every would could".split())


OWN = ("facts", "decisions", "open_items", "reflections")  # the user's own statements


def speaker_of(message: dict) -> str:
    """The name an item carries: the log's name, else "" for the user and the role for anyone
    else ("Assistant", "Tool")."""
    name = " ".join(str(message.get("name") or "").split())
    if name:
        return name
    role = str(message.get("role") or "")
    return "" if role == "user" else role[:1].upper() + role[1:]


def _code_marker(fence: list[str]) -> str:
    return f"[code{': ' + fence[0] if fence[0] else ''}, {len(fence) - 1} lines]"


# the marker `without_code` leaves for a code block: words of the capture's, not the speaker's
_CODE_MARKER_RE = re.compile(r"\s*\[code(?:: [^\]\n]*)?, \d+ lines\]")


def without_code(said: list[str]) -> list[str]:
    """The sentences of a message with each fenced code block replaced by one marker
    (`[code: python, 12 lines]`): pasted code stays verbatim in the session log (and its
    transcript in search), while the note's line keeps the message's prose readable and its
    statements apart from the code."""
    out: list[str] = []
    block: list[str] | None = None
    for sentence in said:
        if sentence.startswith("```"):
            if block is None:
                block = [sentence[3:].strip()]
                continue
            out.append(_code_marker(block))
            block = None
            continue
        if block is not None:
            block.append(sentence)
        else:
            out.append(sentence)
    if block is not None:  # an unclosed fence: the rest of the message is code
        out.append(_code_marker(block))
    return out


def write_extractive(log: list[dict], lines: list[int], hint: str = "") -> StructuredNote:
    """Log lines of one session and date -> a structured note (keep=False if nothing informative)."""
    buckets: dict[str, list[Item]] = {key: [] for key in (*OWN, "questions", "others")}
    seen: set[str] = set()
    for number in lines:
        message = log[number - 1]
        role = message.get("role", "")
        kept: dict[str, list[str]] = {}
        said = sentences(message_text(message))
        if not any(informative(s, role) for s in said):
            continue
        for sentence in without_code(said):
            key = sentence.lower()
            if key in seen or not informative(sentence, role):
                continue
            seen.add(key)
            kept.setdefault(classify(sentence) if role == "user" else "others", []).append(sentence)
        # One line per message and section: the provenance link is paid for once per turn.
        for section, texts in kept.items():
            buckets[section].append(Item(text=" ".join(texts), who=speaker_of(message), lines=[number]))
    items = [i for group in buckets.values() for i in group]
    if not items:
        return StructuredNote(keep=False)
    # The title names what the user talked about, not what the other side brought up.
    own = [i for key in (*OWN, "questions") for i in buckets[key]] or items
    name = title_of([i.text for i in sorted(own, key=lambda i: i.lines[:1])], hint)  # in the order said
    main = (buckets["facts"] or own)[:3]
    description = "; ".join(_short(_CODE_MARKER_RE.sub("", i.text)) for i in main)
    return StructuredNote(name=name, description=description[:300], **buckets)


def separate_speakers(note: StructuredNote, log: list[dict]) -> StructuredNote:
    """A writer's note with every item of the user's sections that cites only other speakers'
    lines moved to `others` under their name (a model may misfile one; the user's facts hold
    the user's words only)."""
    moved: list[Item] = []
    kept: dict[str, list[Item]] = {}
    for key in (*OWN, "questions"):
        kept[key] = []
        for item in getattr(note, key):
            roles = {log[n - 1].get("role") for n in item.lines if 0 < n <= len(log)}
            if roles and "user" not in roles:
                moved.append(item.model_copy(update={"who": item.who or speaker_of(log[item.lines[0] - 1])}))
            else:
                kept[key].append(item)
    if not moved:
        return note
    return note.model_copy(update={**kept, "others": [*note.others, *moved]})


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split()).rstrip(".。")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
