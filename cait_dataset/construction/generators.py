"""Image generators for CAIT construction (Section 3.2 step 4, Table 22), one interface, three kinds:

  openai     an OpenAI-compatible images endpoint (POST /v1/images/generations) through the official
             openai client: OpenAI's gpt-image / dall-e models, or any server speaking the same API
  gemini     Google's Gemini image models (the paper: gemini-2.5-flash-image, temperature 0.7) through
             the official client google-genai
  diffusers  a local diffusers text-to-image pipeline (a folder or hub id DiffusionPipeline loads)

Generators (YAML, `load_generators`; model_configs/cait_build.example.yaml), beside the LLM judges:

    generators:
      - name: gemini-flash-image    # label in images.jsonl and the CAIT records
        kind: gemini                # openai | gemini | diffusers
        model: gemini-2.5-flash-image
        base_url: null              # optional endpoint (default: the provider's)
        api_key_env: GEMINI_API_KEY # variable holding the key; null: no key (local servers, diffusers)
        size: 512                   # pixels per side: asked of the endpoint, and Table 22's "Image size"
        prompt: table22             # table22: Table 22's template around the description; description: the
                                    #   description alone (for pipelines whose text encoder reads 77 tokens)
        temperature: 0.7            # gemini only (null: not sent)
        params: {}                  # extra request fields (openai: quality, output_format...; gemini:
                                    #   GenerateContentConfig fields such as image_config; diffusers: call kwargs)
        requests_per_second: 1      # rate limit
        max_retries: 5              # retries on 408/409/429/5xx and connection errors
        concurrency: 2              # images in flight (diffusers: always 1)
        timeout_s: 120
        backoff_s: 2
        backoff_max_s: 60
        price_per_image: 0.039      # USD, for the dry run's cost (null: unknown)
        seed: 0                     # diffusers: torch seed of candidate 0 (candidate c uses seed + c)
        steps: 30                   # diffusers: inference steps
        guidance_scale: 7.5         # diffusers
        device: null                # diffusers: torch device (default: cuda when available)
        dtype: float32              # diffusers: float32 | float16 | bfloat16

A refusal (the provider's safety system declines the prompt: openai's content_policy_violation or
moderation_blocked, a Gemini answer without an image) is an outcome, not an error: it is recorded and
counted. The clients are imported when a generator is opened.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from invscale.judges.client import RateLimiter, call_with_retries, read_api_key, scrub_key
from invscale.judges.config import check_number, entry_where, load_named_entries

from . import prompts
from .files import BuildError

KINDS = ("openai", "gemini", "diffusers")
PROMPT_FORMS = ("table22", "description")
DTYPES = ("float32", "float16", "bfloat16")
REFUSAL_CODES = frozenset({"content_policy_violation", "moderation_blocked"})  # openai images API error codes


@dataclass(frozen=True)
class GeneratorConfig:
    name: str
    kind: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    size: int = prompts.IMAGE_SIZE
    prompt: str = "table22"
    temperature: float | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    requests_per_second: float = 1.0
    max_retries: int = 5
    concurrency: int = 2
    timeout_s: float = 120.0
    backoff_s: float = 2.0
    backoff_max_s: float = 60.0
    price_per_image: float | None = None
    seed: int = 0
    steps: int = 30
    guidance_scale: float = 7.5
    device: str | None = None
    dtype: str = "float32"

    @property
    def label(self) -> str:
        """The CAIT record's `generator` field."""
        return f"{self.kind}:{self.model}"

    def prompt_for(self, description: str) -> str:
        return prompts.image_prompt(description, self.size) if self.prompt == "table22" else description.strip()

    def cache_key(self, prompt: str, candidate: int) -> str:
        """SHA-256 of what shapes the image: kind, model, size, prompt, settings, candidate number."""
        settings = {"kind": self.kind, "model": self.model, "size": self.size, "prompt": prompt,
                    "temperature": self.temperature, "params": dict(self.params), "candidate": candidate}
        if self.kind == "diffusers":
            settings.update(seed=self.seed, steps=self.steps, guidance_scale=self.guidance_scale, dtype=self.dtype)
        return hashlib.sha256(json.dumps(settings, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


_REQUIRED = ("name", "kind", "model")
_POSITIVE = ("size", "requests_per_second", "concurrency", "timeout_s", "backoff_max_s", "steps")
_NON_NEGATIVE = ("max_retries", "backoff_s", "price_per_image", "seed", "guidance_scale", "temperature")
_WHOLE = ("size", "max_retries", "concurrency", "seed", "steps")
_NULLABLE = ("price_per_image", "temperature")


def _generator_from_entry(entry: Any, index: int, source: str) -> GeneratorConfig:
    where = entry_where(entry, index, source, "generators", "generator", GeneratorConfig, _REQUIRED, BuildError)
    for name, allowed_values in (("kind", KINDS), ("prompt", PROMPT_FORMS), ("dtype", DTYPES)):
        if name in entry and entry[name] not in allowed_values:
            raise BuildError(f"{where}: field '{name}' is {entry[name]!r}, not one of {allowed_values}")
    for name in (n for n in (*_POSITIVE, *_NON_NEGATIVE) if n in entry):
        check_number(entry, name, where, BuildError, positive=name in _POSITIVE, whole=name in _WHOLE,
                     nullable=name in _NULLABLE)
    for name in ("base_url", "api_key_env", "device"):
        if entry.get(name) is not None and not isinstance(entry[name], str):
            raise BuildError(f"{where}: field '{name}' must be a string or null")
    if not isinstance(entry.get("params") or {}, Mapping):
        raise BuildError(f"{where}: field 'params' must be a mapping")
    if entry.get("temperature") is not None and entry["kind"] != "gemini":
        raise BuildError(f"{where}: field 'temperature' is sent to gemini generators only (the openai images "
                         "API and diffusers pipelines take none)")
    values = {k: int(v) if k in _WHOLE else v for k, v in entry.items()}
    return GeneratorConfig(**{**values, "params": dict(entry.get("params") or {})})


def load_generators(path: str | Path) -> list[GeneratorConfig]:
    """The generators of a YAML file's `generators` list (schema in the module docstring), validated."""
    return load_named_entries(path, "generators", _generator_from_entry, BuildError)


# ---------------------------------------------------------------------------------------------- generating
@dataclass(frozen=True)
class Generated:
    png: bytes | None  # the image as PNG; None when refused
    refused: str | None  # the provider's reason, when it declined
    attempts: int
    truncated_tokens: int = 0  # prompt tokens a local pipeline's text encoder could not read


def as_png(data: bytes, where: str) -> bytes:
    """PNG bytes of an image file's bytes (PNG passes through)."""
    if data.startswith(b"\x89PNG"):
        return data
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            buffer = io.BytesIO()
            image.convert("RGB").save(buffer, format="PNG")
    except (UnidentifiedImageError, OSError):
        raise BuildError(f"{where}: the answer's image data is not an image") from None
    return buffer.getvalue()


class ImageGenerator:
    """One generator's endpoint or pipeline, with our retries and rate limit."""

    def __init__(self, config: GeneratorConfig):
        self.config = config
        self._limiter = RateLimiter(config.requests_per_second)
        self._key = read_api_key(f"generator '{config.name}'", config.api_key_env, BuildError)

    def scrub(self, text: str) -> str:
        return scrub_key(text, self._key)

    @property
    def concurrency(self) -> int:
        return self.config.concurrency

    def generate(self, prompt: str, candidate: int) -> Generated:
        raise NotImplementedError


class OpenAIImages(ImageGenerator):
    def __init__(self, config: GeneratorConfig):
        import openai

        super().__init__(config)
        self._openai = openai
        self._client = openai.OpenAI(api_key=self._key, base_url=config.base_url, max_retries=0,
                                     timeout=config.timeout_s)

    def _call(self, prompt: str) -> tuple[bytes | None, str | None]:
        config = self.config
        try:
            answer = self._client.images.generate(model=config.model, prompt=prompt, n=1,
                                                  size=f"{config.size}x{config.size}", **config.params)
        except self._openai.BadRequestError as error:
            if getattr(error, "code", None) in REFUSAL_CODES:
                return None, f"{error.code}: {self.scrub(str(error))[:200]}"
            raise
        image = answer.data[0] if answer.data else None
        if image is not None and image.b64_json:
            return base64.b64decode(image.b64_json), None
        if image is not None and image.url:
            import httpx

            response = httpx.get(image.url, timeout=config.timeout_s)
            response.raise_for_status()
            return response.content, None
        raise BuildError(f"generator '{config.name}': the images endpoint answered without an image")

    def generate(self, prompt: str, candidate: int) -> Generated:
        (data, refused), attempts = call_with_retries(
            lambda: self._call(prompt), what=f"generator '{self.config.name}'", settings=self.config,
            limiter=self._limiter, errors=(self._openai.APIError,),
            connection_errors=(self._openai.APIConnectionError,), scrub=self.scrub)
        png = None if data is None else as_png(data, f"generator '{self.config.name}'")
        return Generated(png, refused, attempts)


class GeminiImages(ImageGenerator):
    def __init__(self, config: GeneratorConfig):
        import httpx
        from google import genai
        from google.genai import errors, types

        super().__init__(config)
        self._types, self._errors, self._httpx = types, errors, httpx
        options = types.HttpOptions(base_url=config.base_url, timeout=int(config.timeout_s * 1000),
                                    retry_options=types.HttpRetryOptions(attempts=1))  # we retry, not the client
        self._client = genai.Client(api_key=self._key, http_options=options)

    def _call(self, prompt: str) -> tuple[bytes | None, str | None]:
        settings = {"response_modalities": ["IMAGE"], **self.config.params}
        if self.config.temperature is not None:
            settings["temperature"] = self.config.temperature
        response = self._client.models.generate_content(model=self.config.model, contents=prompt,
                                                        config=self._types.GenerateContentConfig(**settings))
        for candidate in response.candidates or []:
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.inline_data is not None and part.inline_data.data:
                    return part.inline_data.data, None
        feedback = response.prompt_feedback
        reasons = [str(c.finish_reason) for c in response.candidates or [] if c.finish_reason]
        if feedback is not None and feedback.block_reason:
            reasons.insert(0, f"prompt blocked: {feedback.block_reason}")
        return None, "no image in the answer" + (f" ({'; '.join(reasons)})" if reasons else "")

    def generate(self, prompt: str, candidate: int) -> Generated:
        (data, refused), attempts = call_with_retries(
            lambda: self._call(prompt), what=f"generator '{self.config.name}'", settings=self.config,
            limiter=self._limiter, errors=(self._errors.APIError, self._httpx.TransportError),
            connection_errors=(self._httpx.TransportError,), status_of=lambda error: getattr(error, "code", None),
            scrub=self.scrub)
        png = None if data is None else as_png(data, f"generator '{self.config.name}'")
        return Generated(png, refused, attempts)


class DiffusersPipeline(ImageGenerator):
    """A local pipeline: loaded once, one image at a time, seeded per candidate."""

    def __init__(self, config: GeneratorConfig):
        import torch
        from diffusers import DiffusionPipeline

        super().__init__(config)
        self._torch = torch
        self.device = config.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.pipeline = DiffusionPipeline.from_pretrained(config.model, dtype=getattr(torch, config.dtype))
        self.pipeline.to(self.device)
        self.pipeline.set_progress_bar_config(disable=True)

    @property
    def concurrency(self) -> int:
        return 1

    def _truncated(self, prompt: str) -> int:
        tokenizer = getattr(self.pipeline, "tokenizer", None)
        if tokenizer is None:
            return 0
        return max(0, len(tokenizer(prompt, truncation=False, verbose=False).input_ids) - tokenizer.model_max_length)

    def generate(self, prompt: str, candidate: int) -> Generated:
        config = self.config
        generator = self._torch.Generator(device="cpu").manual_seed(config.seed + candidate)
        image = self.pipeline(prompt=prompt, height=config.size, width=config.size, num_inference_steps=config.steps,
                              guidance_scale=config.guidance_scale, generator=generator, **config.params).images[0]
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return Generated(buffer.getvalue(), None, 1, self._truncated(prompt))


def open_generator(config: GeneratorConfig) -> ImageGenerator:
    return {"openai": OpenAIImages, "gemini": GeminiImages, "diffusers": DiffusersPipeline}[config.kind](config)
