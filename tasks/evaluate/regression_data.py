"""A generated Chinese/English retrieval regression set (pure, seeded).

Planted facts sit among distractor notes that reuse the same topic words and templates with
other people and values; queries are phrased differently from the facts (Chinese written without
spaces), and a few share no content word with their fact at all.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

EN_PEOPLE = ["Lena", "Marco", "Priya", "Tom", "Aiko", "Omar", "Greta", "Luis", "Nadia", "Felix",
             "Sara", "Ivan", "Chloe", "Ravi", "Hugo", "Mei", "Jonas", "Ada", "Noah", "Zoe"]
ZH_PEOPLE = ["小王", "老李", "张伟", "刘洋", "陈静", "杨帆", "赵敏", "黄磊", "周婷", "吴昊",
             "徐丽", "孙强", "马超", "朱琳", "胡军", "郭涛", "林峰", "何雪", "高远", "罗娜"]
EN_ITEMS = [("spare key", "blue drawer"), ("passport", "hallway safe"), ("bike lock", "garage shelf"),
            ("tax papers", "grey folder"), ("camera", "top cupboard"), ("charger", "desk box")]
ZH_ITEMS = [("备用钥匙", "蓝色抽屉"), ("护照", "走廊保险箱"), ("车锁", "车库架子"),
            ("报税材料", "灰色文件夹"), ("相机", "顶层柜子"), ("充电器", "书桌盒子")]
EN_EVENTS = ["dentist appointment", "piano lesson", "team review", "yoga class", "car service"]
ZH_EVENTS = ["牙医预约", "钢琴课", "团队评审", "瑜伽课", "汽车保养"]
DAYS = [("Monday", "周一"), ("Tuesday", "周二"), ("Wednesday", "周三"), ("Thursday", "周四"), ("Friday", "周五")]
EN_DRINKS = ["green tea", "black coffee", "oat latte", "hot chocolate", "mint tea"]
ZH_DRINKS = ["绿茶", "黑咖啡", "燕麦拿铁", "热巧克力", "薄荷茶"]
SYSTEMS = ["billing", "search", "gateway", "ledger", "inventory", "metrics"]
ZH_SYSTEMS = ["计费", "搜索", "网关", "账本", "库存", "监控"]
EN_FILLER = ["The weekly meeting moved to the small room.", "We ordered lunch from the new place.",
             "The printer needed new toner again.", "Rain is expected for most of the week.",
             "The project plan was shared with the team."]
ZH_FILLER = ["每周例会改到小会议室。", "我们从新开的店订了午饭。", "打印机又需要换墨粉了。",
             "这周大部分时间都会下雨。", "项目计划已经发给团队。"]


@dataclass(frozen=True)
class Case:
    lang: str
    fact: str
    query: str
    path: str
    shares_words: bool = True


def _en(kind: int, person: str, rng: random.Random) -> tuple[str, str]:
    if kind == 0:
        item, place = rng.choice(EN_ITEMS)
        return f"{person} keeps the {item} in the {place}.", f"Where does {person} put the {item}?"
    if kind == 1:
        event, (day, _) = rng.choice(EN_EVENTS), rng.choice(DAYS)
        return f"{person} has the {event} every {day} at {rng.randint(7, 19)}:00.", f"When is {person}'s {event}?"
    if kind == 2:
        drink = rng.choice(EN_DRINKS)
        return f"{person} usually drinks {drink} in the morning.", f"What does {person} like to drink at breakfast?"
    system = rng.choice(SYSTEMS)
    return f"The {system} service owned by {person} listens on port {rng.randint(3000, 9999)}.", \
        f"Which port is {person}'s {system} service on?"


def _zh(kind: int, person: str, rng: random.Random) -> tuple[str, str]:
    if kind == 0:
        item, place = rng.choice(ZH_ITEMS)
        return f"{person}把{item}放在{place}里。", f"{person}的{item}放哪了"
    if kind == 1:
        event, (_, day) = rng.choice(ZH_EVENTS), rng.choice(DAYS)
        return f"{person}每个{day}{rng.randint(7, 19)}点有{event}。", f"{person}的{event}是什么时候"
    if kind == 2:
        drink = rng.choice(ZH_DRINKS)
        return f"{person}早上一般喝{drink}。", f"{person}早餐爱喝什么"
    system = rng.choice(ZH_SYSTEMS)
    return f"{person}负责的{system}服务监听{rng.randint(3000, 9999)}端口。", f"{person}的{system}服务用哪个端口"


def generate(seed: int = 7, planted: int = 40, distractors: int = 220) -> tuple[dict[str, str], list[Case]]:
    """(path -> note text, cases). Distractors per language: `distractors`."""
    rng = random.Random(seed)
    notes: dict[str, str] = {}
    cases: list[Case] = []
    for lang, people, make, filler in (("en", EN_PEOPLE, _en, EN_FILLER), ("zh", ZH_PEOPLE, _zh, ZH_FILLER)):
        planted_kinds: dict[str, set[int]] = {}
        for n in range(planted):
            person = people[n % len(people)]
            kind = (n + n // len(people)) % 4  # a person's planted facts are of different kinds
            planted_kinds.setdefault(person, set()).add(kind)
            fact, query = make(kind, person, rng)
            if n % 20 == 19:  # about 5% share no content word with their fact
                query = ("Who handles the thing we talked about?" if lang == "en" else "那件事谁负责")
            path = f"daily/2026-0{1 + n % 9}-{1 + n % 27:02d}/{lang}-fact-{n}.md"
            notes[path] = _note(f"{lang} {n}", [rng.choice(filler), fact, rng.choice(filler)])
            cases.append(Case(lang, fact, query, path, shares_words=n % 20 != 19))
        for n in range(distractors):
            # Same templates and topic words, but never a person's planted kind: a distractor
            # must not be a second answer to a planted question.
            person = rng.choice(people)
            free = [k for k in range(4) if k not in planted_kinds.get(person, set())] or [0]
            lines = [make(rng.choice(free), person, rng)[0] for _ in range(2)] + [rng.choice(filler)]
            notes[f"daily/2026-0{1 + n % 9}-{1 + n % 27:02d}/{lang}-d-{n}.md"] = _note(f"{lang} d{n}", lines)
    return notes, cases


def _note(name: str, lines: list[str]) -> str:
    body = "\n".join(f"- {line}" for line in lines)
    return f"---\nname: {name}\ndescription: notes\n---\n\n# Notes\n\n{body}\n"


def write_notes(root, notes: dict[str, str]) -> None:
    """Write generated notes under a workspace root (tests and the tokenizer benchmark)."""
    from pathlib import Path

    for rel, text in notes.items():
        path = Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
