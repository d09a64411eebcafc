"""CAIT LLM re-evaluation ("Seeing vs. Believing", Section 4.2 "LLM-re-eval", Tables 3-4).

For every judge and every (model, scene) with a `cait_describe` record, the judge answers the CAIT
question (the two options in the scene's direct-order A/B) from the model's description alone; once per
judge and scene it answers from the scene's `gt_prompt` (the text the image was generated from: the
upper bound). Reasoning blocks (<think>...</think>) are removed from descriptions first, so the judge
reads what the model concluded it saw. The judge's answer is parsed with the project's extraction
(extract_choice); an unparsable answer counts as wrong and is reported (status "unparsed"), never
guessed. An empty description is counted wrong without a call (status "empty_description").

Judges (YAML, `load_judges`):

    judges:
      - name: gemini-2.5-pro          # label in tables and the cache file name
        provider: openai              # openai (any OpenAI-compatible endpoint) | anthropic
        model: gemini-2.5-pro         # the model id sent to the endpoint
        base_url: https://...         # optional: the endpoint (default: the provider's)
        api_key_env: GEMINI_API_KEY   # name of the environment variable holding the key; null: no key
                                      # (local servers). Keys are read from the environment only and are
                                      # never logged or written.
        requests_per_second: 1        # rate limit: at most this many request starts per second
        max_retries: 5                # retries on 408/409/429/5xx and connection errors
        concurrency: 4                # requests in flight at once
        temperature: 0                # null: not sent (models that reject it)
        max_tokens: 16                # null: not sent (openai only; anthropic requires it)
        params: {}                    # extra request-body fields, e.g. {reasoning_effort: low}
        timeout_s: 60                 # per request
        backoff_s: 1                  # first retry wait, doubled each retry (a Retry-After header wins)
        backoff_max_s: 60             # longest wait

Calls: the clients are created with max_retries=0 and retried here with exponential backoff, so the
behaviour is the same for both providers and testable. Each judge's completed calls are appended to
`<cache_dir>/<judge name>.jsonl` (one JSON object a line, flushed and fsynced per call) keyed by the
SHA-256 of provider, model, prompt and the generation settings (temperature, max_tokens, params): a
rerun makes no call for a cached item, and a run killed midway resumes with the calls it had not made.
A line cut short by a kill is ignored (that call is made again).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anthropic
import openai
import pandas as pd
import yaml

from lmms_eval_tasks.extraction import extract_choice, strip_reasoning
from postprocess.cait import REEVAL_ITEM_COLUMNS, cait_rows, reeval_by_judge, reeval_mean, reeval_scores

log = logging.getLogger(__name__)

# The paper does not print its re-evaluation prompt; ours wraps the CAIT question (Table 13) around the text.
JUDGE_PROMPT = (
    "Description of an image:\n{description}\n\n"
    "Which of the following option better describes the image?\n"
    "Option A: {option_a}\n"
    "Option B: {option_b}\n"
    "Important Note: Answer directly with the option letter (A or B) only."
)
PROVIDERS = ("openai", "anthropic")
NO_KEY = "EMPTY"  # sent to servers that need no key (vLLM's convention)
RETRY_STATUSES = frozenset({408, 409, 429})  # and every 5xx


class JudgeConfigError(ValueError):
    """An invalid judges file or a missing key variable; the message names the file, judge and field."""


class JudgeError(RuntimeError):
    """A judge call that failed for good; completed calls stay cached, so a rerun resumes."""


@dataclass(frozen=True)
class JudgeConfig:
    name: str
    provider: str
    model: str
    api_key_env: str | None = None
    base_url: str | None = None
    requests_per_second: float = 1.0
    max_retries: int = 5
    concurrency: int = 4
    temperature: float | None = 0.0
    max_tokens: int | None = 16
    params: Mapping[str, Any] = field(default_factory=dict)
    timeout_s: float = 60.0
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0

    def cache_key(self, prompt: str) -> str:
        settings = {"provider": self.provider, "model": self.model, "prompt": prompt,
                    "temperature": self.temperature, "max_tokens": self.max_tokens, "params": dict(self.params)}
        return hashlib.sha256(json.dumps(settings, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


_REQUIRED = ("name", "provider", "model")
_POSITIVE = ("requests_per_second", "concurrency", "timeout_s", "backoff_max_s")
_NON_NEGATIVE = ("max_retries", "backoff_s")
_WHOLE = ("max_retries", "concurrency")


def _check_number(entry: Mapping, name: str, where: str, positive: bool, nullable: bool = False) -> None:
    value = entry[name]
    if value is None and nullable:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (positive and value == 0):
        raise JudgeConfigError(f"{where}: field '{name}' must be a {'positive' if positive else 'non-negative'} "
                               f"number, got {value!r}")
    if name in _WHOLE and value != int(value):
        raise JudgeConfigError(f"{where}: field '{name}' must be a whole number, got {value!r}")


def _judge_from_entry(entry: Any, index: int, source: str) -> JudgeConfig:
    if not isinstance(entry, Mapping):
        raise JudgeConfigError(f"{source}: judges[{index}] must be a mapping")
    where = f"{source}: judge '{entry.get('name', index)}'"
    allowed = {f.name for f in fields(JudgeConfig)}
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise JudgeConfigError(f"{where}: unknown field '{unknown[0]}' (allowed: {', '.join(sorted(allowed))})")
    for name in _REQUIRED:
        if not isinstance(entry.get(name), str) or not entry[name].strip():
            raise JudgeConfigError(f"{where}: field '{name}' must be a non-empty string")
    if entry["provider"] not in PROVIDERS:
        raise JudgeConfigError(f"{where}: field 'provider' is {entry['provider']!r}, not one of {PROVIDERS}")
    if not re.fullmatch(r"[\w.@-]+", entry["name"]):
        raise JudgeConfigError(f"{where}: field 'name' may hold only letters, digits and . _ - @ (it names a file)")
    for name in (n for n in (*_POSITIVE, *_NON_NEGATIVE) if n in entry):
        _check_number(entry, name, where, positive=name in _POSITIVE)
    if "temperature" in entry:
        _check_number(entry, "temperature", where, positive=False, nullable=True)
    if entry.get("max_tokens") is not None and (isinstance(entry["max_tokens"], bool)
                                                or not isinstance(entry["max_tokens"], int) or entry["max_tokens"] < 1):
        raise JudgeConfigError(f"{where}: field 'max_tokens' must be a positive whole number or null")
    if entry.get("api_key_env") is not None and not isinstance(entry["api_key_env"], str):
        raise JudgeConfigError(f"{where}: field 'api_key_env' must name an environment variable")
    if entry["provider"] == "anthropic" and entry.get("max_tokens", 16) is None:
        raise JudgeConfigError(f"{where}: field 'max_tokens' is required by the anthropic API")
    if not isinstance(entry.get("params") or {}, Mapping):
        raise JudgeConfigError(f"{where}: field 'params' must be a mapping")
    values = {k: int(v) if k in _WHOLE else v for k, v in entry.items()}
    return JudgeConfig(**{**values, "params": dict(entry.get("params") or {})})


def load_judges(path: str | Path) -> list[JudgeConfig]:
    """The judges of a YAML file (schema in the module docstring), validated."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise JudgeConfigError(f"{path}: not valid YAML: {error}") from None
    entries = data.get("judges") if isinstance(data, Mapping) else None
    if not isinstance(entries, list) or not entries:
        raise JudgeConfigError(f"{path}: expected a mapping with a non-empty list 'judges'")
    judges = [_judge_from_entry(entry, i, str(path)) for i, entry in enumerate(entries)]
    names = [j.name for j in judges]
    if len(set(names)) < len(names):
        raise JudgeConfigError(f"{path}: judge names must be unique, got {names}")
    return judges


# ---------------------------------------------------------------------------------------------- cache
class JudgeCache:
    """The completed calls of one judge: an append-only JSONL, each line fsynced as it is written."""

    def __init__(self, path: Path):
        self.path = path
        self.answers: dict[str, dict] = {}
        self.ignored_lines = 0
        self._lock = threading.Lock()
        self._needs_newline = False
        if path.exists():
            text = path.read_text(encoding="utf-8")
            self._needs_newline = bool(text) and not text.endswith("\n")
            for line in text.splitlines():
                try:
                    record = json.loads(line)
                    self.answers[record["key"]] = record
                except (ValueError, KeyError, TypeError):
                    self.ignored_lines += 1  # a line cut short by a killed run: that call is made again

    def __contains__(self, key: str) -> bool:
        return key in self.answers

    def put(self, record: dict) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(("\n" if self._needs_newline else "") + line)
                handle.flush()
                os.fsync(handle.fileno())
            self._needs_newline = False
            self.answers[record["key"]] = record


# ---------------------------------------------------------------------------------------------- calls
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


CLIENT_ERRORS = (openai.APIError, anthropic.APIError)


def _retryable(error: Exception) -> bool:
    if isinstance(error, (openai.APIConnectionError, anthropic.APIConnectionError)):  # timeouts included
        return True
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and (status in RETRY_STATUSES or status >= 500)


def _retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


class JudgeClient:
    """One judge's endpoint: the official client (no retries of its own), our retries and rate limit."""

    def __init__(self, judge: JudgeConfig):
        self.judge = judge
        self._key = self._read_key()
        self._limiter = RateLimiter(judge.requests_per_second)
        if judge.provider == "openai":
            self._client = openai.OpenAI(api_key=self._key, base_url=judge.base_url, max_retries=0,
                                         timeout=judge.timeout_s)
        else:
            self._client = anthropic.Anthropic(api_key=self._key, base_url=judge.base_url, max_retries=0,
                                               timeout=judge.timeout_s)

    def _read_key(self) -> str:
        if self.judge.api_key_env is None:
            return NO_KEY
        key = os.environ.get(self.judge.api_key_env, "")
        if not key:
            raise JudgeConfigError(f"judge '{self.judge.name}': environment variable {self.judge.api_key_env} "
                                   "is not set (it must hold the API key)")
        return key

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "[key]") if self._key != NO_KEY else text

    def _request(self, prompt: str) -> tuple[str, str | None]:
        judge = self.judge
        options: dict[str, Any] = {"model": judge.model, "messages": [{"role": "user", "content": prompt}]}
        body = dict(judge.params)
        if judge.max_tokens is not None:
            options["max_tokens"] = judge.max_tokens
        if judge.provider == "openai":
            if judge.temperature is not None:
                options["temperature"] = judge.temperature
            choice = self._client.chat.completions.create(**options, extra_body=body or None).choices[0]
            return choice.message.content or "", choice.finish_reason
        if judge.temperature is not None:
            # anthropic>=1 dropped `temperature` from the method signature; the API still takes it in the body
            body["temperature"] = judge.temperature
        message = self._client.messages.create(**options, extra_body=body or None)
        return "".join(block.text for block in message.content if block.type == "text"), message.stop_reason

    def complete(self, prompt: str) -> tuple[str, str | None, int]:
        """(answer text, finish reason, attempts); retries retryable errors with exponential backoff."""
        judge = self.judge
        attempt = 0
        while True:
            self._limiter.wait()
            try:
                text, finish = self._request(prompt)
                return text, finish, attempt + 1
            except CLIENT_ERRORS as error:
                status = getattr(error, "status_code", None) or type(error).__name__
                if not _retryable(error) or attempt == judge.max_retries:
                    raise JudgeError(f"judge '{judge.name}': request failed ({status}) after {attempt + 1} "
                                     f"attempt(s): {self._scrub(str(error))[:300]}") from None
                delay = _retry_after(error)
                delay = min(judge.backoff_max_s, judge.backoff_s * 2**attempt if delay is None else delay)
                log.warning("judge '%s': %s, retry %d/%d in %.2f s", judge.name, status, attempt + 1,
                            judge.max_retries, delay)
                time.sleep(delay)
                attempt += 1


# ---------------------------------------------------------------------------------------------- items
def direct_options(right_option: str, uncommon_text: str, common_text: str) -> list[str]:
    """The two sentences in the scene's direct order: the right (uncommon) one at `right_option`."""
    return [uncommon_text, common_text] if right_option == "A" else [common_text, uncommon_text]


def reeval_questions(table: pd.DataFrame, include_gt_prompt: bool = True) -> pd.DataFrame:
    """What the judges are asked, judge-independent: one row per (model, scene) with a describe record
    (source "description") and, with include_gt_prompt, one per scene of those (source "gt_prompt",
    model None). Columns: model, scene, category, source, text, options, gold."""
    rows = cait_rows(table)
    described = rows[rows["variant"] == "describe"]
    if described.empty:
        raise ValueError("no cait_describe records: run the cait_describe task first (it writes the "
                         "descriptions the judges answer from)")
    lacking = described[described["right_option"].isna() | described["uncommon_text"].isna()
                        | described["common_text"].isna() | described["gt_prompt"].isna()]
    if not lacking.empty:
        first = lacking.iloc[0]
        raise ValueError(f"{len(lacking)} describe record(s) lack details.right_option/common_text/uncommon_text/"
                         f"gt_prompt, e.g. scene {first['scene']!r} of {first['model']} ({first['source_file']})")
    records = [{"model": r.model, "scene": r.scene, "category": r.category, "source": "description",
                "text": strip_reasoning(r.response),
                "options": direct_options(r.right_option, r.uncommon_text, r.common_text), "gold": r.right_option}
               for r in described.itertuples()]
    if include_gt_prompt:
        scenes = described.drop_duplicates("scene")
        records += [{"model": None, "scene": r.scene, "category": r.category, "source": "gt_prompt",
                     "text": r.gt_prompt.strip(),
                     "options": direct_options(r.right_option, r.uncommon_text, r.common_text),
                     "gold": r.right_option} for r in scenes.itertuples()]
    return pd.DataFrame(records, columns=["model", "scene", "category", "source", "text", "options", "gold"])


def judge_prompt(text: str, options: Sequence[str]) -> str:
    return JUDGE_PROMPT.format(description=text, option_a=options[0], option_b=options[1])


@dataclass
class ReevalResult:
    items: pd.DataFrame  # REEVAL_ITEM_COLUMNS, one row per judge x question
    scores: pd.DataFrame  # cait.reeval_scores(items)
    calls: pd.DataFrame  # per judge: questions, prompts (distinct), cached, made


def _judge_work(judge: JudgeConfig, questions: pd.DataFrame) -> list[str | None]:
    """The cache key of each question for this judge (None: empty description, no call)."""
    return [judge.cache_key(judge_prompt(text, options)) if text else None
            for text, options in zip(questions["text"], questions["options"])]


def pending_calls(table: pd.DataFrame, judges: Sequence[JudgeConfig], cache_dir: str | Path,
                  include_gt_prompt: bool = True) -> dict[str, int]:
    """Calls each judge would make now (distinct prompts not yet cached); makes none."""
    questions = reeval_questions(table, include_gt_prompt)
    pending = {}
    for judge in judges:
        cache = JudgeCache(Path(cache_dir) / f"{judge.name}.jsonl")
        pending[judge.name] = len({k for k in _judge_work(judge, questions) if k and k not in cache})
    return pending


def _ask_judge(client: JudgeClient, todo: list[tuple[str, str]], cache: JudgeCache, stop: threading.Event,
               on_call: Callable[[str, str], None] | None) -> int:
    """Ask one judge the prompts in `todo`, persisting each answer as soon as it arrives; returns the
    number of calls made. On any failure (here or in another judge) `stop` is set: no new call starts,
    the calls in flight finish and are kept, and the error is raised."""
    judge = client.judge
    made = 0
    made_lock = threading.Lock()

    def ask(key: str, prompt: str) -> None:
        nonlocal made
        if stop.is_set():
            return
        try:
            answer, finish, attempts = client.complete(prompt)
            cache.put({"key": key, "judge": judge.name, "provider": judge.provider, "model": judge.model,
                       "answer": answer, "finish_reason": finish, "attempts": attempts, "prompt": prompt,
                       "at": datetime.now(UTC).isoformat(timespec="seconds")})
            with made_lock:
                made += 1
            if on_call is not None:
                on_call(judge.name, key)
        except BaseException:
            stop.set()  # here, not only in the caller: a free worker would otherwise start the next call first
            raise

    with ThreadPoolExecutor(max_workers=judge.concurrency, thread_name_prefix=f"judge-{judge.name}") as pool:
        _wait_all([pool.submit(ask, key, prompt) for key, prompt in todo], stop)
    return made


def _wait_all(futures: list, stop: threading.Event) -> list:
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


def run_reeval(table: pd.DataFrame, judges: Sequence[JudgeConfig], cache_dir: str | Path, *,
               include_gt_prompt: bool = True, on_call: Callable[[str, str], None] | None = None) -> ReevalResult:
    """Ask every judge every re-evaluation question (cached calls are not repeated) and score the answers.

    Judges run side by side, each within its own rate limit and concurrency; every judge with calls to
    make has its key read before the first call. on_call(judge name, cache key) runs after each completed
    call is persisted (progress display; tests raise from it to simulate a crash)."""
    questions = reeval_questions(table, include_gt_prompt)
    caches = {judge.name: JudgeCache(Path(cache_dir) / f"{judge.name}.jsonl") for judge in judges}
    keys = {judge.name: _judge_work(judge, questions) for judge in judges}
    todo = {}
    for judge in judges:
        prompts = {key: judge_prompt(text, options)
                   for key, text, options in zip(keys[judge.name], questions["text"], questions["options"]) if key}
        todo[judge.name] = [(key, prompt) for key, prompt in prompts.items() if key not in caches[judge.name]]
    clients = {judge.name: JudgeClient(judge) for judge in judges if todo[judge.name]}
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=max(1, len(clients)), thread_name_prefix="judges") as pool:
        made = dict(zip(clients, _wait_all([pool.submit(_ask_judge, client, todo[name], caches[name], stop, on_call)
                                            for name, client in clients.items()], stop)))
    items, calls = [], []
    for judge in judges:
        cache, judge_keys = caches[judge.name], keys[judge.name]
        prompts = {key for key in judge_keys if key}
        calls.append({"judge": judge.name, "questions": len(questions), "prompts": len(prompts),
                      "cached": len(prompts) - len(todo[judge.name]), "made": made.get(judge.name, 0),
                      "ignored_cache_lines": cache.ignored_lines})
        for key, question in zip(judge_keys, questions.itertuples()):
            items.append({"judge": judge.name, "model": question.model, "scene": question.scene,
                          "category": question.category, "source": question.source, "gold": question.gold,
                          **_judged(cache.answers[key] if key else None, question.options, question.gold)})
    frame = pd.DataFrame(items, columns=REEVAL_ITEM_COLUMNS)
    return ReevalResult(items=frame, scores=reeval_scores(frame), calls=pd.DataFrame(calls))


def _judged(record: dict | None, options: list[str], gold: str) -> dict:
    if record is None:
        return {"answer": None, "finish_reason": None, "prediction": None, "correct": False,
                "status": "empty_description"}
    prediction = extract_choice(record["answer"], options).prediction
    return {"answer": record["answer"], "finish_reason": record.get("finish_reason"), "prediction": prediction,
            "correct": prediction == gold, "status": "answered" if prediction else "unparsed"}


# ---------------------------------------------------------------------------------------------- CLI
def add_reeval_subcommand(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`cait-reeval --judges judges.yaml --out OUT` (the log options are added by postprocess.cli)."""
    parser = subparsers.add_parser("cait-reeval", help="CAIT LLM re-evaluation: judges answer from the models' "
                                                       "descriptions (cait_describe runs)")
    parser.add_argument("--judges", required=True, type=Path, metavar="YAML",
                        help="judges file (see model_configs/judges.example.yaml)")
    parser.add_argument("--out", required=True, type=Path, metavar="OUT", help="output folder")
    parser.add_argument("--judge-cache", type=Path, help="judge answer cache (default: OUT/judge_cache)")
    parser.add_argument("--judge", nargs="+", default=[], metavar="NAME", help="only these judges of the file")
    parser.add_argument("--no-gt-prompt", action="store_true", help="skip the GT-prompt upper bound")
    parser.add_argument("--dry-run", action="store_true", help="print the calls each judge would make, make none")
    return parser


def write_reeval(result: ReevalResult, out: Path) -> dict[str, Path]:
    """OUT/cait_reeval_items.csv, cait_reeval_scores.csv, cait_reeval_calls.csv and cait_reeval.md."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / f"cait_reeval_{name}.csv" for name in ("items", "scores", "calls")}
    result.items.to_csv(paths["items"], index=False)
    result.scores.to_csv(paths["scores"], index=False)
    result.calls.to_csv(paths["calls"], index=False)
    paths["markdown"] = out / "cait_reeval.md"
    sections = [("Accuracy per judge (Table 4)", reeval_by_judge(result.scores, "accuracy")),
                ("Macro F1 per judge", reeval_by_judge(result.scores, "macro_f1")),
                ("Mean over judges (Table 3, LLM-re-Eval)", reeval_mean(result.scores))]
    text = "\n".join(f"**{title}**\n\n{frame.to_markdown(index=False, floatfmt='.3f')}\n" for title, frame in sections)
    paths["markdown"].write_text(text, encoding="utf-8")
    return paths


def _progress(pending: dict[str, int], every: int = 100) -> Callable[[str, str], None]:
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


def read_reeval_items(out: Path) -> pd.DataFrame:
    """The per-item frame a `cait-reeval` run wrote to OUT (for the report's CAIT section)."""
    path = Path(out) / "cait_reeval_items.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no cait-reeval output here (run `python -m postprocess cait-reeval` first)")
    return pd.read_csv(path, dtype={"answer": "string", "prediction": "string"})


def reeval_main(args: argparse.Namespace) -> int:
    from postprocess.cli import read_logs

    judges = load_judges(args.judges)
    if args.judge:
        unknown = sorted(set(args.judge) - {j.name for j in judges})
        if unknown:
            raise JudgeConfigError(f"{args.judges}: no judge named {unknown[0]!r}; judges: {[j.name for j in judges]}")
        judges = [j for j in judges if j.name in args.judge]
    _, ingested = read_logs(args)
    cache_dir = args.judge_cache or args.out / "judge_cache"
    if args.dry_run:
        for name, n in pending_calls(ingested.table, judges, cache_dir, not args.no_gt_prompt).items():
            print(f"{name}: {n} call(s) to make")
        return 0
    try:
        result = run_reeval(ingested.table, judges, cache_dir, include_gt_prompt=not args.no_gt_prompt,
                            on_call=_progress(pending_calls(ingested.table, judges, cache_dir, not args.no_gt_prompt)))
    except JudgeError as error:
        print(f"error: {error}\nCompleted calls are cached in {cache_dir}; rerun to continue.", file=sys.stderr)
        return 1
    paths = write_reeval(result, args.out)
    for call in result.calls.itertuples():
        print(f"{call.judge}: {call.prompts} prompts, {call.cached} cached, {call.made} asked")
    print(f"re-evaluation: {paths['markdown']}")
    return 0


__all__ = [
    "JUDGE_PROMPT", "JudgeCache", "JudgeClient", "JudgeConfig", "JudgeConfigError", "JudgeError", "RateLimiter",
    "ReevalResult", "add_reeval_subcommand", "direct_options", "judge_prompt", "load_judges", "pending_calls",
    "read_reeval_items", "reeval_main", "reeval_questions", "run_reeval", "write_reeval",
]
