"""A local stand-in for the OpenAI and Anthropic HTTP APIs, for the re-evaluation tests.

    with JudgeServer(keys={"sk-openai", "sk-anthropic"}) as server:
        server.openai_url     # http://127.0.0.1:<port>/v1  (POST /v1/chat/completions, Bearer key)
        server.anthropic_url  # http://127.0.0.1:<port>     (POST /v1/messages, x-api-key or Bearer key)
        server.gemini_url     # http://127.0.0.1:<port>     (POST /v1[beta]/models/<model>:generateContent,
                              #                              x-goog-api-key)

Images (CAIT construction): POST /v1/images/generations (OpenAI's images API, b64_json) and Gemini's
generateContent answer with a PNG of the requested size drawn from the prompt (`image_answer(prompt, size)`,
default `drawn_png`); an answer of None is a refusal (openai: a 400 content_policy_violation error;
Gemini: a candidate without parts, finishReason IMAGE_SAFETY).

It listens on 127.0.0.1 on a free port, serves from a daemon thread and shuts itself down after
`lifetime_s` even if a test forgets to. Answers are deterministic: `answer(prompt)` (default
`answer_from_description`: the option whose sentence the description contains, else a refusal that
names no option; `anthropic_answer`, when given, answers the Anthropic route instead, so two judges can
disagree; `TaxonomyJudge` answers error-taxonomy prompts with JSON verdicts, some malformed;
`AdjudicationJudge` answers answer-adjudication prompts, some malformed or off-list).
`fail_next(n, status)` makes the next n requests fail with that HTTP status (in the provider's error
format) before answering again. Every request is recorded in `requests`, with the SHA-256 of each image
it carried.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


REFUSAL = "I cannot tell from this description."


@dataclass
class SeenRequest:
    path: str
    model: str
    prompt: str
    authorized: bool
    status: int
    at: float  # time.monotonic() on arrival
    images: tuple[str, ...] = ()  # SHA-256 of each image's bytes, in the order sent
    body: dict = field(default_factory=dict)  # the request body as sent


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def answer_from_description(prompt: str) -> str:
    """The letter of the one option whose sentence appears in the description; a refusal otherwise."""
    description = prompt.split("Which of the following option", 1)[0]
    options = dict(re.findall(r"^Option ([AB]): (.*)$", prompt, re.MULTILINE))
    found = [letter for letter, sentence in sorted(options.items())
             if _normalise(sentence) in _normalise(description)]
    return found[0] if len(found) == 1 else REFUSAL


TAXONOMY_CATEGORIES = ("GENUINE_ERROR", "FORMAT_MISMATCH", "BAD_ANNOTATION_OR_AMBIGUOUS")
RESPONSE_BLOCK = re.compile(r"^Model [AB] response: (.*?)\n  -> (CORRECT|INCORRECT)$", re.MULTILINE | re.DOTALL)


class TaxonomyJudge:
    """Answers Appendix G.1 prompts by the incorrect model's response (the text before "-> INCORRECT"):
    a word of `ambiguous_words` -> BAD_ANNOTATION_OR_AMBIGUOUS, "option text" -> FORMAT_MISMATCH, else
    GENUINE_ERROR, as the JSON object the prompt asks for. "MALFORMED" in it: a verdict in a markdown fence
    every time (never parses); "FLAKY": a cut-off verdict the first time, a valid one after. Thread-safe."""

    def __init__(self, ambiguous_words: tuple[str, ...] = ("ambiguous",)):
        self.ambiguous_words = ambiguous_words
        self.asked: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        incorrect = [response for response, outcome in RESPONSE_BLOCK.findall(prompt) if outcome == "INCORRECT"]
        if len(incorrect) != 1:
            return "This is not a taxonomy prompt."
        response = incorrect[0]
        with self._lock:
            self.asked[prompt] = self.asked.get(prompt, 0) + 1
            times = self.asked[prompt]
        if any(word in response.lower() for word in self.ambiguous_words):
            category = "BAD_ANNOTATION_OR_AMBIGUOUS"
        else:
            category = "FORMAT_MISMATCH" if "option text" in response else "GENUINE_ERROR"
        verdict = json.dumps({"category": category, "confidence": "high",
                              "explanation": f"Model B answered {response[:20]!r}."})
        if "MALFORMED" in response:
            return f"```json\n{verdict}\n```"
        if "FLAKY" in response and times == 1:
            return verdict[:25]
        return verdict


ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
PICK = re.compile(r"\[pick:(\w+)\]")


class AdjudicationJudge:
    """Answers answer-adjudication prompts (postprocess/adjudication/prompt.py) from the response between
    <response> tags. A marker "[pick:WORD]" in it decides: an ordinal ("second") picks that option's
    letter, "yes"/"no" answer Yes/No, a number word ("seven") answers 7, "nothing" answers NONE, any other
    word is the open answer; "malformed" answers a sentence every time (never parses), "offlist" a letter
    that is no option every time, "flaky" a sentence the first time and the second option after. Without
    a marker (a random-weight model's noise) the reading is a hash of the response: an option letter (Yes
    or No) or NONE; NONE for numeric and open questions. Thread-safe; `asked` counts the asks per response."""

    def __init__(self):
        self.asked: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        found = re.search(r"<response>\n(.*)\n</response>", prompt, re.DOTALL)
        if found is None:
            return "This is not an adjudication prompt."
        response = found.group(1)
        with self._lock:
            self.asked[response] = self.asked.get(response, 0) + 1
            times = self.asked[response]
        letters = re.search(r"\(one of ([A-Z](?:, [A-Z])*)\)", prompt)
        letters = letters.group(1).split(", ") if letters else ["Yes", "No"] if "Reply with only Yes or No" in prompt \
            else []
        pick = PICK.search(response)
        word = pick.group(1) if pick else None
        if word == "malformed" or (word == "flaky" and times == 1):
            return "The response commits to the second option."
        if word == "offlist":
            return "Z"
        if word == "flaky":
            return letters[1] if letters else "NONE"
        if word == "nothing":
            return "NONE"
        if word in ORDINALS:
            return letters[ORDINALS.index(word)]
        if word in ("yes", "no"):
            return word.capitalize()
        if word in NUMBER_WORDS:
            return str(NUMBER_WORDS.index(word))
        if word is not None:
            return word
        if not letters:
            return "NONE"
        index = int(hashlib.sha256(response.encode()).hexdigest(), 16) % (len(letters) + 1)
        return letters[index] if index < len(letters) else "NONE"


def drawn_png(prompt: str, size: int) -> bytes:
    """A deterministic size x size PNG: a colour and a square placed by the prompt's hash."""
    from PIL import Image, ImageDraw

    digest = hashlib.sha256(prompt.encode()).digest()
    image = Image.new("RGB", (size, size), tuple(digest[:3]))
    corner = digest[3] * size // 512
    ImageDraw.Draw(image).rectangle([corner, corner, corner + size // 3, corner + size // 3], fill=tuple(digest[4:7]))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


IMAGES_PATH, GEMINI_PATH = "/v1/images/generations", re.compile(r"/v1(?:beta)?/models/([^/:]+):generateContent")


def _image_hashes(content) -> tuple[str, ...]:
    """SHA-256 of the images of an OpenAI (data URL) or Anthropic (base64 source) message content."""
    if isinstance(content, str):
        return ()
    encoded = [part["image_url"]["url"].split(",", 1)[1] if part.get("type") == "image_url"
               else part["source"]["data"] for part in content if part.get("type") in ("image_url", "image")]
    return tuple(hashlib.sha256(base64.b64decode(data)).hexdigest() for data in encoded)


class JudgeServer:
    def __init__(self, keys: set[str], answer: Callable[[str], str] = answer_from_description,
                 lifetime_s: float = 60.0, anthropic_answer: Callable[[str], str] | None = None,
                 image_answer: Callable[[str, int], bytes | None] = drawn_png):
        self.keys = set(keys)
        self.answer = answer
        self.anthropic_answer = anthropic_answer or answer
        self.image_answer = image_answer
        self.lifetime_s = lifetime_s
        self.requests: list[SeenRequest] = []
        self._failures: list[tuple[int, float | bytes | None]] = []  # (status, retry-after) or (200, a raw body)
        self._lock = threading.Lock()
        self._answered = threading.Condition(self._lock)
        self.reject_after_answers = 0  # a request with a bad key is refused only once this many were answered
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.openai_url = f"http://127.0.0.1:{self.port}/v1"
        self.anthropic_url = f"http://127.0.0.1:{self.port}"
        self.gemini_url = f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ control
    def __enter__(self) -> JudgeServer:
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

    def garble_next(self, n: int, body: bytes) -> None:
        """Answer the next n authorized requests with status 200 and this raw body (a broken proxy)."""
        with self._lock:
            self._failures += [(200, body)] * n

    @property
    def answered(self) -> list[SeenRequest]:
        return [r for r in self.requests if r.status == 200]

    # ------------------------------------------------------------------ HTTP
    def _respond(self, path: str, headers: dict[str, str], body: dict) -> tuple[int, dict, dict[str, str]]:
        arrived = time.monotonic()
        anthropic = path == "/v1/messages"
        gemini = GEMINI_PATH.fullmatch(path)
        bearer = headers.get("authorization", "").removeprefix("Bearer ")
        # anthropic's API takes x-api-key; its SDK 2.x sends the key as a Bearer token instead
        key = (headers.get("x-api-key") or bearer) if anthropic else headers.get("x-goog-api-key") if gemini else bearer
        messages = body.get("messages") or [{}]
        content = messages[-1].get("content", "")
        if path == IMAGES_PATH:
            content = body.get("prompt", "")
        elif gemini:
            content = "".join(part.get("text", "") for item in body.get("contents", []) for part in item.get("parts", []))
        prompt = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
        authorized = key in self.keys
        with self._lock:
            failure = self._failures.pop(0) if self._failures and authorized else None
        if not authorized:
            with self._answered:  # deterministic interleaving for tests of one judge failing mid-run
                self._answered.wait_for(lambda: len(self.answered) >= self.reject_after_answers, timeout=10)
            status, payload, extra = 401, _error(anthropic, 401, "invalid api key", bool(gemini)), {}
        elif failure is not None and isinstance(failure[1], bytes):
            status, payload, extra = 200, failure[1], {}
        elif failure is not None:
            status, retry_after = failure
            payload = _error(anthropic, status, "scripted failure", bool(gemini))
            extra = {} if retry_after is None else {"retry-after": str(retry_after)}
        elif path == IMAGES_PATH:
            size = int(str(body.get("size", "512x512")).split("x")[0])
            png = self.image_answer(prompt, size)
            status, payload = (400, _refusal()) if png is None else (200, _images_reply(png))
            extra = {}
        elif gemini:
            status, payload, extra = 200, _gemini_reply(self.image_answer(prompt, 1024)), {}
        else:
            text = (self.anthropic_answer if anthropic else self.answer)(prompt)
            status, payload, extra = 200, _reply(anthropic, body.get("model", ""), text), {}
        model = gemini.group(1) if gemini else body.get("model", "")
        with self._answered:
            self.requests.append(SeenRequest(path, model, prompt, authorized, status, arrived,
                                             _image_hashes(content), body))
            self._answered.notify_all()
        return status, payload, extra

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 10  # a stuck client cannot hold a thread for long

            def do_POST(self) -> None:
                if self.path not in ("/v1/chat/completions", "/v1/messages", IMAGES_PATH) \
                        and not GEMINI_PATH.fullmatch(self.path):
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                self._send(*server._respond(self.path, headers, body))

            def _send(self, status: int, payload: dict, extra: dict[str, str]) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
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


def _error(anthropic: bool, status: int, message: str, gemini: bool = False) -> dict:
    kind = {401: "authentication_error", 429: "rate_limit_error"}.get(status, "api_error")
    if gemini:
        return {"error": {"code": status, "message": message, "status": kind.upper()}}
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


def _refusal() -> dict:
    return {"error": {"message": "Your request was rejected by the safety system.", "type": "image_generation_user_error",
                      "code": "content_policy_violation", "param": None}}


def _images_reply(png: bytes) -> dict:
    return {"created": 0, "data": [{"b64_json": base64.b64encode(png).decode("ascii")}]}


def _gemini_reply(png: bytes | None) -> dict:
    if png is None:
        return {"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "IMAGE_SAFETY"}]}
    return {"candidates": [{"content": {"role": "model", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(png).decode("ascii")}}]},
        "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 1290}}
