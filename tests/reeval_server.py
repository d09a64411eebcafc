"""A local stand-in for the OpenAI and Anthropic HTTP APIs, for the re-evaluation tests.

    with JudgeServer(keys={"sk-openai", "sk-anthropic"}) as server:
        server.openai_url     # http://127.0.0.1:<port>/v1  (POST /v1/chat/completions, Bearer key)
        server.anthropic_url  # http://127.0.0.1:<port>     (POST /v1/messages, x-api-key or Bearer key)

It listens on 127.0.0.1 on a free port, serves from a daemon thread and shuts itself down after
`lifetime_s` even if a test forgets to. Answers are deterministic: `answer(prompt)` (default
`answer_from_description`: the option whose sentence the description contains, else a refusal that
names no option). `fail_next(n, status)` makes the next n requests fail with that HTTP status (in the
provider's error format) before answering again. Every request is recorded in `requests`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

REFUSAL = "I cannot tell from this description."


@dataclass
class SeenRequest:
    path: str
    model: str
    prompt: str
    authorized: bool
    status: int
    at: float  # time.monotonic() on arrival


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def answer_from_description(prompt: str) -> str:
    """The letter of the one option whose sentence appears in the description; a refusal otherwise."""
    description = prompt.split("Which of the following option", 1)[0]
    options = dict(re.findall(r"^Option ([AB]): (.*)$", prompt, re.MULTILINE))
    found = [letter for letter, sentence in sorted(options.items())
             if _normalise(sentence) in _normalise(description)]
    return found[0] if len(found) == 1 else REFUSAL


class JudgeServer:
    def __init__(self, keys: set[str], answer: Callable[[str], str] = answer_from_description,
                 lifetime_s: float = 60.0):
        self.keys = set(keys)
        self.answer = answer
        self.lifetime_s = lifetime_s
        self.requests: list[SeenRequest] = []
        self._failures: list[tuple[int, float | None]] = []
        self._lock = threading.Lock()
        self._answered = threading.Condition(self._lock)
        self.reject_after_answers = 0  # a request with a bad key is refused only once this many were answered
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.openai_url = f"http://127.0.0.1:{self.port}/v1"
        self.anthropic_url = f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ control
    def __enter__(self) -> Self:
        threading.Thread(target=self._server.serve_forever, daemon=True, name="judge-server").start()
        self._timer = threading.Timer(self.lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()

    def fail_next(self, n: int, status: int = 500, retry_after: float | None = None) -> None:
        with self._lock:
            self._failures += [(status, retry_after)] * n

    @property
    def answered(self) -> list[SeenRequest]:
        return [r for r in self.requests if r.status == 200]

    # ------------------------------------------------------------------ HTTP
    def _respond(self, path: str, headers: dict[str, str], body: dict) -> tuple[int, dict, dict[str, str]]:
        arrived = time.monotonic()
        anthropic = path == "/v1/messages"
        bearer = headers.get("authorization", "").removeprefix("Bearer ")
        # anthropic's API takes x-api-key; its SDK 2.x sends the key as a Bearer token instead
        key = (headers.get("x-api-key") or bearer) if anthropic else bearer
        messages = body.get("messages") or [{}]
        content = messages[-1].get("content", "")
        prompt = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
        authorized = key in self.keys
        with self._lock:
            failure = self._failures.pop(0) if self._failures and authorized else None
        if not authorized:
            with self._answered:  # deterministic interleaving for tests of one judge failing mid-run
                self._answered.wait_for(lambda: len(self.answered) >= self.reject_after_answers, timeout=10)
            status, payload, extra = 401, _error(anthropic, 401, "invalid api key"), {}
        elif failure is not None:
            status, retry_after = failure
            payload = _error(anthropic, status, "scripted failure")
            extra = {} if retry_after is None else {"retry-after": str(retry_after)}
        else:
            status, payload, extra = 200, _reply(anthropic, body.get("model", ""), self.answer(prompt)), {}
        with self._answered:
            self.requests.append(SeenRequest(path, body.get("model", ""), prompt, authorized, status, arrived))
            self._answered.notify_all()
        return status, payload, extra

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 10  # a stuck client cannot hold a thread for long

            def do_POST(self) -> None:
                if self.path not in ("/v1/chat/completions", "/v1/messages"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                self._send(*server._respond(self.path, headers, body))

            def _send(self, status: int, payload: dict, extra: dict[str, str]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

        return Handler


def _error(anthropic: bool, status: int, message: str) -> dict:
    kind = {401: "authentication_error", 429: "rate_limit_error"}.get(status, "api_error")
    if anthropic:
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": None, "param": None}}


def _reply(anthropic: bool, model: str, text: str) -> dict:
    if anthropic:
        return {"id": "msg_test", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 50, "output_tokens": 1}}
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 1, "total_tokens": 51}}
