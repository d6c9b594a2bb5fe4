import json

import pytest

from memflow.schemas.capture import Item, StructuredNote
from memflow.tasks.capture.conversation import auto_memory
from memflow.tasks.capture.model_writer import example_reply, model_writer
from memflow.tasks.capture.sessionlog import read_log
from memflow.tasks.ground.llm import ModelCallError, ModelOutputError

MESSAGES = [
    {"id": "a", "role": "user", "timestamp": "2026-06-01T08:00:00Z", "content": "hi"},
    {"id": "b", "role": "user", "timestamp": "2026-06-01T08:01:00Z",
     "content": "I'm allergic to peanuts, and I forgot my EpiPen at the gym last week."},
]
GOOD = StructuredNote(name="Peanut allergy", description="The user is allergic to peanuts.",
                      facts=[Item(text="The user is allergic to peanuts.", lines=[2])],
                      reflections=[Item(text="Carry the EpiPen to the gym.", lines=[2])])


def notes_in(lay):
    return sorted(p.name for p in (lay.root / "daily").rglob("*.md"))


def capture(model_settings):
    return auto_memory(model_settings, MESSAGES, "m1", writer=model_writer(model_settings))


def test_valid_reply_writes_the_models_note(model_settings, lay, fake_model):
    fake_model.script.append({"content": example_reply(GOOD)})
    result = capture(model_settings)
    text = (lay.root / result.path).read_text()
    assert "name: Peanut allergy" in text
    assert "- The user is allergic to peanuts. [[session/dialog/m1.jsonl#L2]]" in text
    assert "## Reflections" in text and "Carry the EpiPen to the gym." in text
    prompt = fake_model.requests[-1]["body"]["messages"][1]["content"]
    assert "L2 [user] I'm allergic to peanuts" in prompt


def test_model_note_carries_the_speaker_and_misfiled_words_are_moved(model_settings, lay, fake_model):
    """The schema asks for `who`, `questions` and `others`; an item citing only the
    assistant's line is never written among the user's facts."""
    messages = [*MESSAGES, {"id": "c", "role": "assistant", "name": "Ada",
                            "timestamp": "2026-06-01T08:02:00Z", "content": "Keep a spare EpiPen in your bag."},
                {"id": "d", "role": "user", "timestamp": "2026-06-01T08:03:00Z",
                 "content": "Can you remind me to refill it in May?"}]
    reply = StructuredNote(name="Peanut allergy", facts=[
        Item(text="The user is allergic to peanuts.", lines=[2]),
        Item(text="Keep a spare EpiPen in the bag.", lines=[3])],
        questions=[Item(text="Remind the user to refill the EpiPen in May.", lines=[4])])
    fake_model.script.append({"content": example_reply(reply)})
    result = auto_memory(model_settings, messages, "m2", writer=model_writer(model_settings))
    body = (lay.root / result.path).read_text().split("## Facts")[1]
    facts, rest = body.split("## Questions and requests")
    assert "allergic to peanuts" in facts and "spare EpiPen" not in facts
    asked, said = rest.split("## Said by Ada")
    assert "- Remind the user to refill the EpiPen in May." in asked
    assert "- Ada: Keep a spare EpiPen in the bag. [[session/dialog/m2.jsonl#L3]]" in said
    request = fake_model.requests[-1]["body"]["messages"]
    assert '"who"' in request[0]["content"] and "L3 [assistant Ada] Keep a spare EpiPen" in request[1]["content"]


def test_update_sends_the_existing_note_to_merge(model_settings, lay, fake_model):
    fake_model.script.append({"content": example_reply(GOOD)})
    capture(model_settings)
    fake_model.script.append({"content": example_reply(GOOD)})
    auto_memory(model_settings, [{"id": "c", "role": "user", "timestamp": "2026-06-01T09:00:00Z",
                                  "content": "Also shellfish."}], "m1", writer=model_writer(model_settings))
    prompt = fake_model.requests[-1]["body"]["messages"][1]["content"]
    assert "Existing note to merge into:" in prompt and "Peanut allergy" in prompt
    assert "L3 [user] Also shellfish." in prompt


def test_nothing_worth_keeping_creates_no_note_and_no_event(model_settings, lay, fake_model):
    fake_model.script.append({"content": json.dumps({"keep": False})})
    result = capture(model_settings)
    assert result.path is None and notes_in(lay) == []
    assert not (lay.state_dir / "inbox.jsonl").exists()
    assert len(read_log(lay, "m1")) == 2


@pytest.mark.parametrize("step,error", [
    ({"content": '{"name": 5, "facts": "nope"}'}, ModelOutputError),
    ({"content": "not json at all"}, ModelOutputError),
    ({"status": 500}, ModelCallError),
    ({"status": 429}, ModelCallError),
    ({"hang": 8}, ModelCallError),
])
def test_failures_keep_the_log_and_write_no_note(model_settings, lay, fake_model, step, error):
    fake_model.script.extend([step] * 3)
    quick = model_settings.model_copy(update={"model_timeout": 2.0})
    with pytest.raises(error):
        auto_memory(quick, MESSAGES, "m1", writer=model_writer(quick))
    assert len(read_log(lay, "m1")) == 2
    assert notes_in(lay) == []
    # the next call retries the date even though no message is new
    fake_model.script.clear()
    fake_model.script.append({"content": example_reply(GOOD)})
    result = auto_memory(quick, MESSAGES, "m1", writer=model_writer(quick))
    assert result.new_messages == 0 and result.created


def test_citation_outside_the_day_is_rejected(model_settings, lay, fake_model):
    bad = GOOD.model_copy(update={"facts": [Item(text="x", lines=[99])]})
    fake_model.script.append({"content": example_reply(bad)})
    with pytest.raises(ValueError, match="outside"):
        capture(model_settings)
    assert notes_in(lay) == []


def test_no_hidden_client_retries(model_settings, lay, fake_model):
    fake_model.script.extend([{"status": 500}] * 3)
    with pytest.raises(ModelCallError):
        capture(model_settings)
    assert len(fake_model.requests) == 1


def test_a_reply_that_validates_but_keeps_nothing_is_a_failed_attempt(model_settings, lay, fake_model):
    """`{"ok": true}` is a valid note with nothing in it: where the messages state something
    (an allergy), that is a failed attempt: no note, the messages stay pending, and the next
    capture with a real reply writes the allergy."""
    fake_model.script.append({"content": json.dumps({"ok": True})})
    with pytest.raises(ModelOutputError, match="kept nothing"):
        capture(model_settings)
    assert notes_in(lay) == [] and len(read_log(lay, "m1")) == 2
    fake_model.script.append({"content": example_reply(GOOD)})
    result = capture(model_settings)
    assert result.new_messages == 0 and result.created
    assert "allergic to peanuts" in (lay.root / result.path).read_text()
