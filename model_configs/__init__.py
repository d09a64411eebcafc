"""Model registry: which models exist, how they are grouped into families, and how log paths map to them.

`load_registry()` reads `models.yaml` beside this file (the 19 models of the inverse-scaling paper, in 4
families, plus the CAIT paper's Table 3 under `cait_models`). Extra YAML files of the same schema add
models, e.g. tiny models of a made-up family for demos and tests:

    registry = load_registry(extra=["tiny_models.yaml"])
    registry = registry.with_overrides({"/ckpt/run7/step-500": "Qwen3-VL-2B"})   # CLI --model-map PATH=KEY

Schema (YAML or `Registry.from_dict`):

    families: [<family name>, ...]            # declared order = order in reports
    models:                                   # each a mapping:
      - key, hf_id, family, size, total_params, active_params, moe     # required
        aliases, vision_encoder, encoder_params, encoder_tier, lmms_eval_model, launch   # optional
    cait_models:                              # optional; name and group required
      - name, group, params, total_params, active_params, hf_id, hf_id_inferred, registry_key, launch

Launch settings (`launch`, a mapping; how `python -m launch` runs the model; models without it can be
ingested but not launched):

    backend               required; the lmms-eval --model wrapper, a key of BACKENDS (built-in wrappers,
                          the project's `molmo2`, or `vllm`)
    gpus                  required; GPUs one copy of the model needs. HF wrappers: 1 (accelerate puts one
                          copy on each GPU of the node: data parallel). vllm: equal to tensor_parallel_size
    tensor_parallel_size  default 1; must divide gpus; vllm's tensor parallel width (one process over gpus)
    dtype                 default bfloat16; passed to wrappers that take it (vllm, llama_vision, molmo2),
                          checked against those that always load bfloat16 (qwen3_vl, gemma3, internvl3_5, ...)
    max_pixels            default null (the wrapper's own); per-image pixel budget, passed as the wrapper's
                          max_pixels or, for vllm, inside mm_processor_kwargs (Qwen-style processors)
    batch_size            default 1; lmms-eval --batch_size (requests per generate call)
    model_args            default {}; a mapping or a "k=v,k=v" string added to --model_args; mapping
                          values become JSON (vllm parses {...} strings into dicts)
    max_new_tokens        default null (the task's budget: 2,048 direct, 4,096 CoT/structured); the model's
                          generation budget for every task, passed as --gen_kwargs max_new_tokens=N (thinking
                          models, whose reasoning precedes the answer)

`LaunchSpec.model_args_for(hf_id)` renders the whole --model_args string. Validation names the model
and the field for: an unknown backend or launch field, a non-positive count, a tensor_parallel_size
that does not divide gpus, a GPU layout the backend cannot run (HF wrappers: gpus 1; vllm: gpus ==
tensor_parallel_size), a dtype the wrapper cannot load, max_pixels on a backend without a pixel budget,
a batch_size above the wrapper's limit, a model_args key that another field sets (the checkpoint,
batch_size, tensor_parallel_size, dtype, max_pixels), a string value with a comma outside braces (it
would split the CLI argument), and a backend that is neither the model's lmms_eval_model nor vllm.
A CAIT entry with `registry_key` launches as that registry model and may not carry its own settings.

Validation on load raises RegistryError naming the file, the model and the field, for: a missing
required field, an unknown field, a wrong type, a non-positive parameter count, active_params >
total_params, `moe` not equal to (active_params < total_params), a family not declared under
`families`, and two models sharing a key, an id (hf_id or alias) or a repo name (an id's part after
"org/"), all compared case-insensitively. Parameter counts may be written as integers
(30_000_000_000), integral floats, or strings such as "30e9".

Matching a model path (`Registry.resolve`), case-insensitive, first hit wins:
  1. overrides: an override name equal to the whole path or to its last path component;
  2. the whole path equal to a model's key, hf_id or alias;
  3. a HuggingFace cache folder in the path (".../models--Org--Name/snapshots/<sha>") read as "Org/Name";
  4. the last path component equal to a key or to the repo name of the hf_id or an alias.
Trailing slashes are ignored. No hit -> None.

Family order: by total_params, then active_params, then key; `family_rank` 1 is the smallest model.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

DEFAULT_REGISTRY_PATH = Path(__file__).with_name("models.yaml")

_REQUIRED_MODEL_FIELDS = ("key", "hf_id", "family", "size", "total_params", "active_params", "moe")
_OPTIONAL_MODEL_FIELDS = ("aliases", "vision_encoder", "encoder_params", "encoder_tier", "lmms_eval_model", "launch")
_CAIT_FIELDS = ("name", "group", "params", "total_params", "active_params", "hf_id", "hf_id_inferred", "registry_key",
                "aliases")
_LAUNCH_FIELDS = ("backend", "gpus", "tensor_parallel_size", "dtype", "max_pixels", "batch_size", "model_args",
                  "max_new_tokens")
CAIT_GROUPS = ("proprietary", "open_instruct", "open_thinking")
_HF_CACHE_DIR = re.compile(r"^models--([^/]+?)--(.+)$")


class RegistryError(ValueError):
    """An invalid registry entry or override; the message names the source, the model and the field."""


@dataclass(frozen=True)
class Backend:
    """How the launcher drives one lmms-eval --model wrapper (read from the wrapper's source in lmms-eval 0.7.3)."""
    weights_arg: str            # the model_args key naming the checkpoint
    tensor_parallel: bool       # True: one process over all the model's GPUs; False: one copy per GPU (accelerate)
    dtype_arg: str | None       # the model_args key taking the dtype; None: the wrapper always loads bfloat16
    max_pixels_arg: str | None  # "max_pixels" (a wrapper argument), "mm_processor_kwargs" (vLLM), None: no budget
    max_batch_size: int | None = None
    built_in: bool = True       # False: the project's own wrapper (lmms_eval_models, entry point)


WRAPPER_DTYPE = "bfloat16"
DTYPES = ("bfloat16", "float16", "float32")
BACKENDS: dict[str, Backend] = {
    "qwen3_vl": Backend("pretrained", tensor_parallel=False, dtype_arg=None, max_pixels_arg="max_pixels"),
    "qwen2_5_vl": Backend("pretrained", tensor_parallel=False, dtype_arg=None, max_pixels_arg="max_pixels"),
    # Gemma 3's image processor resizes every image to its fixed SigLIP size (and has no max_pixels setting)
    "gemma3": Backend("pretrained", tensor_parallel=False, dtype_arg=None, max_pixels_arg=None),
    # InternVL's remote code tiles images (model_args max_num) and asserts batch size 1
    "internvl3_5": Backend("pretrained", tensor_parallel=False, dtype_arg=None, max_pixels_arg=None, max_batch_size=1),
    "llama_vision": Backend("pretrained", tensor_parallel=False, dtype_arg="dtype", max_pixels_arg=None),
    "molmo2": Backend("pretrained", tensor_parallel=False, dtype_arg="dtype", max_pixels_arg=None, built_in=False),
    # internvl_hf with InternVL3.5's thinking switch (lmms_eval_models/internvl_thinking.py); -HF checkpoints
    "internvl_thinking": Backend("pretrained", tensor_parallel=False, dtype_arg=None, max_pixels_arg=None,
                                 max_batch_size=1, built_in=False),
    "vllm": Backend("model", tensor_parallel=True, dtype_arg="dtype", max_pixels_arg="mm_processor_kwargs"),
}


@dataclass(frozen=True)
class LaunchSpec:
    """A model's launch settings (schema in the module docstring); model_args are rendered "k=v" values."""
    backend: str
    gpus: int
    tensor_parallel_size: int = 1
    dtype: str = WRAPPER_DTYPE
    max_pixels: int | None = None
    batch_size: int = 1
    model_args: tuple[tuple[str, str], ...] = ()
    max_new_tokens: int | None = None

    @property
    def gen_kwargs(self) -> str | None:
        """The --gen_kwargs the model runs with (None: the task's own)."""
        return None if self.max_new_tokens is None else f"max_new_tokens={self.max_new_tokens}"

    @property
    def wrapper(self) -> Backend:
        return BACKENDS[self.backend]

    def model_args_for(self, weights: str) -> str:
        """The --model_args string for the checkpoint `weights` (an hf_id or a local path)."""
        wrapper = self.wrapper
        args = {wrapper.weights_arg: weights}
        if wrapper.tensor_parallel:
            args["tensor_parallel_size"] = str(self.tensor_parallel_size)
        if wrapper.dtype_arg:
            args[wrapper.dtype_arg] = self.dtype
        if self.max_pixels is not None and wrapper.max_pixels_arg == "max_pixels":
            args["max_pixels"] = str(self.max_pixels)
        args.update(self.model_args)
        return ",".join(f"{key}={value}" for key, value in args.items())


@dataclass(frozen=True)
class ModelSpec:
    key: str
    hf_id: str
    family: str
    size: str
    total_params: int
    active_params: int
    moe: bool
    aliases: tuple[str, ...] = ()
    vision_encoder: str | None = None
    encoder_params: str | None = None
    encoder_tier: str | None = None
    lmms_eval_model: str | None = None
    launch: LaunchSpec | None = None

    @property
    def ids(self) -> tuple[str, ...]:
        return (self.hf_id, *self.aliases)


@dataclass(frozen=True)
class CaitModel:
    name: str
    group: str
    params: str | None = None
    total_params: int | None = None
    active_params: int | None = None
    hf_id: str | None = None
    hf_id_inferred: bool = False
    registry_key: str | None = None
    aliases: tuple[str, ...] = ()  # other ids naming the model in logs, e.g. an API's model_version
    launch: LaunchSpec | None = None

    @property
    def key(self) -> str:
        """The model's key in tables and run folders (postprocess.cait uses the same rule): the registry key
        when it is one of the 19 models, else "<name>-<params>", else the name."""
        return self.registry_key or (f"{self.name}-{self.params}" if self.params else self.name)

    def as_model_spec(self) -> ModelSpec:
        """The spec that log rows of a CAIT-only model carry. Its family is "CAIT (<group>)", so it never
        pairs with a model of the four families; unknown parameter counts (proprietary models) are 0."""
        total, active = self.total_params or 0, self.active_params or self.total_params or 0
        return ModelSpec(key=self.key, hf_id=self.hf_id or self.key, family=f"CAIT ({self.group})",
                         size=self.params or "-", total_params=total, active_params=active, moe=active < total,
                         aliases=self.aliases, lmms_eval_model=self.launch.backend if self.launch else None,
                         launch=self.launch)


def _last_component(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _param_count(value: Any, where: str, field_name: str, nullable: bool = False) -> int | None:
    if value is None and nullable:
        return None
    number: float | None = None
    if isinstance(value, bool):  # bool is an int subclass; "true" is never a parameter count
        number = None
    elif isinstance(value, (int, float)):
        number = value
    elif isinstance(value, str):
        try:
            number = float(value.replace("_", ""))
        except ValueError:
            number = None
    if number is None or number != int(number) or number <= 0:
        raise RegistryError(f"{where}: field '{field_name}' must be a positive whole number, got {value!r}")
    return int(number)


def _text(entry: Mapping, name: str, where: str, nullable: bool) -> str | None:
    value = entry.get(name)
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value.strip():
        raise RegistryError(f"{where}: field '{name}' must be a non-empty string, got {value!r}")
    return value


def _positive_int(value: Any, name: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise RegistryError(f"{where}: launch field '{name}' must be a positive whole number, got {value!r}")
    return value


def _split_args(text: str) -> list[str]:
    """Split "k=v,k={...,...}" at the commas outside braces and brackets, as lmms-eval's parser does."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char in "{[") - (char in "}]")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [part for part in [*parts, current] if part.strip()]


def _render_arg(value: Any) -> str:
    if isinstance(value, (Mapping, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _model_args(raw: Any, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, str):
        pairs = [part.split("=", 1) for part in _split_args(raw)]
        if any(len(pair) != 2 or not pair[0].strip() for pair in pairs):
            raise RegistryError(f"{where}: launch field 'model_args' must be 'key=value' pairs joined by commas, "
                                f"got {raw!r}")
        return {key.strip(): value.strip() for key, value in pairs}
    if not isinstance(raw, Mapping) or not all(isinstance(key, str) and key for key in raw):
        raise RegistryError(f"{where}: launch field 'model_args' must be a mapping or a 'k=v,k=v' string, got {raw!r}")
    return dict(raw)


def _launch_from_entry(block: Any, where: str, lmms_eval_model: str | None) -> LaunchSpec:
    if not isinstance(block, Mapping):
        raise RegistryError(f"{where}: field 'launch' must be a mapping of {', '.join(_LAUNCH_FIELDS)}")
    unknown = sorted(set(block) - set(_LAUNCH_FIELDS))
    if unknown:
        raise RegistryError(f"{where}: unknown launch field '{unknown[0]}' (allowed: {', '.join(_LAUNCH_FIELDS)})")
    backend = block.get("backend")
    if backend is None:
        raise RegistryError(f"{where}: required launch field 'backend' is missing")
    if backend not in BACKENDS:
        raise RegistryError(f"{where}: launch field 'backend' is {backend!r}, not a known wrapper "
                            f"({', '.join(BACKENDS)})")
    if lmms_eval_model is not None and backend not in (lmms_eval_model, "vllm"):
        raise RegistryError(f"{where}: launch field 'backend' is {backend!r} but lmms_eval_model is "
                            f"{lmms_eval_model!r}; use that wrapper or vllm")
    wrapper = BACKENDS[backend]
    if block.get("gpus") is None:
        raise RegistryError(f"{where}: required launch field 'gpus' is missing")
    gpus = _positive_int(block["gpus"], "gpus", where)
    tensor_parallel_size = _positive_int(block.get("tensor_parallel_size", 1), "tensor_parallel_size", where)
    if gpus % tensor_parallel_size:
        raise RegistryError(f"{where}: launch field 'tensor_parallel_size' ({tensor_parallel_size}) does not "
                            f"divide gpus ({gpus})")
    if not wrapper.tensor_parallel and (gpus, tensor_parallel_size) != (1, 1):
        raise RegistryError(f"{where}: launch fields 'gpus' ({gpus}) and 'tensor_parallel_size' "
                            f"({tensor_parallel_size}) must be 1: backend {backend!r} puts one copy of the model on "
                            "each GPU (accelerate data parallel); a model that needs several GPUs runs with backend vllm")
    if wrapper.tensor_parallel and tensor_parallel_size != gpus:
        raise RegistryError(f"{where}: launch field 'gpus' ({gpus}) must equal tensor_parallel_size "
                            f"({tensor_parallel_size}): backend {backend!r} runs one process over all its GPUs")
    dtype = block.get("dtype", WRAPPER_DTYPE)
    if dtype not in DTYPES:
        raise RegistryError(f"{where}: launch field 'dtype' must be one of {DTYPES}, got {dtype!r}")
    if wrapper.dtype_arg is None and dtype != WRAPPER_DTYPE:
        raise RegistryError(f"{where}: launch field 'dtype' is {dtype!r} but the {backend} wrapper always loads "
                            f"{WRAPPER_DTYPE}")
    max_pixels = block.get("max_pixels")
    if max_pixels is not None:
        max_pixels = _positive_int(max_pixels, "max_pixels", where)
    if max_pixels is not None and wrapper.max_pixels_arg is None:
        raise RegistryError(f"{where}: launch field 'max_pixels' is set but the {backend} wrapper has no pixel "
                            "budget (leave it null)")
    batch_size = _positive_int(block.get("batch_size", 1), "batch_size", where)
    max_new_tokens = block.get("max_new_tokens")
    if max_new_tokens is not None:
        max_new_tokens = _positive_int(max_new_tokens, "max_new_tokens", where)
    if wrapper.max_batch_size is not None and batch_size > wrapper.max_batch_size:
        raise RegistryError(f"{where}: launch field 'batch_size' is {batch_size} but the {backend} wrapper "
                            f"accepts at most {wrapper.max_batch_size}")
    extra = _model_args(block.get("model_args"), where)
    owned = {wrapper.weights_arg: "hf_id", "batch_size": "batch_size"}
    if wrapper.tensor_parallel:
        owned["tensor_parallel_size"] = "tensor_parallel_size"
    if wrapper.dtype_arg:
        owned[wrapper.dtype_arg] = "dtype"
    if wrapper.max_pixels_arg == "max_pixels":
        owned["max_pixels"] = "max_pixels"
    for key in extra:
        if key in owned:
            raise RegistryError(f"{where}: launch model_args key {key!r} is set by the field '{owned[key]}'")
    if max_pixels is not None and wrapper.max_pixels_arg == "mm_processor_kwargs":
        processor_kwargs = _mapping_arg(extra.get("mm_processor_kwargs", {}), where)
        if "max_pixels" in processor_kwargs:
            raise RegistryError(f"{where}: launch model_args mm_processor_kwargs.max_pixels is set by the field "
                                "'max_pixels'")
        extra["mm_processor_kwargs"] = {**processor_kwargs, "max_pixels": max_pixels}
    rendered = tuple((key, _render_arg(value)) for key, value in extra.items())
    for key, value in rendered:
        if isinstance(extra[key], str) and "," in value and not value.strip().startswith(("{", "[")):
            raise RegistryError(f"{where}: launch model_args {key}={value!r} has a comma, which would split "
                                "the --model_args string; write structured values as YAML mappings")
    return LaunchSpec(backend=backend, gpus=gpus, tensor_parallel_size=tensor_parallel_size, dtype=dtype,
                      max_pixels=max_pixels, batch_size=batch_size, model_args=rendered, max_new_tokens=max_new_tokens)


def _mapping_arg(value: Any, where: str) -> dict:
    """A model_args value that must be a mapping: a YAML mapping or its JSON text (from a string model_args)."""
    parsed = value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = None
    if not isinstance(parsed, Mapping):
        raise RegistryError(f"{where}: launch model_args mm_processor_kwargs must be a mapping, got {value!r}")
    return dict(parsed)


def _model_from_entry(entry: Any, index: int, source: str) -> ModelSpec:
    if not isinstance(entry, Mapping):
        raise RegistryError(f"{source}: models[{index}] must be a mapping, got {type(entry).__name__}")
    key = entry.get("key")
    where = f"{source}: model '{key}'" if isinstance(key, str) and key else f"{source}: models[{index}]"
    for name in _REQUIRED_MODEL_FIELDS:
        if entry.get(name) is None:
            raise RegistryError(f"{where}: required field '{name}' is missing")
    unknown = sorted(set(entry) - set(_REQUIRED_MODEL_FIELDS) - set(_OPTIONAL_MODEL_FIELDS))
    if unknown:
        raise RegistryError(f"{where}: unknown field '{unknown[0]}' (allowed: "
                            f"{', '.join(_REQUIRED_MODEL_FIELDS + _OPTIONAL_MODEL_FIELDS)})")
    aliases = entry.get("aliases") or []
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        raise RegistryError(f"{where}: field 'aliases' must be a list of non-empty strings, got {aliases!r}")
    if not isinstance(entry["moe"], bool):
        raise RegistryError(f"{where}: field 'moe' must be true or false, got {entry['moe']!r}")
    spec = ModelSpec(
        key=_text(entry, "key", where, nullable=False),
        hf_id=_text(entry, "hf_id", where, nullable=False),
        family=_text(entry, "family", where, nullable=False),
        size=str(entry["size"]),
        total_params=_param_count(entry["total_params"], where, "total_params"),
        active_params=_param_count(entry["active_params"], where, "active_params"),
        moe=entry["moe"],
        aliases=tuple(aliases),
        vision_encoder=_text(entry, "vision_encoder", where, nullable=True),
        encoder_params=_text(entry, "encoder_params", where, nullable=True),
        encoder_tier=_text(entry, "encoder_tier", where, nullable=True),
        lmms_eval_model=_text(entry, "lmms_eval_model", where, nullable=True),
        launch=None if entry.get("launch") is None else _launch_from_entry(
            entry["launch"], where, _text(entry, "lmms_eval_model", where, nullable=True)),
    )
    if spec.active_params > spec.total_params:
        raise RegistryError(f"{where}: field 'active_params' ({spec.active_params:.3g}) exceeds "
                            f"total_params ({spec.total_params:.3g})")
    if spec.moe != (spec.active_params < spec.total_params):
        raise RegistryError(
            f"{where}: field 'moe' is {str(spec.moe).lower()} but active_params ({spec.active_params:.3g}) "
            f"{'<' if spec.active_params < spec.total_params else '=='} total_params ({spec.total_params:.3g}); "
            "moe must be true exactly when fewer parameters are active than in total")
    return spec


def _cait_from_entry(entry: Any, index: int, source: str) -> CaitModel:
    if not isinstance(entry, Mapping):
        raise RegistryError(f"{source}: cait_models[{index}] must be a mapping, got {type(entry).__name__}")
    name = entry.get("name")
    where = f"{source}: cait_models[{index}] ({name})"
    unknown = sorted(set(entry) - set(_CAIT_FIELDS) - {"launch"})
    if unknown:
        raise RegistryError(f"{where}: unknown field '{unknown[0]}' (allowed: {', '.join(_CAIT_FIELDS)}, launch)")
    if entry.get("group") not in CAIT_GROUPS:
        raise RegistryError(f"{where}: field 'group' must be one of {CAIT_GROUPS}, got {entry.get('group')!r}")
    total = _param_count(entry.get("total_params"), where, "total_params", nullable=True)
    active = _param_count(entry.get("active_params"), where, "active_params", nullable=True)
    if total is not None and active is not None and active > total:
        raise RegistryError(f"{where}: field 'active_params' ({active:.3g}) exceeds total_params ({total:.3g})")
    return CaitModel(
        name=_text(entry, "name", where, nullable=False),
        group=entry["group"],
        params=None if entry.get("params") is None else str(entry["params"]),
        total_params=total,
        active_params=active,
        hf_id=_text(entry, "hf_id", where, nullable=True),
        hf_id_inferred=bool(entry.get("hf_id_inferred", False)),
        registry_key=_text(entry, "registry_key", where, nullable=True),
        aliases=tuple(str(a) for a in entry.get("aliases") or ()),
        launch=_cait_launch(entry, where),
    )


def _cait_launch(entry: Mapping, where: str) -> LaunchSpec | None:
    if entry.get("launch") is None:
        return None
    if entry.get("registry_key") is not None:
        raise RegistryError(f"{where}: field 'launch' is not allowed with registry_key: the model launches with "
                            f"the settings of registry model {entry['registry_key']!r}")
    if entry.get("hf_id") is None:
        raise RegistryError(f"{where}: field 'launch' needs an hf_id to launch")
    return _launch_from_entry(entry["launch"], where, lmms_eval_model=None)


def _family_sort_key(spec: ModelSpec) -> tuple:
    return (spec.total_params, spec.active_params, spec.key)


class Registry:
    """Validated, immutable set of models; build with `load_registry` or `Registry.from_dict`."""

    def __init__(self, families: Iterable[str], models: Iterable[ModelSpec],
                 cait_models: Iterable[CaitModel] = (), overrides: Mapping[str, str] | None = None,
                 source: str = "<registry>"):
        self.source = source
        self.families: tuple[str, ...] = tuple(dict.fromkeys(families))
        self.models: tuple[ModelSpec, ...] = tuple(models)
        self.cait_models: tuple[CaitModel, ...] = tuple(cait_models)
        self._by_key: dict[str, ModelSpec] = {}
        self._by_name: dict[str, ModelSpec] = {}
        # CAIT-only models (no registry_key): resolvable and gettable, after the four families' models
        self._cait_by_key: dict[str, ModelSpec] = {}
        self._cait_by_name: dict[str, ModelSpec] = {}
        self._validate_and_index()
        self.overrides: dict[str, str] = {}
        for path, key in (overrides or {}).items():
            self.overrides[path.rstrip("/").lower()] = self.get(key, context=f"override {path}={key}").key

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<dict>") -> Registry:
        if not isinstance(data, Mapping):
            raise RegistryError(f"{source}: the registry must be a mapping with 'families' and 'models'")
        unknown = sorted(set(data) - {"families", "models", "cait_models"})
        if unknown:
            raise RegistryError(f"{source}: unknown top-level section '{unknown[0]}'")
        families = data.get("families") or []
        if not isinstance(families, list) or not all(isinstance(f, str) and f for f in families):
            raise RegistryError(f"{source}: 'families' must be a list of family names")
        models = [_model_from_entry(e, i, source) for i, e in enumerate(data.get("models") or [])]
        cait = [_cait_from_entry(e, i, source) for i, e in enumerate(data.get("cait_models") or [])]
        return cls(families, models, cait, source=source)

    def merge(self, other: Registry) -> Registry:
        """A registry with both sets of families and models; clashes fail validation."""
        return Registry(self.families + other.families, self.models + other.models,
                        self.cait_models + other.cait_models, {**self.overrides, **other.overrides},
                        source=f"{self.source} + {other.source}")

    def with_overrides(self, overrides: Mapping[str, str]) -> Registry:
        """A registry that also maps each override path (or last path component) to the given model key."""
        return Registry(self.families, self.models, self.cait_models, {**self.overrides, **overrides},
                        source=self.source)

    def _validate_and_index(self) -> None:
        for spec in self.models:
            if spec.family not in self.families:
                raise RegistryError(f"{self.source}: model '{spec.key}': field 'family' is {spec.family!r}, "
                                    f"not one of the declared families {list(self.families)}")
            if spec.key.lower() in self._by_key:
                raise RegistryError(f"{self.source}: model '{spec.key}': field 'key' duplicates another model's key")
            self._by_key[spec.key.lower()] = spec
        for spec in self.models:
            names = [("key", spec.key)]
            for field_name, model_id in [("hf_id", spec.hf_id)] + [("aliases", a) for a in spec.aliases]:
                names += [(field_name, model_id), (field_name, _last_component(model_id))]
            for field_name, name in names:
                owner = self._by_name.setdefault(name.lower(), spec)
                if owner is not spec:
                    raise RegistryError(
                        f"{self.source}: model '{spec.key}': field '{field_name}' value {name!r} is already "
                        f"the key, id or repo name of model '{owner.key}'")
        for cait in self.cait_models:
            if cait.registry_key is not None and cait.registry_key.lower() not in self._by_key:
                raise RegistryError(f"{self.source}: cait model '{cait.name}': field 'registry_key' "
                                    f"{cait.registry_key!r} names no model")
        seen = set()
        for cait in self.cait_models:
            if (cait.name, cait.params) in seen:
                raise RegistryError(f"{self.source}: cait model '{cait.name}' with params {cait.params!r} "
                                    "is listed twice")
            seen.add((cait.name, cait.params))
            if cait.registry_key is None:
                spec = cait.as_model_spec()
                self._cait_by_key[spec.key.lower()] = spec
                for name in (spec.key, *spec.ids, *(_last_component(i) for i in spec.ids)):
                    self._cait_by_name.setdefault(name.lower(), spec)

    # ------------------------------------------------------------------ lookup
    def __len__(self) -> int:
        return len(self.models)

    def __iter__(self) -> Iterator[ModelSpec]:
        return iter(self.models)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._by_key

    def get(self, key: str, context: str | None = None) -> ModelSpec:
        """The model with this key (case-insensitive); RegistryError listing the known keys otherwise."""
        spec = self._by_key.get(str(key).lower()) or self._cait_by_key.get(str(key).lower())
        if spec is None:
            prefix = f"{context}: " if context else ""
            raise RegistryError(f"{prefix}no model with key {key!r}; known keys: "
                                f"{', '.join(s.key for s in self.models)}")
        return spec

    def resolve(self, model_path_or_id: str) -> ModelSpec | None:
        """The model a path or id denotes (rules in the module docstring), or None."""
        path = str(model_path_or_id).strip().rstrip("/")
        if not path:
            return None
        last = _last_component(path)
        for candidate in (path, last):
            key = self.overrides.get(candidate.lower())
            if key is not None:
                return self.get(key)
        candidates = [path]
        for part in reversed(path.split("/")):
            cached = _HF_CACHE_DIR.match(part)
            if cached:
                candidates.append(f"{cached.group(1)}/{cached.group(2)}")
                break
        candidates.append(last)
        for index in (self._by_name, self._cait_by_name):
            for candidate in candidates:
                spec = index.get(candidate.lower())
                if spec is not None:
                    return spec
        return None

    def family_order(self, family: str) -> list[ModelSpec]:
        """Models of one family, smallest first (total_params, then active_params, then key)."""
        if family not in self.families:
            raise RegistryError(f"unknown family {family!r}; known families: {list(self.families)}")
        return sorted((s for s in self.models if s.family == family), key=_family_sort_key)

    # ------------------------------------------------------------------ frames
    def models_frame(self) -> pd.DataFrame:
        """One row per model, families in declared order, each family smallest first."""
        rows = []
        for family in self.families:
            for rank, spec in enumerate(self.family_order(family), start=1):
                rows.append({
                    "model": spec.key, "family": spec.family, "size": spec.size,
                    "total_params": spec.total_params, "active_params": spec.active_params, "moe": spec.moe,
                    "encoder_tier": spec.encoder_tier, "vision_encoder": spec.vision_encoder,
                    "encoder_params": spec.encoder_params, "hf_id": spec.hf_id,
                    "aliases": ",".join(spec.aliases), "lmms_eval_model": spec.lmms_eval_model,
                    "family_rank": rank,
                })
        columns = ["model", "family", "size", "total_params", "active_params", "moe", "encoder_tier",
                   "vision_encoder", "encoder_params", "hf_id", "aliases", "lmms_eval_model", "family_rank"]
        frame = pd.DataFrame(rows, columns=columns)
        return frame.astype({"total_params": "int64", "active_params": "int64", "moe": "bool",
                             "family_rank": "int64"})

    def cait_frame(self) -> pd.DataFrame:
        """The CAIT paper's Table 3 models, in the paper's order."""
        frame = pd.DataFrame([{name: getattr(c, name) for name in _CAIT_FIELDS} for c in self.cait_models],
                             columns=list(_CAIT_FIELDS))
        return frame.astype({"total_params": "Int64", "active_params": "Int64", "hf_id_inferred": "bool"})

    def fingerprint(self) -> str:
        """Hash of everything that shapes ingested rows (models and overrides, not launch settings), for cache keys."""
        models = [{k: v for k, v in asdict(s).items() if k != "launch"} for s in self.models]
        models += [{k: v for k, v in asdict(c).items() if k != "launch"} for c in self.cait_models]
        payload = json.dumps({"families": self.families, "models": models,
                              "overrides": sorted(self.overrides.items())}, sort_keys=True, default=list)
        return hashlib.sha256(payload.encode()).hexdigest()

    def __repr__(self) -> str:
        return f"Registry({len(self.models)} models in {len(self.families)} families from {self.source})"


def _read_yaml(path: Path) -> Registry:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise RegistryError(f"{path}: not valid YAML: {err}") from err
    return Registry.from_dict(data or {}, source=str(path))


def load_registry(path: str | Path | None = None, extra: Iterable[str | Path] = ()) -> Registry:
    """Load and validate `path` (default: model_configs/models.yaml), merged with each `extra` YAML."""
    registry = _read_yaml(Path(path) if path is not None else DEFAULT_REGISTRY_PATH)
    for extra_path in extra:
        registry = registry.merge(_read_yaml(Path(extra_path)))
    return registry


__all__ = ["BACKENDS", "CAIT_GROUPS", "DEFAULT_REGISTRY_PATH", "DTYPES", "WRAPPER_DTYPE", "Backend", "CaitModel",
           "LaunchSpec", "ModelSpec", "Registry", "RegistryError", "load_registry"]
