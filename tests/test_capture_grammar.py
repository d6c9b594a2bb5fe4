"""The offline writer reads grammar, not word lists: an evaluation of what came before is chatter
by its structure, and a user's statement goes into decisions, open items or reflections by its
mood and tense. Every content word here is a generated pseudo-word, in no list of the writer."""

import random

import pytest

from memflow.tasks.capture.extractive import small_talk, write_extractive

SECTIONS = ("facts", "decisions", "open_items", "reflections", "questions", "others")
SYLLABLES = ["ba", "ko", "ri", "mu", "se", "ta", "vi", "lo", "ne", "pu", "dra", "kle", "sto", "fi", "zor", "gli"]
CLOSED_HAN = set("我咱你您他她它们这那个些也真是太好很挺超非常特别蛮多么可最的了是在有吗呢吧啊不没一二三四五六七八九十百千万零两"
                 "哈呀哇哦嗯啦唉噢耶嘿喔哎诶要会将打算准备需必须应该得还尚未本早来才见谢感请麻烦帮给替能否")


def pseudo(rng: random.Random, syllables: tuple[int, int] = (2, 3)) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(*syllables)))


def placed(text: str, role: str = "user") -> dict[str, list[str]]:
    note = write_extractive([{"role": role, "content": text}], [1])
    return {key: [i.text for i in getattr(note, key)] for key in SECTIONS if getattr(note, key)}


@pytest.mark.parametrize("seed", [3, 17, 41])
def test_an_evaluation_is_chatter_by_its_structure_whatever_its_adjective(seed):
    """"That's zorbish!" is dropped as "That's amazing!" is: a demonstrative (or "it", "you"
    with an exclamation or a degree adverb, or no subject before a linking verb) with a copula and a
    predicate of one word; so is "太X了". The same made-up word stating something is kept."""
    rng = random.Random(seed)
    han = [chr(c) for c in range(0x4E00, 0x9FA5) if chr(c) not in CLOSED_HAN]
    for _ in range(60):
        adj, noun, name = pseudo(rng), pseudo(rng), pseudo(rng).capitalize()
        zh = "".join(rng.sample(han, rng.randint(1, 2)))
        for chatter in (f"That's {adj}!", f"That's {adj}.", f"That is so {adj}", f"It was so {adj}.", f"It's {adj}!",
                        f"Wow, that looks {adj}, {name}!", f"Sounds {adj}!", f"You're so {adj}!", f"How {adj}!",
                        f"Those were really {adj}.", f"Oh {adj}!", f"Yeah, {adj}!", f"{adj}, thanks",
                        f"太{zh}了！", f"这真{zh}！", f"哇，太{zh}了", f"Thanks, that {adj}ed.", f"That {adj}s!",
                        f"It {adj}ed!"):
            assert small_talk(chatter, "user"), chatter
            assert not write_extractive([{"role": "user", "content": chatter}], [1]).keep, chatter
        # the same words saying something: a name, a number, a noun phrase, another subject,
        # a participle, a question, or "it" without an exclamation (a report: "It's ready.")
        for kept in (f"That's {name}!", f"That's 40 {noun}s!", f"That's a {adj} {noun}.", f"My {noun} is {adj}.",
                     f"{name} is so {adj}!", f"It's {adj}.", f"It was {adj}ed!", f"Is that {adj}?",
                     f"I'm so {adj}.", f"{adj.capitalize()}!", f"Yes, {adj}.", "That was yesterday!", "That's mine!",
                     f"That {adj}ed the {noun}.", f"It {adj}ed for {name}.", f"It {adj}ed.", f"{name} {adj}ed.",
                     f"我太{zh}了", f"{zh}{zh}很{noun}"):
            assert not small_talk(kept, "user"), kept
            assert sum(placed(kept).values(), []) == [kept], kept


@pytest.mark.parametrize("seed", [5, 23, 71])
def test_a_statement_goes_to_a_section_by_its_mood_and_tense_whatever_its_verb(seed):
    """First person with a future or volitional auxiliary is a decision ("We will migrate the
    blarg", whatever the verb); a deontic modal an open item; a counterfactual modal perfect a
    reflection; a past decision or an inference ("must have been") is a fact; the sentence's
    first independent clause decides."""
    rng = random.Random(seed)
    for _ in range(60):
        verb, noun, adj = pseudo(rng), pseudo(rng), pseudo(rng)
        cases = {
            "decisions": [f"We will {verb} the {noun}.", f"I'll {verb} the {noun} on Friday.", f"Let's {verb} the {noun}.",
                          f"We're going to {verb} the {noun}.", f"I won't {verb} the {noun} again.",
                          f"我们要{verb}这个{noun}。", f"我打算{verb}{noun}。"],
            "open_items": [f"The {noun} must be {verb}ed by Friday.", f"We need to {verb} the {noun}.",
                           f"You should {verb} the {noun} first.", f"I have to {verb} my {noun}.",
                           f"I haven't {verb}ed the {noun} yet.", f"I would have to {verb} the {noun}.", f"{noun}需要{verb}。", f"{noun}还没{verb}。"],
            "reflections": [f"We should have {verb}ed the {noun}.", f"I could've {verb}ed it sooner.",
                            f"We shouldn't have {verb}ed the {noun}.", f"本该先{verb}{noun}。"],
            "facts": [f"We {verb}ed the {noun}.", f"We decided to {verb} the {noun}.", f"The {noun} must have been {adj}.",
                      f"{adj.capitalize()} {noun}s {verb} the {noun} daily.", f"Ana will {verb} the {noun}."],
            "questions": [f"{verb.capitalize()} me about the {noun}.", f"Can you {verb} the {noun}",
                          f"Should we {verb} the {noun}?", f"帮我{verb}一下{noun}。"],
        }
        for section, said in cases.items():
            for text in said:
                assert placed(text) == {section: [text]}, (text, placed(text))
        # the first independent clause sets the section; a coordinated clause after it adds to it
        opens = {f"We {verb}ed the {noun}, and I'll {verb} it again.": "facts",
                 f"I'll {verb} the {noun}, but the {adj} {noun} stays.": "decisions",
                 f"The {noun} is {adj}; we must {verb} it.": "facts",
                 f"We must {verb} the {noun} - it is {adj}.": "open_items"}
        for text, section in opens.items():
            assert placed(text) == {section: [text]}, (text, placed(text))
        # an imperative by its shape only: a name or a third person's verb before "me" is a statement
        assert placed(f"Call me {adj.capitalize()}.") == {"facts": [f"Call me {adj.capitalize()}."]}
        assert placed(f"{verb.capitalize()}s me the {noun}.") == {"facts": [f"{verb.capitalize()}s me the {noun}."]}


def test_nothing_said_is_lost_only_chatter():
    """Every sentence of a turn that is not chatter is kept verbatim in some section; the
    assistant's go to `others`."""
    rng = random.Random(9)
    for _ in range(100):
        words = [pseudo(rng, (1, 3)) for _ in range(rng.randint(2, 9))]
        text = " ".join(words).capitalize() + rng.choice([".", "!", "?"])
        for role in ("user", "assistant"):
            kept = sum(placed(text, role).values(), [])
            assert kept == [text], (role, text, kept)
