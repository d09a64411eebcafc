"""Judge configuration: which LLM endpoint answers, with which settings, within which limits.

Judges (YAML, `load_judges`; model_configs/judges.example.yaml):

    judges:
      - name: gpt-5.4                 # label in tables and the cache file name
        provider: openai              # openai (any OpenAI-compatible endpoint) | anthropic
        model: gpt-5.4                # the model id sent to the endpoint
        base_url: https://...         # optional: the endpoint (default: the provider's)
        api_key_env: OPENAI_API_KEY   # name of the environment variable holding the key; null: no key
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
        parse_retries: 2              # asks again when the answer does not parse as the use expects
        price_input_per_mtok: null    # USD per million input / output tokens: the dry run's cost estimate
        price_output_per_mtok: null

A use that needs other generation settings (the error-taxonomy judge: max_tokens 200) takes the judge with
`dataclasses.replace`; the settings are part of every cache key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

PROVIDERS = ("openai", "anthropic")


class JudgeConfigError(ValueError):
    """An invalid judges file or a missing key variable; the message names the file, judge and field."""


class JudgeError(RuntimeError):
    """A judge call that failed for good; completed calls stay cached, so a rerun resumes."""


@dataclass(frozen=True)
class JudgeRequest:
    """What a judge is asked: a text prompt, optionally with images (PNG/JPEG bytes) shown before it and a
    system prompt. `sample` numbers independent answers to the same request (at temperature > 0 each is a
    fresh draw): each sample is a call and a cache entry of its own; sample 0 is the plain request."""
    prompt: str
    images: tuple[bytes, ...] = ()
    system: str | None = None
    sample: int = 0

    def __post_init__(self):
        if isinstance(self.sample, bool) or not isinstance(self.sample, int) or self.sample < 0:
            raise ValueError(f"a request's sample number must be a whole number >= 0, got {self.sample!r}")


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
    parse_retries: int = 2  # asks again when an answer does not parse (the caller's parser says so)
    price_input_per_mtok: float | None = None  # USD per million input tokens, for the dry run's estimate
    price_output_per_mtok: float | None = None  # USD per million output tokens

    def cache_key(self, request: JudgeRequest) -> str:
        """SHA-256 of everything that shapes the answer: provider, model, prompt, images, generation settings,
        and the sample number when it is not 0 (so keys of plain requests stay what they were)."""
        settings = {"provider": self.provider, "model": self.model, "prompt": request.prompt,
                    "images": [hashlib.sha256(image).hexdigest() for image in request.images],
                    "system": request.system, "temperature": self.temperature, "max_tokens": self.max_tokens,
                    "params": dict(self.params)}
        if request.sample:
            settings["sample"] = request.sample
        return hashlib.sha256(json.dumps(settings, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


_REQUIRED = ("name", "provider", "model")
_POSITIVE = ("requests_per_second", "concurrency", "timeout_s", "backoff_max_s")
_NON_NEGATIVE = ("max_retries", "backoff_s", "parse_retries", "price_input_per_mtok", "price_output_per_mtok")
_WHOLE = ("max_retries", "concurrency", "parse_retries")
_NULLABLE = ("price_input_per_mtok", "price_output_per_mtok")


def check_number(entry: Mapping, name: str, where: str, error: type[Exception], *, positive: bool,
                 whole: bool = False, nullable: bool = False) -> None:
    """The numeric field `name` of a config entry: positive or non-negative, whole if asked, None if nullable."""
    value = entry[name]
    if value is None and nullable:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (positive and value == 0):
        raise error(f"{where}: field '{name}' must be a {'positive' if positive else 'non-negative'}"
                    f"{' whole' if whole else ''} number, got {value!r}")
    if whole and value != int(value):
        raise error(f"{where}: field '{name}' must be a whole number, got {value!r}")


def entry_where(entry: Any, index: int, source: str, key: str, label: str, config_type: type,
                required: tuple[str, ...], error: type[Exception]) -> str:
    """Where a config entry (item `index` of the list `key` in `source`) is, for messages, once it is checked to
    be a mapping of `config_type`'s fields with the `required` ones non-empty strings."""
    if not isinstance(entry, Mapping):
        raise error(f"{source}: {key}[{index}] must be a mapping")
    where = f"{source}: {label} '{entry.get('name', index)}'"
    allowed = {f.name for f in fields(config_type)}
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise error(f"{where}: unknown field '{unknown[0]}' (allowed: {', '.join(sorted(allowed))})")
    for name in required:
        if not isinstance(entry.get(name), str) or not entry[name].strip():
            raise error(f"{where}: field '{name}' must be a non-empty string")
    return where


def _judge_from_entry(entry: Any, index: int, source: str) -> JudgeConfig:
    where = entry_where(entry, index, source, "judges", "judge", JudgeConfig, _REQUIRED, JudgeConfigError)
    if entry["provider"] not in PROVIDERS:
        raise JudgeConfigError(f"{where}: field 'provider' is {entry['provider']!r}, not one of {PROVIDERS}")
    if not re.fullmatch(r"[\w.@-]+", entry["name"]):
        raise JudgeConfigError(f"{where}: field 'name' may hold only letters, digits and . _ - @ (it names a file)")
    for name in (n for n in (*_POSITIVE, *_NON_NEGATIVE) if n in entry):
        check_number(entry, name, where, JudgeConfigError, positive=name in _POSITIVE, whole=name in _WHOLE,
                     nullable=name in _NULLABLE)
    if "temperature" in entry:
        check_number(entry, "temperature", where, JudgeConfigError, positive=False, nullable=True)
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


def load_named_entries(path: str | Path, key: str, from_entry: Callable[[Any, int, str], Any],
                       error: type[Exception]) -> list:
    """The entries of a YAML file's non-empty list `key`, each made by from_entry(entry, index, path), their
    `name`s unique; `error` names the file when any of that fails. Judges and cait-build's generators."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as problem:
        raise error(f"{path}: not valid YAML: {problem}") from None
    entries = data.get(key) if isinstance(data, Mapping) else None
    if not isinstance(entries, list) or not entries:
        raise error(f"{path}: expected a mapping with a non-empty list '{key}'")
    made = [from_entry(entry, i, str(path)) for i, entry in enumerate(entries)]
    names = [entry.name for entry in made]
    if len(set(names)) < len(names):
        raise error(f"{path}: names in '{key}' must be unique, got {names}")
    return made


def load_judges(path: str | Path) -> list[JudgeConfig]:
    """The judges of a YAML file (schema in the module docstring), validated."""
    return load_named_entries(path, "judges", _judge_from_entry, JudgeConfigError)


def choose_judges(path: str | Path, names: Sequence[str] = (), *, named_by: str = "") -> list[JudgeConfig]:
    """The judges of a judges file with these names, in the file's order; every judge when `names` is empty
    (a use that asks one judge takes the first). `named_by` says where the names came from, for the message
    when one is not in the file."""
    judges = load_judges(path)
    unknown = sorted(set(names) - {judge.name for judge in judges})
    if unknown:
        raise JudgeConfigError(f"{path}: no judge named {unknown[0]!r}{f' ({named_by})' if named_by else ''}; "
                               f"judges: {[judge.name for judge in judges]}")
    return [judge for judge in judges if not names or judge.name in names]


