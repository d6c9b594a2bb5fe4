"""Validation at the door: malformed conversations get a one-line error naming the message and
what is wrong, exit 1, and leave the workspace byte for byte as it was; `--skip-invalid` leaves
bad messages out and counts them."""

from __future__ import annotations

import hashlib
import json

import pytest
from helpers import run_cli

from memflow.tasks.capture import InvalidMessages, check_messages

GOOD = {"id": "1", "role": "user", "timestamp": "2026-05-01T09:00:00Z",
        "content": "The boiler is serviced every March."}


def tree(root) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("payload,expected", [
    ([GOOD, {**GOOD, "id": "2", "content": 12345}], "message 2: content must be text or a list of content parts, got int"),
    ([{"content": "no role here"}], "message 1: no role"),
    ([{**GOOD, "role": "robot"}], "message 1: role 'robot' is not one of"),
    ([{**GOOD, "timestamp": "yesterday at noon"}], "message 1: timestamp 'yesterday at noon' is neither ISO 8601"),
    ([GOOD, "just a string"], "message 2: expected an object with role and content, got str"),
    ([{**GOOD, "content": [{"type": "text", "text": "ok"}, 7]}], "message 1: content part 2 is neither text"),
    ([{**GOOD, "id": [1, 2]}], "message 1: id must be text or a number, got list"),
])
def test_malformed_messages_are_rejected_by_position_and_nothing_is_written(settings, lay, tmp_path,
                                                                            payload, expected):
    before = tree(lay.root)
    source = tmp_path / "conversation.json"
    source.write_text(json.dumps(payload))
    res = run_cli("-w", str(lay.root), "capture", "--session", "s1", str(source))
    assert res.returncode == 1 and res.stderr.strip().startswith(f"error: {expected}"), res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert tree(lay.root) == before


@pytest.mark.parametrize("text,expected", [
    ('"hello"', "expected a JSON list of messages (or JSONL), got a JSON str"),
    ('{"messages": 3}', "expected a JSON list of messages (or JSONL), got a JSON dict"),
    (json.dumps(GOOD) + "\n{broken\n" + json.dumps(GOOD), "line 2 is not JSON"),
    ("[{]", "not JSON"),
])
def test_unreadable_files_are_one_line_errors(settings, lay, tmp_path, text, expected):
    before = tree(lay.root)
    source = tmp_path / "conversation.jsonl"
    source.write_text(text)
    res = run_cli("-w", str(lay.root), "capture", "--session", "s1", str(source))
    assert res.returncode == 1 and expected in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert tree(lay.root) == before


def test_skip_invalid_leaves_bad_messages_out_and_counts_them(settings, lay, tmp_path):
    source = tmp_path / "conversation.json"
    source.write_text(json.dumps([GOOD, {"id": "2", "content": 12345}, {**GOOD, "id": "3",
                                  "content": "The router password is on the fridge."}]))
    res = run_cli("-w", str(lay.root), "capture", "--session", "s1", str(source), "--skip-invalid")
    assert res.returncode == 0, res.stderr
    assert "(+2 message(s))" in res.stdout and "skipped message 2: no role" in res.stderr
    event = json.loads((lay.state_dir / "inbox.jsonl").read_text().splitlines()[-1])
    assert "skipped 1 invalid message(s): message 2: no role" in event["summary"]


def test_the_python_api_validates_too(settings, lay):
    import memflow

    before = tree(lay.root)
    with pytest.raises(InvalidMessages, match="message 1: content must be text"):
        memflow.capture([{"role": "user", "content": 12345}], "s1", settings)
    assert tree(lay.root) == before
    valid, skipped = check_messages([GOOD, {"role": "user"}], skip_invalid=True)
    assert valid == [GOOD] and skipped == ["message 2: content must be text or a list of content parts, got null"]
    with pytest.raises(InvalidMessages, match="got dict"):
        check_messages({"role": "user", "content": "x"})
    assert check_messages([{"role": "assistant", "content": None, "tool_calls": []},
                           {"role": "user", "content": "x", "timestamp": 1767225600}]) != ([], [])
