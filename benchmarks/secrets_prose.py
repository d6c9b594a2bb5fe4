"""Secrets said in prose: how many generated phrasings of a password, PIN, code or key
`ground.secrets.mask_secrets` masks, and how many ordinary sentences with numbers and names it
masks by mistake (issue 57).

Both sets are generated here from this file's own vocabulary: the words people use for a secret
("the pass", "combo", "unlock digits", "暗号", "登录串", pseudo-words such as "the brakou
sign-in"), the secrets' shapes (a word with digits, words joined by a symbol, leetspeak, random
characters, a PIN in digits or spelled out, a one-time code, a key) and the frames around them
("X is V", "V as the X", "It's V.", "X: V", "用V当X"). None of these secret nouns is in the
masker's own list of secret nouns (`test_secrets_prose` checks it), so what is masked here is
masked by the value's shape and the sentence's structure. The ordinary set holds dates, prices,
versions, room numbers, addresses without phone numbers, product names ("Model 3"), CamelCase
names, file paths, URLs, times and quantities, in the same frames where they fit.

A secret counts as masked when none of its text is left and the words around it are
(a masker that blanks the whole sentence fails); an ordinary sentence counts as falsely masked
when anything in it changed.

    .venv/bin/python benchmarks/secrets_prose.py                  # seed 1, 400 + 400 sentences
    .venv/bin/python benchmarks/secrets_prose.py --seed 5 --n 1000 --show 10
    .venv/bin/python benchmarks/secrets_prose.py --no-nouns       # without the listed-noun rule
    .venv/bin/python benchmarks/secrets_prose.py --messages /work/shared/data/memory-right  # real chats
"""

from __future__ import annotations

import argparse
import json
import random
import string
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

_ONSETS = "b c d f g h j k l m n p r s t v z br dr gr kl pl st tr sk".split()
_VOWELS = "a e i o u ai ou".split()
_HANZI = "安白北晨川东方丰光海禾华佳江金锦兰蓝林柳明南宁平青秋山石松涛天婷文希夏心星雪阳雨玉云泽志竹"

# Ways to say "password", "PIN", "code", "key" that the masker does not list.
EN_SECRET_HEADS = ["pass", "passkey", "login", "sign-in", "secret word", "magic word", "watchword",
                   "countersign", "unlock phrase", "combo", "unlock digits", "keypad digits",
                   "entry digits", "digits", "numbers to get in", "secret", "credentials",
                   "master phrase", "open sesame", "shibboleth", "keyword", "word to get in",
                   "clave", "mot de passe", "handshake word", "sesame", "knock", "unlock sequence",
                   "vault word", "entry sequence", "cipher", "key string", "signing string"]
ZH_SECRET_HEADS = ["暗号", "暗语", "通关暗语", "解锁码", "开门数字", "登录串", "秘钥", "密钥", "钥匙串",
                   "门锁数字", "保险柜组合", "通行字", "登入字串", "开机暗码", "进门的数字", "授权串"]
_DIGIT_WORDS = "zero one two three four five six seven eight nine".split()
_ZH_DIGITS = "零一二三四五六七八九"
_SYMBOLS = "!#$%&*?@^~+="
_LEET = {"a": "@", "o": "0", "e": "3", "i": "1", "s": "$"}


@dataclass
class Case:
    text: str
    secrets: list[str]  # text that must not be left
    keep: list[str] = field(default_factory=list)  # words around it that must be left
    kind: str = ""


def words(rng: random.Random, n: int) -> list[str]:
    found: set[str] = set()
    while len(found) < n:
        found.add("".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 3))))
    return sorted(found)


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _pin(rng: random.Random) -> str:
    return _rand(rng, string.digits, rng.choice([4, 4, 5, 6, 6, 8]))


def secret_value(rng: random.Random, vocab: list[str], zh: bool = False) -> tuple[str, str]:
    """(kind, value as written)."""
    w = lambda: rng.choice(vocab)  # noqa: E731
    kind = rng.choice(["word+digits", "joined", "leet", "random", "pin", "pin", "spelled", "otp", "key"])
    if kind == "word+digits":
        value = rng.choice([str.lower, str.capitalize])(w()) + _rand(rng, string.digits, rng.randint(2, 4))
    elif kind == "joined":
        value = (w().capitalize() + rng.choice(_SYMBOLS + "_-.") + w().capitalize()
                 + rng.choice(["", _rand(rng, string.digits, rng.randint(1, 3))]) + rng.choice(["", "!", "#"]))
        if value.isalpha() or value[-1] in "_-." or not any(c in _SYMBOLS or c.isdigit() for c in value):
            value += str(rng.randint(1, 99))
    elif kind == "leet":
        base = w() + w()
        value = "".join(_LEET.get(c, c) if rng.random() < 0.7 else c for c in base).capitalize()
        value += rng.choice(["", str(rng.randint(1, 99))])
        if value.isalpha():
            value += rng.choice("!#7")
    elif kind == "random":
        value = _rand(rng, string.ascii_letters + string.digits + _SYMBOLS, rng.randint(8, 14))
        value = rng.choice(string.ascii_uppercase) + rng.choice(string.digits) + value + rng.choice(string.ascii_lowercase)
    elif kind == "pin":
        value = _pin(rng)
    elif kind == "spelled":
        digits = _pin(rng)
        if zh:
            value = "".join(_ZH_DIGITS[int(d)] for d in digits)
        else:
            joiner = rng.choice(["-", " ", ", "])
            value = joiner.join(_DIGIT_WORDS[int(d)] for d in digits)
            value = value.capitalize() if rng.random() < 0.2 else value
    elif kind == "otp":
        value = rng.choice([_rand(rng, string.digits, 6), _rand(rng, string.digits, 3) + "-" + _rand(rng, string.digits, 3),
                            _rand(rng, string.ascii_lowercase, 3) + _rand(rng, string.digits, 3) + _rand(rng, string.ascii_uppercase, 2)])
    else:
        body = _rand(rng, string.ascii_letters + string.digits, rng.randint(24, 40))
        value = rng.choice(["", "", "sk-", "key-", "tok_"]) + body
    return kind, value


def _en_head(rng: random.Random, vocab: list[str]) -> str:
    head = rng.choice(EN_SECRET_HEADS)
    return rng.choice([head, head, f"{rng.choice(vocab)} {head}", f"{rng.choice(vocab)}-{head}"])


def secret_case(rng: random.Random, vocab: list[str]) -> Case:
    if rng.random() < 0.3:
        return _zh_secret_case(rng, vocab)
    w = lambda: rng.choice(vocab)  # noqa: E731
    kind, v = secret_value(rng, vocab)
    head = _en_head(rng, vocab)
    owner = rng.choice(["my", "our", "the", "your", f"{w().capitalize()}'s", "his", "her"])
    thing = w()
    after = w()
    tail = rng.choice([".", f" for the {thing}.", f", don't tell {after.capitalize()}.",
                       f" and the {after} is upstairs.", f"; {after} knows it too.", "!", f" - {after} set it."])
    frame = rng.choice([
        f"{owner.capitalize()} {head} is {v}{tail}",
        f"{owner.capitalize()} {head} for the {thing} is {v}{tail}",
        f"{owner.capitalize()} {head} was changed to {v}{tail}",
        f"{owner.capitalize()} {head} is now {v}{tail}",
        f"{owner.capitalize()} {head}'s {v}{tail}",
        f"I set {v} as the {head}{tail}",
        f"Use {v} as {owner} {head}{tail}",
        f"{w().capitalize()} picked {v} as the {head}{tail}",
        f"What's the {head}? It's {v}{tail}",
        f"It's {v}{tail}",
        f"{head.capitalize()}: {v}{tail}",
        f"{head.capitalize()} = {v}{tail}",
        f"The {head} to the {thing}: {v}{tail}",
        f"{v} is {owner} {head}{tail}",
        f"Remember, {owner} {head} will be {v}{tail}",
        f"OK so the {head} is {v}{tail}",
    ])
    keep = [x for x in (thing, after) if x in frame.replace(v, "")]
    return Case(frame, [v], keep, f"en {kind}")


def _zh_secret_case(rng: random.Random, vocab: list[str]) -> Case:
    kind, v = secret_value(rng, vocab, zh=True)
    head = rng.choice(ZH_SECRET_HEADS)
    owner = rng.choice(["我的", "我们的", "", "他家的", "公司", rng.choice(_HANZI) + rng.choice(_HANZI) + "的"])
    place = rng.choice(_HANZI) + rng.choice(_HANZI)
    tail = rng.choice(["。", "，别告诉别人。", f"，{place}也知道。", "！", f"，记在{place}那本子上了。"])
    frame = rng.choice([
        f"{owner}{head}是{v}{tail}", f"{owner}{head}改成了{v}{tail}", f"{owner}{head}：{v}{tail}",
        f"{owner}{head}设为{v}{tail}", f"用{v}当{head}{tail}", f"{place}的{head}就是{v}{tail}",
        f"{head}换成 {v} 了{tail}", f"{owner}{head}是 {v}{tail}",
    ])
    keep = [place] if place in frame else []
    return Case(frame, [v], keep, f"zh {kind}")


def _camel(rng: random.Random, vocab: list[str]) -> str:
    return "".join(rng.choice(vocab).capitalize() for _ in range(rng.randint(2, 3)))


def ordinary_sentence(rng: random.Random, vocab: list[str]) -> tuple[str, str]:
    """(kind, sentence)."""
    w = lambda: rng.choice(vocab)  # noqa: E731
    name = w().capitalize()
    year, month, day = rng.randint(1950, 2035), rng.randint(1, 12), rng.randint(1, 28)
    months = "January February March April May June July August September October November December".split()
    if rng.random() < 0.25:
        return _zh_ordinary(rng, vocab)
    kind = rng.choice(["date", "price", "version", "room", "address", "product", "camel", "path", "url",
                       "time", "quantity", "it's"])
    product = rng.choice([f"Model {rng.randint(2, 9)}", f"{name} {rng.randint(2, 15)}", f"{name} {rng.randint(2, 15)} Pro",
                          f"{name.upper()[:3]}-{rng.randint(100, 9999)}", f"{name} X{rng.randint(2, 99)}",
                          f"{name}{rng.randint(2, 9)}", f"{name.upper()[:2]}{rng.randint(10, 999)}"])
    path = rng.choice([f"/home/{w()}/{w()}/{w()}_{year}.pdf", f"~/{w()}/{_camel(rng, vocab)}.py",
                       f"C:\\Users\\{name}\\{w()}\\{w()}{rng.randint(1, 99)}.docx", f"./{w()}/{w()}-v{rng.randint(1, 9)}.md"])
    url = rng.choice([f"https://{w()}.com/{w()}/{rng.randint(1, 9999)}", f"https://www.{w()}.org/{w()}?id={rng.randint(100, 99999)}",
                      f"http://{w()}.io/{w()}-{w()}#{w()}", f"{w()}.net/{_camel(rng, vocab)}"])
    price = rng.choice([f"${rng.randint(1, 9999)}.{rng.randint(0, 99):02d}", f"€{rng.randint(1, 999)},{rng.randint(0, 999):03d}",
                        f"{rng.randint(2, 900)} dollars", f"£{rng.randint(1, 500)}", f"${rng.randint(1, 90)}k"])
    version = rng.choice([f"{rng.randint(0, 20)}.{rng.randint(0, 40)}.{rng.randint(0, 99)}", f"v{rng.randint(1, 9)}.{rng.randint(0, 9)}",
                          f"{name} {rng.randint(2, 4)}.{rng.randint(0, 13)}", f"version {rng.randint(2, 40)}"])
    room = rng.choice([str(rng.randint(100, 2999)), f"{rng.randint(1, 30)}{rng.choice('ABCD')}", f"{rng.choice('ABC')}{rng.randint(10, 450)}"])
    street = rng.choice([f"{rng.randint(1, 300)} {name} Street", f"{rng.randint(1, 99)}{rng.choice(['', 'B'])} {name} Road",
                         f"Flat {rng.randint(1, 40)}, {rng.randint(1, 200)} {name} Lane", f"{rng.randint(1, 99)} Rue {name}, {rng.randint(10000, 99999)} {w().capitalize()}"])
    date = rng.choice([f"{year}-{month:02d}-{day:02d}", f"{months[month - 1]} {day}, {year}", f"{day}/{month}/{year}",
                       f"{day} {months[month - 1]}", f"{months[month - 1]} {year}", f"the {day}th"])
    clock = rng.choice([f"{rng.randint(1, 12)}:{rng.choice(['00', '15', '30', '45'])}", f"{rng.randint(1, 12)} pm", f"{rng.randint(6, 11)}am"])
    quantity = rng.choice([f"{rng.randint(2, 9000)} {w()}s", f"{rng.randint(1, 99)} km", f"{rng.randint(2, 40)}%",
                           f"{rng.randint(1, 90)},{rng.randint(0, 999):03d} people", f"{rng.randint(2, 12)} kids",
                           str(rng.randint(1000, 99999))])
    value = {"date": date, "price": price, "version": version, "room": room, "address": street, "product": product,
             "camel": _camel(rng, vocab), "path": path, "url": url, "time": clock, "quantity": quantity}.get(kind, "")
    noun = {"date": "deadline", "price": "price", "version": "version", "room": "room number", "address": "address",
            "product": "car", "camel": "team", "path": "file", "url": "link", "time": "meeting",
            "quantity": "total"}.get(kind, "thing")
    if kind == "it's":
        kind, value = rng.choice([("date", date), ("product", product), ("time", clock), ("address", f"on {street}"),
                                  ("price", price), ("version", version)])
        return kind, rng.choice([f"It's {value}.", f"What's the {noun}? It's {value}.", f"I think it's {value}, {name}."])
    frames = [f"The {noun} is {value}.", f"{name}'s {noun} was {value}.", f"{noun.capitalize()}: {value}.",
              f"We moved the {w()} to {value} last week.", f"{name} said {value} works for the {w()}.",
              f"I picked {value} as the {w()} for {name}.", f"Our {noun} is now {value}, right?"]
    if kind == "room":
        frames += [f"I'm staying in room {value} at the {name}.", f"Room {value} is on the {rng.randint(2, 9)}th floor.",
                   f"{name} moved to room {value}."]
    if kind == "product":
        frames += [f"{name} drives a {value} now.", f"The new {value} costs {price}.", f"I returned the {value} on {date}."]
    if kind == "date":
        frames += [f"{name} was born on {date}.", f"We ship on {date} at {clock}."]
    return kind, rng.choice(frames)


def _zh_ordinary(rng: random.Random, vocab: list[str]) -> tuple[str, str]:
    who = rng.choice(_HANZI) + rng.choice(_HANZI)
    brand = rng.choice(vocab).capitalize()
    kind, text = rng.choice([
        ("room", f"我住在{rng.randint(100, 2999)}房间。"), ("room", f"房间号是{rng.randint(100, 2999)}。"),
        ("price", f"价格是{rng.randint(2, 9999)}元。"), ("price", f"{who}花了{rng.randint(2, 900)}块钱。"),
        ("version", f"版本是{rng.randint(1, 20)}.{rng.randint(0, 9)}.{rng.randint(0, 30)}。"),
        ("date", f"会议定在{rng.randint(1990, 2035)}年{rng.randint(1, 12)}月{rng.randint(1, 28)}日。"),
        ("address", f"地址是{who}路{rng.randint(1, 999)}号。"), ("product", f"{who}买了一台{brand} {rng.randint(2, 15)}。"),
        ("product", f"这款车叫Model {rng.randint(2, 9)}。"), ("path", f"文件在/home/{rng.choice(vocab)}/{rng.choice(vocab)}.txt。"),
        ("url", f"网址是https://{rng.choice(vocab)}.cn/{rng.randint(1, 9999)}。"), ("quantity", f"{who}跑了{rng.randint(1000, 30000)}步。"),
        ("time", f"{who}{rng.randint(1, 12)}点{rng.randint(10, 59)}分到。"), ("camel", f"{who}在{_camel(rng, vocab)}上班。"),
        ("date", f"截止日期是{rng.randint(2020, 2035)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}。"),
    ])
    return f"zh {kind}", text


def generate(seed: int, n: int) -> tuple[list[Case], list[tuple[str, str]]]:
    rng = random.Random(seed)
    vocab = words(rng, 800)
    return [secret_case(rng, vocab) for _ in range(n)], [ordinary_sentence(rng, vocab) for _ in range(n)]


def masked_ok(case: Case, masked: str) -> bool:
    return all(s not in masked for s in case.secrets) and all(k in masked for k in case.keep) and masked != case.text


def score(seed: int = 1, n: int = 400, nouns: bool = True) -> dict:
    """Detection and false-mask rates on the sets of one seed, with the misses."""
    from memflow.tasks.ground import secrets

    mask = secrets.mask_secrets if nouns else secrets.mask_without_nouns
    cases, ordinary = generate(seed, n)
    misses = [(c.kind, c.text, mask(c.text)[0]) for c in cases if not masked_ok(c, mask(c.text)[0])]
    false = [(kind, text, mask(text)[0]) for kind, text in ordinary if mask(text)[0] != text]
    return {"seed": seed, "secrets": len(cases), "masked": len(cases) - len(misses),
            "detection": 1 - len(misses) / len(cases), "ordinary": len(ordinary), "false_masks": len(false),
            "false_rate": len(false) / len(ordinary), "misses": misses, "false": false,
            "miss_kinds": Counter(k for k, _, _ in misses), "false_kinds": Counter(k for k, _, _ in false)}


def real_messages(folder: Path) -> tuple[int, list[tuple[str, str]]]:
    """(messages read, the changed ones): every `content` of every `*/sessions/*.json` under the
    folder (capture's format), masked; a conversation written with no secret in it is a false-mask
    check on text nobody generated here."""
    from memflow.tasks.ground.secrets import mask_secrets

    n, changed = 0, []
    for path in sorted(folder.glob("*/sessions/*.json")):
        for message in json.loads(path.read_text(encoding="utf-8")):
            n += 1
            masked = mask_secrets(message["content"])[0]
            if masked != message["content"]:
                changed.append((message["content"], masked))
    return n, changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, nargs="+", default=[1])
    parser.add_argument("--n", type=int, default=400, help="sentences per set and seed")
    parser.add_argument("--show", type=int, default=0, help="print this many misses and false masks")
    parser.add_argument("--no-nouns", action="store_true", help="leave out the rule of listed secret nouns")
    parser.add_argument("--messages", type=Path, help="a folder of sessions (memory-right's layout): count changed messages")
    args = parser.parse_args()
    if args.messages:
        n, changed = real_messages(args.messages)
        print(f"{args.messages}: {len(changed)}/{n} messages changed")
        for text, masked in changed[:args.show]:
            print(f"  {text!r} -> {masked!r}")
    for seed in args.seed:
        r = score(seed, args.n, nouns=not args.no_nouns)
        print(f"seed {seed}: masked {r['masked']}/{r['secrets']} secrets ({r['detection']:.1%}), "
              f"false masks {r['false_masks']}/{r['ordinary']} ordinary sentences ({r['false_rate']:.1%})")
        if r["miss_kinds"]:
            print("  missed by kind:", dict(r["miss_kinds"].most_common()))
        if r["false_kinds"]:
            print("  false masks by kind:", dict(r["false_kinds"].most_common()))
        for kind, text, masked in r["misses"][:args.show]:
            print(f"  MISS  [{kind}] {text!r} -> {masked!r}")
        for kind, text, masked in r["false"][:args.show]:
            print(f"  FALSE [{kind}] {text!r} -> {masked!r}")


if __name__ == "__main__":
    main()
