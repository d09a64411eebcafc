"""One LLM judge endpoint through the official clients: OpenAI-compatible chat completions or Anthropic
messages, text and images, with our retries and rate limit.

The official clients are created with max_retries=0 and retried here with exponential backoff on
408/409/429/5xx and connection errors (a Retry-After header wins), so both providers behave the same and
the behaviour is testable. Keys come from the environment variable the judge names and never appear in
an error message, a log line or a file. The clients are imported when a JudgeClient is made, so code that
only reads judged results never pays for importing them.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from invscale.judges.config import JudgeConfig, JudgeConfigError, JudgeError, JudgeRequest

log = logging.getLogger(__name__)

NO_KEY = "EMPTY"  # sent to servers that need no key (vLLM's convention)


def read_api_key(owner: str, env: str | None, error: type[Exception]) -> str:
    """The API key in the environment variable `env` (NO_KEY when None); `error` names the owner and the
    variable when it is unset. The key is never stored anywhere else."""
    if env is None:
        return NO_KEY
    key = os.environ.get(env, "")
    if not key:
        raise error(f"{owner}: environment variable {env} is not set (it must hold the API key)")
    return key


def scrub_key(text: str, key: str) -> str:
    """The text with the key blanked out (error messages may echo request headers)."""
    return text.replace(key, "[key]") if key != NO_KEY else text
RETRY_STATUSES = frozenset({408, 409, 429})  # and every 5xx
T = TypeVar("T")


class RateLimiter:
    """At most `per_second` starts per second, shared by a judge's threads."""

    def __init__(self, per_second: float):
        self.interval = 1.0 / per_second
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        time.sleep(start - now)


def image_media_type(image: bytes) -> str:
    if image.startswith(b"\x89PNG"):
        return "image/png"
    if image.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if image[:4] == b"RIFF" and image[8:12] == b"WEBP":
        return "image/webp"
    if image[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    raise JudgeError("an image sent to a judge must be PNG, JPEG, WebP or GIF bytes")


def image_bytes(image: Any) -> bytes:
    """PNG bytes of a PIL image; bytes pass through."""
    if isinstance(image, bytes):
        return image
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def _data_url(image: bytes) -> str:
    return f"data:{image_media_type(image)};base64,{base64.b64encode(image).decode('ascii')}"


def openai_messages(request: JudgeRequest) -> list[dict]:
    """Chat-completions messages: the images as data URLs before the text."""
    content: str | list[dict] = request.prompt
    if request.images:
        content = [*({"type": "image_url", "image_url": {"url": _data_url(image)}} for image in request.images),
                   {"type": "text", "text": request.prompt}]
    messages = [{"role": "system", "content": request.system}] if request.system else []
    return [*messages, {"role": "user", "content": content}]


def anthropic_messages(request: JudgeRequest) -> list[dict]:
    """Messages API content: base64 image blocks before the text (the system prompt is a separate field)."""
    content: str | list[dict] = request.prompt
    if request.images:
        content = [*({"type": "image", "source": {"type": "base64", "media_type": image_media_type(image),
                                                  "data": base64.b64encode(image).decode("ascii")}}
                     for image in request.images),
                   {"type": "text", "text": request.prompt}]
    return [{"role": "user", "content": content}]


class MalformedResponse(Exception):
    """A response whose body is not JSON or not the provider's shape (a proxy or server fault): asked again
    like a dropped connection, then reported as the judge's failure."""
    status_code = "malformed response"


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str | None
    attempts: int  # requests made, retries included


class JudgeClient:
    """One judge's endpoint: the official client (no retries of its own), our retries and rate limit."""

    def __init__(self, judge: JudgeConfig):
        import anthropic
        import openai

        self.judge = judge
        self._key = read_api_key(f"judge '{judge.name}'", judge.api_key_env, JudgeConfigError)
        self._limiter = RateLimiter(judge.requests_per_second)
        self._errors = (openai.APIError, anthropic.APIError, MalformedResponse)
        # timeouts and malformed bodies included
        self._connection_errors = (openai.APIConnectionError, anthropic.APIConnectionError, MalformedResponse)
        if judge.provider == "openai":
            self._client = openai.OpenAI(api_key=self._key, base_url=judge.base_url, max_retries=0,
                                         timeout=judge.timeout_s)
        else:
            self._client = anthropic.Anthropic(api_key=self._key, base_url=judge.base_url, max_retries=0,
                                               timeout=judge.timeout_s)

    def scrub(self, text: str) -> str:
        """The text with the key blanked out (error messages may echo request headers)."""
        return scrub_key(text, self._key)

    def _request(self, request: JudgeRequest) -> tuple[str, str | None]:
        try:
            return self._ask(request)
        except json.JSONDecodeError as error:  # the official clients parse a JSON content type unchecked
            raise MalformedResponse(f"the response body is not JSON ({error})") from None

    def _ask(self, request: JudgeRequest) -> tuple[str, str | None]:
        judge = self.judge
        body = dict(judge.params)
        options: dict[str, Any] = {"model": judge.model}
        if judge.max_tokens is not None:
            options["max_tokens"] = judge.max_tokens
        if judge.provider == "openai":
            if judge.temperature is not None:
                options["temperature"] = judge.temperature
            completion = self._client.chat.completions.create(
                messages=openai_messages(request), **options, extra_body=body or None)
            choices = getattr(completion, "choices", None)
            message = getattr(choices[0], "message", None) if isinstance(choices, list) and choices else None
            content = getattr(message, "content", None)
            if message is None or not isinstance(content, (str, type(None))):
                raise MalformedResponse(f"the response has no choices[0].message.content: {str(completion)[:200]}")
            return content or "", choices[0].finish_reason
        if judge.temperature is not None:
            # anthropic>=1 dropped `temperature` from the method signature; the API still takes it in the body
            body["temperature"] = judge.temperature
        if request.system:
            options["system"] = request.system
        message = self._client.messages.create(messages=anthropic_messages(request), **options,
                                               extra_body=body or None)
        blocks = getattr(message, "content", None)
        if not isinstance(blocks, list) or not all(isinstance(getattr(block, "type", None), str) for block in blocks):
            raise MalformedResponse(f"the response has no list of content blocks: {str(message)[:200]}")
        return "".join(block.text for block in blocks if block.type == "text"), message.stop_reason

    def complete(self, request: JudgeRequest) -> Completion:
        """The judge's answer; retries retryable errors with exponential backoff, then raises JudgeError."""
        (text, finish), attempts = call_with_retries(
            lambda: self._request(request), what=f"judge '{self.judge.name}'", settings=self.judge,
            limiter=self._limiter, errors=self._errors, connection_errors=self._connection_errors, scrub=self.scrub)
        return Completion(text, finish, attempts)


def retryable_status(status: Any) -> bool:
    """408, 409, 429 and every 5xx: worth asking again."""
    return isinstance(status, int) and (status in RETRY_STATUSES or status >= 500)


def call_with_retries(call: Callable[[], T], *, what: str, settings: Any, limiter: RateLimiter,
                      errors: tuple[type[BaseException], ...], connection_errors: tuple[type[BaseException], ...] = (),
                      status_of: Callable[[BaseException], Any] = lambda error: getattr(error, "status_code", None),
                      scrub: Callable[[str], str] = lambda text: text) -> tuple[T, int]:
    """(call(), attempts made), waiting for the rate limit before each attempt. An error of `errors` that is
    a connection error or has a retryable status is retried with exponential backoff (settings.backoff_s
    doubled per retry, at most settings.backoff_max_s; a Retry-After header wins) up to settings.max_retries
    times; then, or for any other error of `errors`, JudgeError naming `what`, the status and the attempts.
    Shared by the judges and by the other model endpoints of the project (CAIT's image generators)."""
    attempt = 0
    while True:
        limiter.wait()
        try:
            return call(), attempt + 1
        except errors as error:
            status = status_of(error) or type(error).__name__
            retryable = isinstance(error, connection_errors) or retryable_status(status_of(error))
            if not retryable or attempt == settings.max_retries:
                raise JudgeError(f"{what}: request failed ({status}) after {attempt + 1} "
                                 f"attempt(s): {scrub(str(error))[:300]}") from None
            delay = _retry_after(error)
            delay = min(settings.backoff_max_s, settings.backoff_s * 2**attempt if delay is None else delay)
            log.warning("%s: %s, retry %d/%d in %.2f s", what, status, attempt + 1, settings.max_retries, delay)
            time.sleep(delay)
            attempt += 1


def _retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff
