"""A small OpenAI-compatible model server on 127.0.0.1 for tests (chat + embeddings).

Tests script replies by pushing onto `server.script`: a dict with `content` (a reply text),
`status` (an HTTP error code) or `hang` (seconds to sleep before answering). With an empty
script, chat answers via `server.default_chat(messages)` and embeddings are deterministic
hashed bags of words (texts sharing words get similar vectors). A reply (scripted `content` or
what `default_chat` returns) may be a whole assistant message dict with `tool_calls`, for an
agent that works by calling tools (the ReMe fixture script drives ReMe's agents that way).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIMS = 64


def hashed_embedding(text: str, dims: int = DIMS) -> list[float]:
    vector = [0.0] * dims
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % dims] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def check_tool_messages(messages: list[dict]) -> str:
    """What OpenAI enforces: each `tool` message answers a tool call of an earlier assistant
    message, and every call gets an answer."""
    open_calls: set[str] = set()
    for message in messages:
        if message.get("role") == "assistant":
            if open_calls:
                return f"tool calls without a reply: {sorted(open_calls)}"
            for call in message.get("tool_calls") or []:
                if call.get("type") != "function" or "name" not in call.get("function", {}):
                    return "malformed tool call"
                json.loads(call["function"].get("arguments") or "{}")
                open_calls.add(call["id"])
        elif message.get("role") == "tool":
            if message.get("tool_call_id") not in open_calls:
                return f"tool message for unknown call {message.get('tool_call_id')}"
            open_calls.discard(message["tool_call_id"])
    return f"tool calls without a reply: {sorted(open_calls)}" if open_calls else ""


class FakeModel:
    def __init__(self):
        self.script: list[dict] = []
        self.requests: list[dict] = []
        self.default_chat = lambda messages: json.dumps({"ok": True})
        self.embed_fn = hashed_embedding
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                step = fake.script.pop(0) if fake.script else {}
                if "hang" in step:
                    time.sleep(step["hang"])
                if "status" in step:
                    return self._send(step["status"], {"error": {
                        "message": f"scripted {step['status']}", "type": "server_error"}})
                if self.path.endswith("/embeddings"):
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    data = [{"object": "embedding", "index": i, "embedding": fake.embed_fn(t)}
                            for i, t in enumerate(texts)]
                    return self._send(200, {"object": "list", "data": data, "model": body["model"],
                                            "usage": {"prompt_tokens": 1, "total_tokens": 1}})
                problem = check_tool_messages(body.get("messages", []))
                if problem:
                    return self._send(400, {"error": {"message": problem, "type": "invalid_request_error"}})
                content = step.get("content")
                if content is None:
                    content = fake.default_chat(body.get("messages", []))
                message = ({"role": "assistant", "content": None, **content} if isinstance(content, dict)
                           else {"role": "assistant", "content": content})
                return self._send(200, {
                    "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "test"),
                    "choices": [{"index": 0, "message": message,
                                 "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

            def _send(self, status: int, payload: dict):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler
