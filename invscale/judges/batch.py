"""Ask judges many questions: each distinct request once per judge, cached as it completes, judges side by
side, each within its own concurrency and rate limit; a dry run counts the calls and estimates their cost.

`parse` (optional) reads an answer as the use expects it and raises ValueError when it does not; such an
answer is asked again up to the judge's `parse_retries`, then kept with its parse error (the use counts it
as unparsed). On any failed call (after transport retries) no new call starts, the calls in flight finish
and are kept, and the JudgeError is raised: a rerun resumes with the calls not yet made.
"""

from __future__ import annotations

import hashlib
import io
import math
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from invscale.judges.cache import JudgeCache
from invscale.judges.client import JudgeClient
from invscale.judges.config import JudgeConfig, JudgeRequest

Parse = Callable[[str], Any]
OnCall = Callable[[str, str], None]  # (judge name, cache key) after each completed call is stored
CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text
PIXELS_PER_IMAGE_TOKEN = 750  # Anthropic's published estimate (width x height / 750); OpenAI's tiles are similar
MAX_IMAGE_TOKENS = 1600  # providers downscale large images to about this many tokens


def progress_printer(pending: dict[str, int], every: int = 100) -> OnCall:
    """An on_call that prints each judge's progress to stderr every `every` calls and at its last call."""
    done = dict.fromkeys(pending, 0)
    lock = threading.Lock()

    def report(judge_name: str, key: str) -> None:
        with lock:
            done[judge_name] += 1
            n = done[judge_name]
        if n % every == 0 or n == pending[judge_name]:
            print(f"{judge_name}: {n}/{pending[judge_name]} calls", file=sys.stderr)
    return report


def cache_for(judge: JudgeConfig, cache_dir: Path | str) -> JudgeCache:
    return JudgeCache(Path(cache_dir) / f"{judge.name}.jsonl")


def parse_error(record: Mapping, parse: Parse | None) -> str | None:
    """Why a stored answer does not parse (None when it does, or when there is no parser)."""
    if parse is None:
        return None
    try:
        parse(record["answer"])
    except ValueError as error:
        return str(error) or type(error).__name__
    return None


def _ask(client: JudgeClient, key: str, request: JudgeRequest, parse: Parse | None) -> dict:
    asks, attempts = 0, 0
    while True:
        completion = client.complete(request)
        asks, attempts = asks + 1, attempts + completion.attempts
        record = {"answer": completion.text, "finish_reason": completion.finish_reason}
        error = parse_error(record, parse)
        if error is None or asks > client.judge.parse_retries:
            break
    judge = client.judge
    return {"key": key, "judge": judge.name, "provider": judge.provider, "model": judge.model, **record,
            "attempts": attempts, "asks": asks, "parse_error": error, "system": request.system, "prompt": request.prompt,
            "images": [hashlib.sha256(image).hexdigest() for image in request.images], "sample": request.sample,
            "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def ask_cached(client: JudgeClient, cache: JudgeCache, request: JudgeRequest, parse: Parse | None = None) -> dict:
    """One request through a client kept between calls (so its rate limit holds across them): the cached
    answer when there is one, else asked (parse retries included) and stored. Raises JudgeError when the
    call fails. For a caller that has one request at a time (the adjudicator inside an lmms-eval run)."""
    key = client.judge.cache_key(request)
    if key not in cache:
        cache.put(_ask(client, key, request, parse))
    return cache.answers[key]


def wait_all(futures: list, stop: threading.Event) -> list:
    """The futures' results in submission order; on the first error, stop the rest and raise it."""
    try:
        for future in as_completed(futures):
            future.result()
    except BaseException:
        stop.set()
        for future in futures:
            future.cancel()
        raise
    return [future.result() for future in futures]


def _ask_judge(client: JudgeClient, todo: list[tuple[str, JudgeRequest]], cache: JudgeCache, parse: Parse | None,
               stop: threading.Event, on_call: OnCall | None) -> int:
    """Ask one judge the requests in `todo`, storing each answer as it arrives; returns the calls made."""
    made = 0
    made_lock = threading.Lock()

    def ask(key: str, request: JudgeRequest) -> None:
        nonlocal made
        if stop.is_set():
            return
        try:
            cache.put(_ask(client, key, request, parse))
            with made_lock:
                made += 1
            if on_call is not None:
                on_call(client.judge.name, key)
        except BaseException:
            stop.set()  # here, not only in the caller: a free worker would otherwise start the next call first
            raise

    with ThreadPoolExecutor(max_workers=client.judge.concurrency, thread_name_prefix=f"judge-{client.judge.name}") as pool:
        wait_all([pool.submit(ask, key, request) for key, request in todo], stop)
    return made


@dataclass(frozen=True)
class JudgeRun:
    cache: JudgeCache  # every answer by key, from earlier runs and this one
    keys: list[str]  # the cache key of each request, in the order given
    distinct: int  # distinct requests
    cached: int  # of those, answered before this run
    made: int  # calls made now


Work = Sequence[tuple[JudgeConfig, Sequence[JudgeRequest]]]  # each judge with the requests it is asked


def run_judges(work: Work, cache_dir: Path | str, *, parse: Parse | None = None,
               on_call: OnCall | None = None) -> dict[str, JudgeRun]:
    """Ask every judge its requests (cached answers are not asked again); by judge name. Every judge with
    calls to make has its key read before the first call."""
    caches = {judge.name: cache_for(judge, cache_dir) for judge, _ in work}
    keys = {judge.name: [judge.cache_key(request) for request in requests] for judge, requests in work}
    todo = {}
    for judge, requests in work:
        distinct = dict(zip(keys[judge.name], requests))
        todo[judge.name] = [(key, request) for key, request in distinct.items() if key not in caches[judge.name]]
    clients = {judge.name: JudgeClient(judge) for judge, _ in work if todo[judge.name]}
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=max(1, len(clients)), thread_name_prefix="judges") as pool:
        made = dict(zip(clients, wait_all([pool.submit(_ask_judge, client, todo[name], caches[name], parse, stop,
                                                        on_call) for name, client in clients.items()], stop)))
    return {judge.name: JudgeRun(caches[judge.name], keys[judge.name], len(set(keys[judge.name])),
                                 len(set(keys[judge.name])) - len(todo[judge.name]), made.get(judge.name, 0))
            for judge, _ in work}


def _image_tokens(image: bytes) -> int:
    from PIL import Image

    width, height = Image.open(io.BytesIO(image)).size
    return min(MAX_IMAGE_TOKENS, math.ceil(width * height / PIXELS_PER_IMAGE_TOKEN))


@dataclass(frozen=True)
class CallEstimate:
    judge: str
    requests: int  # distinct requests
    cached: int
    calls: int  # calls still to make
    input_tokens: int  # estimated, of the calls to make
    output_tokens: int  # upper bound: max_tokens per call
    usd: float | None  # None when the judge has no prices configured

    def line(self) -> str:
        cost = "no prices configured" if self.usd is None else f"about ${self.usd:,.2f}"
        return (f"{self.judge}: {self.calls} call(s) to make ({self.cached} of {self.requests} cached), "
                f"~{self.input_tokens:,} input and <= {self.output_tokens:,} output tokens, {cost}")


def estimate_calls(work: Work, cache_dir: Path | str) -> list[CallEstimate]:
    """What run_judges would ask now, per judge, with an estimate of tokens and cost; makes no call.
    Input tokens: characters / 4 plus width x height / 750 per image (at most 1,600); output: max_tokens (or
    params.max_completion_tokens)."""
    estimates = []
    for judge, requests in work:
        cache = cache_for(judge, cache_dir)
        distinct = {judge.cache_key(request): request for request in requests}
        todo = [request for key, request in distinct.items() if key not in cache]
        input_tokens = sum(math.ceil(len((r.system or "") + r.prompt) / CHARS_PER_TOKEN)
                           + sum(_image_tokens(image) for image in r.images) for r in todo)
        # GPT-5 models take their limit as params.max_completion_tokens instead of max_tokens
        output_tokens = len(todo) * (judge.max_tokens or judge.params.get("max_completion_tokens") or 0)
        priced = judge.price_input_per_mtok is not None and judge.price_output_per_mtok is not None
        usd = (input_tokens * judge.price_input_per_mtok + output_tokens * judge.price_output_per_mtok) / 1e6 \
            if priced else None
        estimates.append(CallEstimate(judge.name, len(distinct), len(distinct) - len(todo), len(todo), input_tokens,
                                      output_tokens, usd))
    return estimates
