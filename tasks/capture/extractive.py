"""The offline writer (pure): session-log lines -> StructuredNote without a model.

Keeps every statement verbatim, short ones included ("Call me Jo."); only greetings,
acknowledgements, bare exclamations, evaluations of what came before ("That's amazing!", by
their structure) and scaffolding ("Here is the code:") are dropped.
Who said it decides where a sentence goes: the user's statements are sorted into facts,
decisions, open items and reflections by grammar (the mood and tense their auxiliaries and
modals mark, never cue words: every word list here is a closed class or a conversational
routine), the user's questions and requests are kept
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
from memflow.tasks.ground.tokenize import ALSO_NOT_INTERJECTIONS, INDEFINITE_PRONOUNS, INTERJECTIONS, STOPWORDS

_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# Greetings, thanks, congratulations, leave-takings, acknowledgements and response particles:
# routine formulae of conversation (a closed set of routines, like the interjections), said to
# open, close or answer a turn. No evaluative word is among them: "Great!" or "Awesome!" alone
# is a one-word answer and kept; "That's great!" is an evaluation by its structure (`_evaluation`).
_SMALL_TALK = re.compile(
    r"^(hi|hello|hey|hello again|good (morning|afternoon|evening|night)|morning|thanks?|thank you"
    r"( so much| very much)?|thx|congrats|congratulations|ok(ay)?|(for )?sure|bye|goodbye|see you"
    r"( later)?|yes|no|yep|nope|yeah|got it|you'?re welcome|"
    r"no problem|how can i help( you)?( today)?|how are you( doing)?( today)?|i'?m (fine|good)|"
    r"how have you been( lately)?|how('?s| is) (it going|everything|life)|what'?s up|"
    r"(it'?s )?(good|great|nice) to (see|hear from|meet) you|long time no see|noted|understood|will do|done|"
    r"glad (i could|to) help|happy to help|any ?time|my pleasure|"
    r"好的?|(非常)?(谢谢|感谢)(你|您)?|你好|您好|嗯+|哦+|再见|收到|没问题|早上?好|晚安|好的谢谢|对|是的|行|记住了|明白)$")
# what a reply opens on when it only acknowledges ("Noted: ...", "Sure, ..."): the same routines
_ACK_START = re.compile(r"^(noted|got it|understood|sure|okay|ok|will do|done|"
                        r"好的|记住了|收到|明白)\b[:,：，!！ ]", re.IGNORECASE)
# a courtesy that opens a sentence and offers nothing ("Let me know if ...", "Hope this helps"):
# the service routines that close an answer
_COURTESY = re.compile(r"^(let me know if|feel free to|hope (this|that) helps|glad (i could|to)|happy to help|"
                       r"is there anything else|anything else|great question|you'?re welcome|no worries|"
                       r"有什么(其他|别的)|还有什么)", re.IGNORECASE)
# The user's statements are sorted by grammar, never by cue words: the verb's mood and tense say
# what a sentence is, whatever it is about. Every word below is of a closed class (pronouns,
# auxiliary and modal verbs, negation, aspect markers).
# a reflection: a counterfactual modal perfect, what should or could have been ("We should have
# tested it", "I could've asked"; "本该早点走", "应该早点走的")
_REFLECTION = re.compile(r"\b(should|could|would|ought to)(n['’]t| not)?( \w+ly)? (have|['’]?ve) (?!to\b)\w+|"
                         r"\b(should|could|would)(n['’]t)?['’]ve \w+|"
                         r"本该|本应|本来应该|早该|早应该|应该[^，。！？,!?]{1,16}的(了)?[。！!]?$", re.IGNORECASE)
# a decision: the first person with a future or volitional auxiliary ("We will migrate it",
# "I'll", "we're going to", "let's"; "我们要", "我会", "我打算")
_DECISION = re.compile(r"\b(i|we)( \w+ly| also| then| now| just| still| never)? "
                       r"(will|shall|won['’]t|am( \w+ly)? going to|are( \w+ly)? going to|am gonna|are gonna)\b|"
                       r"\b(i|we)['’](ll|(m|re)( \w+ly| also| still| just)? (going to|gonna))\b|"
                       r"\blet['’]s\b|\blet us\b|(我|我们|咱们)(也|就|还|都|先|再)?(要|会|将|打算|准备)",
                       re.IGNORECASE)
# an open item: a deontic modal or semi-modal, what must or should still be done ("The invoice
# must be signed", "we need to call them", "I have to renew it"), or what is not done yet
# ("not yet", "还没"); "must have been" infers, it obliges no one
_OPEN = re.compile(r"\b(must|should)(n['’]t)?\b(?!(n['’]t| not)?( \w+ly)? (have|['’]?ve)\b)(?!['’]ve)|"
                   r"\b(ought to|need to|needs to|have to|has to|had better|gotta)\b|"
                   r"\bnot (\w+ )?yet\b|n['’]t (\w+ ){1,3}yet\b|"
                   r"需要|必须|应该|(?<![的])(我|我们|咱们|你|你们|他|她|他们|她们)得(?![到出了])|还没|尚未",
                   re.IGNORECASE)
# a request to the listener: a politeness marker ("please", "请", "麻烦"), a modal with "you"
# ("can you", "could you", "你能"), "I <verb> you to", "let me know", or an imperative by shape:
# a verb (not one in "-s": "Gives me ..."), then "me" or "us", then a function word ("Tell me
# about", "Remind me to", "Show us the"; not "Call me Jo." or "Ana told me"); in Chinese, a
# benefactive coverb with 我 ("帮我查", "给我")
_REQUEST = re.compile(r"^(please|pls|can you|could you|would you|will you|let me know|i(['’]d)? \w+ you to)\b|"
                      r"^(?![a-z]*[^s]s )[a-z]+ (me|us) (to|about|what|how|when|where|why|who|which|if|whether|"
                      r"the|a|an|your|my|our|this|that|these|those|some|all|more|again)\b|"
                      r"^(请|麻烦|能不能|能否|可不可以|(你|您)(能|可以|会))|^(帮|给|替)(我|我们)(?!的)", re.IGNORECASE)
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]+|[\u3400-\u4dbf\u4e00-\u9fff]+")


def sentences(text: str) -> list[str]:
    """Sentences, split after . ! ? followed by a space, after 。！？ and at line breaks (so
    `deploy/rollback.sh` stays whole)."""
    return [s.strip() for s in _SENTENCE_END_RE.split(text) if s and s.strip()]


# Degree adverbs (a closed class: "so", "very", "too", "quite", "rather", "really", "pretty",
# "such", "much"): with the interjections they say how, never what ("Thanks so much!", "Wow, so
# much!"); an adverb in "-ly" is read by its shape where an evaluation is read (`_evaluation`)
_DEGREE = frozenset("so very too quite rather really pretty such much".split())
_NOT_CONTENT = STOPWORDS | INTERJECTIONS | _DEGREE
# An evaluation of what was said before, by its structure (not by its adjective): "this",
# "that", "these", "those" or "it" with a form of "be" or a linking verb (a closed class of
# copulas: "seem", "look", "sound", "feel"), or a linking verb with its subject left out, or a
# degree adverb or "how" alone, then a predicate of one or two lower-case words that names
# nothing (no name, number, participle in "-ed" or function word but a degree adverb): "That's
# amazing!", "It was so cool", "You're so zorbish!", "Sounds zorbish", "How lovely!". It carries
# no fact of its own. With "it" or "you" (or no subject) it takes an exclamation or a degree
# adverb: "It's ready." reports, "You're right." answers.
_COPULA = (r"(?:is|was|are|were|['’]s(?: been)?|['’]re|(?:will|would|must|might|could|can|may) be"
           r"|(?:has|have|had) been|['’]ll be|['’]d be|(?:seem|look|sound|feel)(?:s|ed)?|felt)")
_EVALUATION_RE = re.compile(  # (the predicate in lower case: "That's Ana" names her)
    rf"^(?i:(?P<subject>this|that|these|those|it|you)\s*{_COPULA}"
    rf"|(?P<bare>(?:seem|look|sound|feel)s|so|how|too|very))\s+(?P<predicate>[a-z-]+(?:\s+[a-z-]+)?)$")
# the same in Chinese: a demonstrative or 它 (or none), a degree adverb (a closed class: 太 真 好
# 很 挺 超 非常 特别 ...), one or two characters, modal particles ("这太棒了", "真好！")
_EVALUATION_HAN_RE = re.compile(r"^(?P<subject>这|那|这个|那个|这些|那些|它)?也?"
                                r"(?:真是|真|太|好|很|挺|超|非常|特别|蛮|多么|可|最)"
                                r"(?P<predicate>[^\W\d的了是在有我你您他她它们吗呢吧啊不没一]{1,2})"
                                r"(?P<particles>[了啊呀哦呢啦哈嘛]*)$")


# a pronoun or a deictic adverb of time is no evaluation ("That's mine", "That was yesterday")
_DEICTIC = frozenset("mine today tonight tomorrow yesterday".split())


def _evaluation(part: str, exclaimed: bool) -> bool:
    """An evaluation of what came before (`_EVALUATION_RE`), in a part without its end
    punctuation."""
    match = _EVALUATION_RE.match(part)
    if match:
        words = match.group("predicate").split()
        adjectives = [w for w in words if w.lower() not in _DEGREE]
        if len(adjectives) != 1 or adjectives[0] in STOPWORDS or adjectives[0] in INDEFINITE_PRONOUNS \
                or adjectives[0] in _DEICTIC or adjectives[0].endswith("ed"):
            return False
        demonstrative = (match.group("subject") or "").lower() not in ("", "it", "you")
        return demonstrative or exclaimed or len(words) > 1 or match.group("bare") is not None
    done = _DONE_RE.match(part)
    if done:  # "That worked.", "It helps!": what came before, said to have done its work
        verb = done.group("verb")
        return verb not in STOPWORDS and not verb.endswith("ss") and (
            done.group("subject").lower() != "it" or exclaimed)
    match = _EVALUATION_HAN_RE.match(part)
    return bool(match) and bool(match.group("subject") or exclaimed or match.group("particles"))


# The same of an act: a demonstrative (or "it", exclaimed) and one verb in its past "-ed" or
# present "-s" form, nothing after it ("That worked", "This helps", "It works!"): it reports
# that what came before did its work, no fact of its own; with an object or a complement it
# states something ("That fixed the build", "It worked for Ana") and is kept.
_DONE_RE = re.compile(r"^(?P<subject>(?i:this|that|these|those|it))\s+(?P<verb>[a-z]+(?:ed|s))$")


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
            if w.lower() not in _NOT_CONTENT]


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
    # (a name is chatter only beside chatter: "Thanks, Caroline!", not "Berlin, Lisbon, Porto.";
    # a word in lower case only as the response that opens the turn: "perfect, will do", not
    # the answer after one: "yes, tomorrow")
    exclaimed = sentence.rstrip(" ~…").endswith(("!", "！"))
    kinds = [_chatter(part, exclaimed) for part in re.split(r"[,，]\s*", sentence.strip())]
    kinds = [any(k is True for k in kinds[1:]) if kind == "word" and n == 0
             else kind != "word" and kind for n, kind in enumerate(kinds)]
    return all(kinds) and any(kind is True for kind in kinds)


def _chatter(part: str, exclaimed: bool = False) -> bool | str:
    bare = re.sub(r"[\s.!?,。！？，~…:：;；]+$", "", part.strip()).strip()
    # what follows the interjections that open it ("Wow that's so cool", "Oh cool!")
    said = _INTERJECTIONS_RE.sub("", _VOCATIVE_RE.sub("", bare).strip())
    if _evaluation(said, exclaimed) and not part.rstrip().endswith(("?", "？")):
        return True
    bare = re.sub(r"(\s+[A-Z][a-z]+)+$", "", bare) if " " in bare else bare  # "Hey Mel" -> "Hey"
    bare = re.sub(r"[.!?。！？]", "", bare).lower() if len(bare) < 40 else bare.lower()
    # a greeting or thanks, a leave-taking, or nothing but interjections, degree adverbs or
    # function words ("Me too!", "哈哈！")
    if not bare or _SMALL_TALK.match(bare) or _SMALL_TALK.match(said.lower()) or _leave_taking(part) \
            or not _says_something(part) or (said != bare and re.fullmatch(r"[a-z]+", said) and exclaimed):
        return True  # (the last: one word exclaimed after an interjection, "Oh zorbish!")
    if re.fullmatch(r"[A-Z][a-z]+", part.strip(" .!?~…")) or _han_word(bare):
        return "name"  # the listener's name, or an answer ("Porto.", "完美")
    if exclaimed and re.fullmatch(r"[a-z]+", said):
        return "name"  # one word exclaimed: beside chatter it is chatter ("Yeah, zorbish!", "Oh zorbish!")
    return "word" if re.fullmatch(r"[a-z]+", said) else False


# interjections opening a part, with the space or comma after each ("no" and "well" open a noun
# phrase as often: "No pets!", "Well water")
_OPENING_INTERJECTIONS = "|".join(sorted(INTERJECTIONS - ALSO_NOT_INTERJECTIONS))
_INTERJECTIONS_RE = re.compile(rf"^(?:(?:{_OPENING_INTERJECTIONS})\b[\s,]*)+", re.IGNORECASE)


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
    """Section of one of the user's sentences: by the mood and tense of its first independent
    clause (what it opens with; a clause coordinated after it adds to it: "We have a test
    tomorrow, and I'll raise the limit for it" states the test)."""
    if is_question(sentence):
        return "questions"
    clause = _COORDINATION_RE.split(sentence, maxsplit=1)[0]
    if _REFLECTION.search(clause):
        return "reflections"
    if _DECISION.search(clause):
        return "decisions"
    if _OPEN.search(clause):
        return "open_items"
    return "facts"


# where a second independent clause begins: a semicolon, a dash, or a comma before a coordinating
# conjunction (a closed class), in English and Chinese
_COORDINATION_RE = re.compile(r"[;；]|\s[-–—]\s|,\s*(?:and|but|so|or|yet)\s|，(?:但是|但|而且|所以|不过|可是)",
                              re.IGNORECASE)


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
