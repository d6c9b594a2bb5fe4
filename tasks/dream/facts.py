"""The fact model (pure): what is worth remembering, and what a fact line is about.

`is_memory` keeps what capture keeps (every statement that says something), leaving out chatter,
scaffolding, code, configuration and link-only lines. `subject_of` names the node a fact goes
to: a person and a facet of their life, a group, a procedure, or the sentence's own subject in
its words. The attribute cues below only choose a person's facet (which node); whether a new
statement replaces an old one is decided by `change.relation` from the sentences' structure,
never by these cues. Offline and deterministic; they err towards "a new fact" (never towards
replacing one): a wrong memory is worse than a duplicate line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memflow.tasks.capture import informative
from memflow.tasks.dream.change import demonstrative_led, pronoun_led, relation, strip_label, strip_marker, subject, subject_phrase
from memflow.tasks.ground.tokenize import STOPWORDS, tokenize

_HAN = "\u3400-\u4dbf\u4e00-\u9fff"

# -- what is not memory ------------------------------------------------------------------------
_SMALL_TALK = re.compile(
    r"^(hi|hello|hey|hello again|good (morning|afternoon|evening|night)|morning|thanks?|thank you"
    r"( so much| very much)?|thx|ok(ay)?|sure|great|cool|nice|perfect|awesome|bye|goodbye|see you"
    r"( later)?|yes|no|yep|nope|yeah|got it|that worked|it worked|sounds good|you'?re welcome|"
    r"no problem|how can i help( you)?( today)?|how are you( doing)?|i'?m (fine|good)|noted|"
    r"glad (i could|to) help|happy to help|any time|anytime|my pleasure|will do|done|understood|"
    r"好的?|谢谢(你|您)?|你好|您好|嗯+|哦+|再见|收到|没问题|早上?好|晚安|好的谢谢|对|是的|行|记住了|明白)$",
    re.IGNORECASE)
_PLEASANTRY = re.compile(
    r"^(let me know if|feel free to|hope (this|that) helps|glad (i could|to)|happy to help|"
    r"is there anything else|anything else|great question|you'?re welcome|no worries|"
    r"有什么(其他|别的)|还有什么)", re.IGNORECASE)
# an acknowledgement opening a sentence: chatter unless what follows it says something
# ("Sure thing!" is chatter; "Sure Bob - the dogs are in the park!" is not)
_ACK_LEAD = re.compile(r"^(?:(?:noted|got it|understood|updated|sure|okay|ok|will do|done)\b[:,!. ]|"
                       r"(?:好的|记住了|收到|明白)[:,：，!！ ])\s*", re.IGNORECASE)
_MARKER = re.compile(r"^[\(\[<].{0,40}[\)\]>]\.?$|^(\.{3}|…|-{3,}|={3,}|\*{3,})$")
_HEADER_CELL = re.compile(r"^[A-Za-z_][\w .-]{0,30}$")


def _chatter(sentence: str) -> bool:
    bare = re.sub(r"[\s.!?,。！？，~…:：;；]+$", "", sentence.strip()).strip()
    lead = _ACK_LEAD.match(bare)
    if lead:  # "Sure thing", "Done deal": nothing after it says two things
        rest = bare[lead.end():]
        return _chatter(rest) or len([w for w in re.findall(rf"[A-Za-z0-9_]+|[{_HAN}]", rest)
                                      if w.lower() not in STOPWORDS]) < 2
    return not bare or bool(_SMALL_TALK.match(bare) or _PLEASANTRY.match(bare) or _MARKER.match(bare))


_LINK_RE = re.compile(r"\[\[[^\]]*\]\]|\[[^\]]*\]\([^)]*\)|https?://\S+")
_CONFIG_RE = re.compile(r"^[\"']?[\w.-]+[\"']?\s*(?::|=|:=)\s*\S.*$")
_CODE_CHARS = set("{}[]()<>;=$`|\\")


def is_scaffolding(text: str) -> bool:
    """Code, configuration and link lines are not facts: a `key: value` / `KEY=value` line, a
    line dense in code punctuation, or one that is nothing but links once they are taken out."""
    bare = strip_marker(text.strip())
    if _CONFIG_RE.match(bare):  # `port: 5432`, `DATABASE_URL=...`, not `Note: my dentist is Dr Li`
        key, value = re.split(r":=|=|:", bare, maxsplit=1)
        key = key.strip().strip("\"'")
        if re.search(r"[_.-]", key) or key.isupper() or (key.islower() and len(value.split()) <= 3):
            return True
    if len(bare) >= 12 and sum(c in _CODE_CHARS for c in bare) / len(bare) > 0.08:
        return True
    rest = _LINK_RE.sub(" ", bare)
    return rest != bare and len([w for w in re.findall(r"[A-Za-z]{2,}|[\u4e00-\u9fff]", rest)
                                 if w.lower() not in STOPWORDS]) < 2


def is_memory(text: str) -> bool:
    """False for what is not worth remembering: greetings, acknowledgements, assistant
    pleasantries, markers such as `(read in part)`, table or CSV header rows, bare fragments,
    code, configuration and link-only lines."""
    if is_scaffolding(text):
        return False
    bare = re.sub(r"[\s.!?,。！？，~…:：;；]+$", "", strip_marker(text.strip())).strip()
    if all(_chatter(s) for s in re.split(r"[.!?,;。！？，；]\s*", bare)):
        return False
    cells = [c.strip() for c in re.split(r"[,;|\t]", bare) if c.strip()]
    if len(cells) >= 3 and all(_HEADER_CELL.match(c) and len(c.split()) <= 3 for c in cells) \
            and not re.search(r"\b(is|are|was|were|has|have|will|use|uses)\b", bare):
        return False  # `name, age, city` or `| id | owner | status |`: a header, not a fact
    # what capture keeps (every statement that says something, however short), and more than a
    # one-word answer, which means nothing without its question ("Porto.")
    han = len(re.findall(f"[{_HAN}]", bare))
    return informative(bare, "user") and (han >= 2 or len(re.findall(r"[A-Za-z0-9_./-]+", bare)) >= 2)


# -- values --------------------------------------------------------------------------------------
_EN_NUMBERS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_ZH_NUMBER_RE = re.compile(r"[零一二两三四五六七八九十百]+")


def _zh_number(text: str) -> int:
    if "百" in text:
        head, _, rest = text.partition("百")
        return _ZH_DIGITS.get(head, 1) * 100 + (_zh_number(rest) if rest else 0)
    if "十" in text:
        head, _, rest = text.partition("十")
        return (_ZH_DIGITS.get(head, 1) if head else 1) * 10 + (_ZH_DIGITS.get(rest, 0) if rest else 0)
    return _ZH_DIGITS.get(text, 0) if len(text) == 1 else int("".join(str(_ZH_DIGITS[c]) for c in text))


def numbers(text: str) -> list[str]:
    """Numbers in a text, normalised: `4`, `four`, `四` all give "4"; times keep their form."""
    found = re.findall(r"\d+(?:[.:]\d+)?", text)
    found += [str(_EN_NUMBERS[w]) for w in re.findall(r"[a-z]+", text.lower()) if w in _EN_NUMBERS]
    found += [str(_zh_number(m)) for m in _ZH_NUMBER_RE.findall(text)]
    return found


def terms(text: str) -> set[str]:
    """Content terms (stemmed, stopwords out, numbers in every spelling folded to digits)."""
    return {t for t in tokenize(text) if not t.isdigit() and t not in _EN_NUMBERS} | set(numbers(text))


def similarity(a: str, b: str) -> float:
    ta, tb = terms(a), terms(b)
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


# -- attributes ----------------------------------------------------------------------------------
# attribute -> cue pattern (English and Chinese). The first that matches a fact names it.
# Each pattern matches a sentence that *states* the attribute's value ("I live in ...", "my
# manager is ..."), not one that merely mentions the topic ("my home country", "I lost my job"):
# a fact is replaced only by another statement of the same attribute.
_NUM = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|a)"
_ZH_NUM = r"[\d零一二两三四五六七八九十]+"
_DAYS = r"(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekdays|weekends)"
_ATTRIBUTES: list[tuple[str, re.Pattern]] = [(name, re.compile(pattern, re.IGNORECASE)) for name, pattern in [
    ("pet-age", r"\b(cat|dog|kitten|puppy|pet|parrot|rabbit)\b.{0,40}\b" + _NUM + r" (years?|months?) old\b|"
                r"(猫|狗|宠物).{0,12}" + _ZH_NUM + r"(岁|个月)"),
    ("team-size", r"\bteam\b.{0,40}\b" + _NUM + r"\s+(engineers|people|members|developers|devs|persons)\b|"
                  r"团队.{0,12}" + _ZH_NUM + r"\s*(个)?(人|名工程师|工程师)"),
    ("manager", r"\b(my|our)( new| current)? (manager|boss|team lead|line manager) (is|was|will be)\b|"
                r"\bi (now )?report to\b|(经理|领导|上司|老板)(是|叫|换成)"),
    ("home", r"\b(i|we) (now )?(live|am living|'m living|are living|'re living) (in|at|near)\b|"
             r"\b(i|we)('ve| have)? (just |recently |finally )?(moved|relocated) (to|back to|into)\b|"
             r"\b(i|we)('ve| have)? (just |recently |finally )?(moved|relocated) from [^.,;]{1,40} to\b|"
             r"\bmy (home|flat|apartment|house) is (in|at|near)\b|\b(i'm|i am|we're|we are) based in\b|"
             r"住在|搬到|搬去|家在"),
    ("employer", r"\b(i|we) (now )?(work|am working|'m working) (at|for)\b|\bi (just )?joined \w+ as\b|"
                 r"\bmy (employer|company) is\b|在.{1,12}(工作|上班)"),
    ("drink", r"\b(i|we) (always |usually |now |still |only )?(drink|have|start (my|the) day with)\b.{0,30}"
              r"\b(coffee|tea|espresso|latte|cappuccino|matcha|water|juice)\b|"
              r"\bswitched\b.{0,40}\b(coffee|tea|espresso|latte|cappuccino|matcha)\b|喝.{0,6}(咖啡|茶|水)"),
    ("diet", r"\b(i'm|i am|i've gone|i have gone|we're|we are) (now )?(a )?(vegetarian|vegan|pescatarian)\b|"
             r"吃素|素食者"),
    ("database", r"\b(use|uses|using|moved|migrated|switched|runs on|run on)\b[^.]{0,60}\b(postgres(ql)?|"
                 r"mysql|sqlite|mongodb|mariadb|clickhouse|dynamodb|cassandra|cockroachdb)\b"),
    ("commute", r"\b(i|we) (commute|bike|cycle|drive|take the (train|bus)|walk)\b.{0,30}\b(to )?(work|office)\b|"
                r"通勤"),
    ("schedule", r"\b(on|every|most) " + _DAYS + r"\b|\bevery (day|morning|evening|night|week|monday|tuesday|"
                 r"wednesday|thursday|friday|saturday|sunday)\b|\beach (morning|day|week)\b|"
                 r"每(天|周|星期|个?月)|(周|星期)[一二三四五六日天末]"),
]]
# What a schedule is of: the activity, so the gym time and the standup time are two attributes.
_ACTIVITY_RE = re.compile(
    r"\b(gym|standup|stand-up|deploy\w*|release\w*|meeting|lesson\w*|class\w*|training|run|runs|"
    r"running|swim\w*|yoga|backup\w*|review\w*|dentist|piano|football|soccer|tennis|lunch|dinner|"
    r"breakfast|walk\w*|cycl\w*|ride|rides)\b|健身|站会|部署|发布|会议|课|训练|跑步|游泳|瑜伽|备份|骑",
    re.IGNORECASE)
_PET_RE = re.compile(r"\b(cat|dog|kitten|puppy|pet|parrot|rabbit)\b|猫|狗|宠物", re.IGNORECASE)
_PET_KIND = {"kitten": "cat", "puppy": "dog", "猫": "cat", "狗": "dog", "宠物": "pet"}
_ACTIVITY_KIND = {"健身": "gym", "站会": "standup", "stand-up": "standup", "部署": "deploy",
                  "发布": "release", "会议": "meeting", "课": "lesson", "训练": "training",
                  "跑步": "run", "running": "run", "runs": "run", "游泳": "swim", "瑜伽": "yoga",
                  "备份": "backup", "骑": "cycl", "ride": "cycl", "rides": "cycl"}


def attributes_of(text: str) -> set[str]:
    """Every attribute a fact states (`home`, `team-size`, `pet-age:cat`, `schedule:gym`...);
    empty when the wording shows none (such a fact is never replaced, only added beside others).
    "Our team has 6 engineers and we deploy on Tuesdays" states two."""
    found = set()
    for name, pattern in _ATTRIBUTES:
        if not pattern.search(text):
            continue
        if name == "pet-age":
            kind = _PET_RE.search(text).group(0).lower()
            found.add(f"pet-age:{_PET_KIND.get(kind, kind)}")
        elif name == "schedule":
            for activity in _ACTIVITY_RE.finditer(text):  # a time is of an activity, or of nothing
                word = activity.group(0).lower()
                stem = _ACTIVITY_KIND.get(word, (tokenize(word) or [word])[0])
                found.add(f"schedule:{_ACTIVITY_KIND.get(stem, stem.rstrip('s'))}")
        else:
            found.add(name)
    return found


def attribute_of(text: str) -> str | None:
    """The first attribute a fact states, in lexicon order (what names its facet)."""
    found = attributes_of(text)
    order = [name for name, _ in _ATTRIBUTES]
    return min(found, key=lambda a: (order.index(a.split(":")[0]), a)) if found else None


# -- subjects ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Subject:
    key: str      # stable identity, e.g. "person:jonas:home", "team:payments", "procedure:rollback"
    name: str     # what a node about it is called: "Jonas – home and family"
    bucket: str   # personal | procedure | wiki


_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine|myself)\b|我", re.IGNORECASE)
_FACETS = [  # attribute prefix -> facet of a person
    (("home", "pet-age", "commute"), "home and family"),
    (("employer", "manager"), "work"),
    (("drink", "diet"), "food and drink"),
    (("schedule",), "schedule"),
]
_FAMILY_RE = re.compile(r"\b(wife|husband|partner|daughter|son|kids?|children|sister|brother|mother|"
                        r"father|mom|dad|parents?|family|grand\w+)\b|女儿|儿子|妻子|丈夫|家人|父母|妈妈|爸爸|"
                        r"姐姐|妹妹|哥哥|弟弟", re.IGNORECASE)
_WORK_RE = re.compile(r"\b(work|job|office|colleague|manager|boss|team|project|promotion|salary)\b|"
                      r"工作|公司|同事|项目", re.IGNORECASE)
_HEALTH_RE = re.compile(r"\b(gym|run|running|yoga|swim\w*|sleep|doctor|dentist|health|sick|"
                        r"cycl\w+|marathon|exercise|therapy|therapist|mental|workout)\b|健身|跑步|睡|医生|牙医|骑",
                        re.IGNORECASE)
_GROUP_RE = re.compile(r"\b(?:the|our|my) ([A-Za-z][\w-]*(?: [A-Za-z][\w-]*)?) (service|team|cluster|app|"
                       r"database|project|server|pipeline|repo|repository|api|job|queue|dashboard|channel)\b",
                       re.IGNORECASE)
_GROUP_ZH_RE = re.compile(f"([{_HAN}A-Za-z]{{1,6}})(服务|团队|集群|项目|数据库|系统)")
_PROCEDURE_START = re.compile(
    r"^(to \w+|run|restart|use|call|open|install|deploy|check|set|add|remove|watch|announce|"
    r"first|then|always|never|make sure|do not|don't|stop|start|reboot|roll back|rollback|"
    r"运行|执行|先|重启|检查|安装)\b", re.IGNORECASE)
_IDENTIFIER_RE = re.compile(r"(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:sh|py|js|ts|yaml|yml|json|sql|toml)\b|"
                            r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")
_PROPER_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?)\b")
_NOT_NAMES = frozenset("""The This That These Those Our We They It Its There Here When What Where
Which While After Before Also Next Then And But Or Monday Tuesday Wednesday Thursday Friday Saturday
Sunday January February March April May June July August September October November December
Correction Update Note Today Tomorrow Yesterday""".split())


def _named(word: str) -> bool:
    """Can `word` (capitalised) name what a statement is about? Not a function word or a day
    or month name, nor its plural ("on Tuesdays and Thursdays" names a time, not a thing)."""
    return word not in _NOT_NAMES and not (word.endswith("s") and word[:-1] in _NOT_NAMES)


def slug(text: str) -> str:
    return re.sub(rf"[^a-z0-9{_HAN}]+", "-", text.lower()).strip("-")


def facet_of(text: str, attribute: str | None) -> str:
    if attribute:
        for prefixes, facet in _FACETS:
            if attribute.split(":")[0] in prefixes:
                return facet
    for pattern, facet in ((_FAMILY_RE, "home and family"), (_WORK_RE, "work"),
                           (_HEALTH_RE, "health and sport")):
        if pattern.search(text):
            return facet
    return "life"


_CODE_SPAN_RE = re.compile(r"`[^`\n]+`")


def is_procedure(text: str, who: str = "", group: bool = False) -> bool:
    """A how-to: a line naming a tool (a script, file, command in backticks, CONSTANT) said by
    no one in particular, or steps (a line opening on an instruction) that name a tool or that
    no named speaker says about themselves. A named speaker's "never give up!" or "check out
    my painting" is what that person said (their node), not a procedure."""
    tool = bool(_IDENTIFIER_RE.search(text) or _CODE_SPAN_RE.search(text))
    mine = bool(_FIRST_PERSON.search(text))
    if tool and not group and not mine:
        return True
    if not _PROCEDURE_START.match(text.strip()):
        return False
    return tool or not (who or mine)


def procedure_subject(text: str) -> str:
    """What a procedure is for: its script or command (`deploy/rollback.sh` -> "deploy rollback"),
    else its first content words."""
    ident = _IDENTIFIER_RE.search(text)
    if ident:
        parts = re.split(r"[/._-]+", ident.group(0).lower())
        words = [p for p in parts if p and p not in {"sh", "py", "js", "ts", "yaml", "yml", "json",
                                                     "sql", "toml", "scripts", "script", "bin", "src"}]
        if words:
            return " ".join(dict.fromkeys(words))
    words = [w for w in re.findall(r"[A-Za-z][\w'’-]*[\w]", text)
             if w.lower().replace("’", "'") not in _STOP_NAMES][:3]
    return " ".join(w.lower() for w in words) or text[:24]


_STOP_NAMES = frozenset("""to run restart use call open install check set add remove watch announce
first then always never make sure do not don't stop start the a an with after before and or of in on
for when if""".split())


UNPLACED = Subject("", "", "")  # `subject_of(..., placed_only=True)`: a statement with nothing to be about


def subject_of(text: str, who: str = "", antecedent: Subject | None = None, placed_only: bool = False) -> Subject:
    """The subject of one fact line (`who` is the speaker the note names, if any), named in the
    line's own words (never stems; a leading turn or session marker is not a subject, nor a
    short label before a colon: "Change of plan: grukdrux moves to port 56147" is about grukdrux).
    `antecedent`: the subject of the statement a pronoun opening this one points back to; taken
    when the line names nothing itself ("It only happens when ..." was a node `It only happens`).
    `placed_only`: a statement opening on such a pronoun that names nothing and has no
    antecedent is `UNPLACED` (no node can say what it is about), not a node named by its first
    words."""
    text = strip_label(strip_marker(text))
    attribute = attribute_of(text)
    group = _GROUP_RE.search(text)
    if is_procedure(text, who, group is not None):
        about = procedure_subject(text)
        return Subject(f"procedure:{slug(about)}", about[:1].upper() + about[1:], "procedure")
    if group and attribute not in ("home", "employer", "drink", "diet") and not (
            attribute or "").startswith("pet-age"):
        label = f"{group.group(1)} {group.group(2)}".lower()
        if label.split()[0] not in ("same", "new", "other", "whole"):
            return Subject(f"group:{slug(label)}", label[:1].upper() + label[1:], "wiki")
    zh_group = _GROUP_ZH_RE.search(text)
    if zh_group and not _FIRST_PERSON.search(text):
        label = zh_group.group(0)
        return Subject(f"group:{slug(label)}", label, "wiki")
    han = len(re.findall(f"[{_HAN}]", text))
    if _FIRST_PERSON.search(text) or who or han > len(re.findall(r"[A-Za-z]", text)):
        # Chinese often leaves the speaker unsaid: a fact with no other subject is theirs
        person = who or "the user"
        facet = facet_of(text, attribute)
        name = f"{person[:1].upper()}{person[1:]} – {facet}"
        return Subject(f"person:{slug(person)}:{slug(facet)}", name, "personal")
    label = subject_phrase(text)
    if label and _named(label.split()[0]):  # what the sentence is about, in its words
        return Subject(f"topic:{slug(label)}", label[:1].upper() + label[1:], "wiki")
    proper = [m for m in _PROPER_RE.findall(text) if _named(m.split()[0])]
    if proper:
        # keyed as a subject named in the sentence's subject is ("We raised the Redis cache TTL
        # ..." goes to the node of "The Redis cache TTL is ...", not to a second "Redis")
        return Subject(f"topic:{slug(proper[0])}", proper[0], "wiki")
    if group:
        label = f"{group.group(1)} {group.group(2)}".lower()
        return Subject(f"group:{slug(label)}", label[:1].upper() + label[1:], "wiki")
    label = subject_phrase(text)
    if not label and subject(text) in ("we", "us"):
        # "We run it on 6 pods": nothing named but us, the user among us (not a node "We run it")
        facet = facet_of(text, attribute)
        return Subject(f"person:the-user:{slug(facet)}", f"The user – {facet}", "personal")
    if antecedent is not None and (not label or pronoun_led(text, contracted=True) or demonstrative_led(text)):
        return antecedent
    if placed_only and not label and (pronoun_led(text, contracted=True) or demonstrative_led(text)):
        # "It only happens when ...", "That is 40 euros" with nothing before it to point to: a
        # node named by its first words gathered unrelated statements, and in one node two such
        # statements about two things would read as one value replacing another
        return UNPLACED
    label = label or " ".join(text.split()[:3])
    return Subject(f"topic:{slug(label)}", label[:1].upper() + label[1:], "wiki")


def same_fact(new: str, old: str) -> str | None:
    """How a new fact relates to an older one about the same subject (`change.relation`):
    "same" (the same statement again), "replaces" (the new statement shows that the value
    changed: one slot of the same frame holds a new value of the same kind, or it names the old
    value), or None (another fact, kept beside the old one)."""
    return relation(new, old)
