"""How `python -m launch` runs a model: its lmms-eval wrapper (backend), GPUs and model_args.

A model's `launch` mapping in models.yaml (a model without one can be ingested but not launched):

    backend               required; the lmms-eval --model wrapper, a key of BACKENDS (built-in wrappers,
                          the project's `molmo2`, or `vllm`: lmms-eval's chat vLLM wrapper)
    gpus                  required; GPUs one copy of the model needs. HF wrappers: 1 (accelerate puts one
                          copy on each GPU of the node: data parallel). vllm: equal to tensor_parallel_size
    tensor_parallel_size  default 1; must divide gpus; vllm's tensor parallel width (one process over gpus)
    dtype                 default bfloat16; passed to wrappers that take it (vllm, llama_vision, molmo2),
                          checked against those that always load bfloat16 (qwen3_vl, gemma3, internvl3_5, ...)
    max_pixels            default null: the released processor's own budget (what the paper used); a
                          per-image pixel budget, passed as the wrapper's max_pixels or, for vllm, inside
                          mm_processor_kwargs (Qwen-style processors only)
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

The protocol. `LaunchSpec.protocol()` is what shapes what a model is sent and how it decodes: the
wrapper, dtype, pixel budget, the HF wrappers' batch size (batched HF generation pads prompts) and every
model_arg except the wrapper's RESOURCE_ARGS (where and how fast it runs: tensor parallel width, memory,
context length, device). The launcher refuses a family whose sizes differ in it (launch/plan.py).
Run-wide overrides (`with_model_args`, `on_device`, `hf_launch`) build a new LaunchSpec with the same checks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .schema import RegistryError, positive_int

_LAUNCH_FIELDS = ("backend", "gpus", "tensor_parallel_size", "dtype", "max_pixels", "batch_size", "model_args",
                  "max_new_tokens")


@dataclass(frozen=True)
class Backend:
    """How the launcher drives one lmms-eval --model wrapper (read from the wrapper's source in lmms-eval 0.7.3)."""
    weights_arg: str            # the model_args key naming the checkpoint
    tensor_parallel: bool       # True: one process over all the model's GPUs; False: one copy per GPU (accelerate)
    dtype_arg: str | None       # the model_args key taking the dtype; None: the wrapper always loads bfloat16
    max_pixels_arg: str | None  # "max_pixels" (a wrapper argument), "mm_processor_kwargs" (vLLM), None: no budget
    max_batch_size: int | None = None
    built_in: bool = True       # False: the project's own wrapper (lmms_eval_models, entry point)
    cpu: bool = True            # runs with `--device cpu` plus model_args device_map=cpu (its default "auto"
                                # moves inputs to CUDA); False: the wrapper places the model on CUDA itself
    resource_args: frozenset[str] = frozenset({"device", "device_map", "use_cache"})


WRAPPER_DTYPE = "bfloat16"
DTYPES = ("bfloat16", "float16", "float32")
BACKENDS: dict[str, Backend] = {
    "qwen3_vl": Backend("pretrained", tensor_parallel=False, dtype_arg=None, max_pixels_arg="max_pixels"),
    "qwen2_5_vl": Backend("pretrained", tensor_parallel=False, dtype_arg=None, max_pixels_arg="max_pixels"),
    # Gemma 3's image processor resizes every image to its fixed SigLIP size (and has no max_pixels setting)
    "gemma3": Backend("pretrained", tensor_parallel=False, dtype_arg=None, max_pixels_arg=None),
    # InternVL's remote code tiles images (model_args max_num) and asserts batch size 1
    # (and binds cuda:<rank> whatever device it is given: no CPU runs)
    "internvl3_5": Backend("pretrained", tensor_parallel=False, dtype_arg=None, max_pixels_arg=None, max_batch_size=1,
                           cpu=False),
    "llama_vision": Backend("pretrained", tensor_parallel=False, dtype_arg="dtype", max_pixels_arg=None),
    "molmo2": Backend("pretrained", tensor_parallel=False, dtype_arg="dtype", max_pixels_arg=None, built_in=False),
    # internvl_hf with InternVL3.5's thinking switch (lmms_eval_models/internvl_thinking.py); -HF checkpoints
    "internvl_thinking": Backend("pretrained", tensor_parallel=False, dtype_arg=None, max_pixels_arg=None,
                                 max_batch_size=1, built_in=False),
    # vllm: lmms-eval's chat wrapper (models/chat/vllm.py) over vllm.LLM.chat; a GPU engine
    "vllm": Backend("model", tensor_parallel=True, dtype_arg="dtype", max_pixels_arg="mm_processor_kwargs", cpu=False,
                    resource_args=frozenset({"tensor_parallel_size", "data_parallel_size", "gpu_memory_utilization",
                                             "max_model_len", "max_num_seqs", "max_num_batched_tokens", "swap_space",
                                             "enforce_eager", "enable_prefix_caching", "disable_log_stats"})),
}
RUN_DEVICES = ("cpu", "cuda", "cuda:<N>")


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

    def protocol(self) -> dict[str, str]:
        """The settings that shape what the model is sent and how it decodes (module docstring), by name."""
        settings = {"backend": self.backend, "dtype": self.dtype,
                    "max_pixels": "the processor's default" if self.max_pixels is None else str(self.max_pixels)}
        if not self.wrapper.tensor_parallel:  # batched HF generation pads prompts, which can change greedy answers
            settings["batch_size"] = str(self.batch_size)
        if self.max_new_tokens is not None:
            settings["max_new_tokens"] = str(self.max_new_tokens)
        settings.update((key, value) for key, value in self.model_args if key not in self.wrapper.resource_args)
        return settings

    def with_model_args(self, text: str, where: str) -> LaunchSpec:
        """These settings with `text` ("k=v,k=v", as lmms-eval's --model_args) added; a key already set is
        replaced. The keys another field sets are refused, as in models.yaml."""
        extra = _model_args(text, where)
        _check_owned(extra, self.wrapper, where)
        merged = {**dict(self.model_args), **{key: _render_arg(value) for key, value in extra.items()}}
        _check_commas(merged, extra, where)
        return replace(self, model_args=tuple(merged.items()))

    def on_device(self, device: str, where: str) -> LaunchSpec:
        """These settings for a single-process run on `device` (cpu or cuda:N): HF wrappers get
        device_map=<device>; a wrapper that cannot run there is refused with the reason."""
        if device == "cuda":
            return self
        if device != "cpu" and not re.fullmatch(r"cuda:\d+", device):
            raise RegistryError(f"--device {device!r}: expected one of {', '.join(RUN_DEVICES)}")
        if self.wrapper.tensor_parallel:
            raise RegistryError(f"{where}: backend {self.backend!r} is a GPU engine that picks its GPUs itself "
                                + ("(use --hf-wrappers for a CPU run on the family's lmms-eval HF wrapper)"
                                   if device == "cpu" else "(choose them with CUDA_VISIBLE_DEVICES)"))
        if device == "cpu" and not self.wrapper.cpu:
            raise RegistryError(f"{where}: the {self.backend} wrapper places the model on CUDA whatever device it is "
                                "given, so it cannot run on CPU")
        return replace(self, model_args=tuple({**dict(self.model_args), "device_map": device}.items()))


def hf_launch(lmms_eval_model: str | None, where: str) -> LaunchSpec:
    """The launch settings of a model's own lmms-eval HF wrapper (one GPU, the wrapper's defaults)."""
    if lmms_eval_model is None:
        raise RegistryError(f"{where}: no lmms_eval_model names an HF wrapper for it")
    return launch_from_entry({"backend": lmms_eval_model, "gpus": 1}, where, lmms_eval_model)


def split_args(text: str) -> list[str]:
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
        pairs = [part.split("=", 1) for part in split_args(raw)]
        if any(len(pair) != 2 or not pair[0].strip() for pair in pairs):
            raise RegistryError(f"{where}: launch field 'model_args' must be 'key=value' pairs joined by commas, "
                                f"got {raw!r}")
        return {key.strip(): value.strip() for key, value in pairs}
    if not isinstance(raw, Mapping) or not all(isinstance(key, str) and key for key in raw):
        raise RegistryError(f"{where}: launch field 'model_args' must be a mapping or a 'k=v,k=v' string, got {raw!r}")
    return dict(raw)


def launch_from_entry(block: Any, where: str, lmms_eval_model: str | None) -> LaunchSpec:
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
    gpus = positive_int(block["gpus"], "gpus", where)
    tensor_parallel_size = positive_int(block.get("tensor_parallel_size", 1), "tensor_parallel_size", where)
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
        max_pixels = positive_int(max_pixels, "max_pixels", where)
    if max_pixels is not None and wrapper.max_pixels_arg is None:
        raise RegistryError(f"{where}: launch field 'max_pixels' is set but the {backend} wrapper has no pixel "
                            "budget (leave it null)")
    batch_size = positive_int(block.get("batch_size", 1), "batch_size", where)
    max_new_tokens = block.get("max_new_tokens")
    if max_new_tokens is not None:
        max_new_tokens = positive_int(max_new_tokens, "max_new_tokens", where)
    if wrapper.max_batch_size is not None and batch_size > wrapper.max_batch_size:
        raise RegistryError(f"{where}: launch field 'batch_size' is {batch_size} but the {backend} wrapper "
                            f"accepts at most {wrapper.max_batch_size}")
    extra = _model_args(block.get("model_args"), where)
    _check_owned(extra, wrapper, where)
    if max_pixels is not None and wrapper.max_pixels_arg == "mm_processor_kwargs":
        processor_kwargs = _mapping_arg(extra.get("mm_processor_kwargs", {}), where)
        if "max_pixels" in processor_kwargs:
            raise RegistryError(f"{where}: launch model_args mm_processor_kwargs.max_pixels is set by the field "
                                "'max_pixels'")
        extra["mm_processor_kwargs"] = {**processor_kwargs, "max_pixels": max_pixels}
    rendered = {key: _render_arg(value) for key, value in extra.items()}
    _check_commas(rendered, extra, where)
    return LaunchSpec(backend=backend, gpus=gpus, tensor_parallel_size=tensor_parallel_size, dtype=dtype,
                      max_pixels=max_pixels, batch_size=batch_size, model_args=tuple(rendered.items()),
                      max_new_tokens=max_new_tokens)


def _check_owned(extra: Mapping, wrapper: Backend, where: str) -> None:
    """Refuse model_args keys that a launch field sets (the checkpoint, batch size, GPUs, dtype, pixels)."""
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


def _check_commas(rendered: Mapping[str, str], raw: Mapping[str, Any], where: str) -> None:
    """A plain string value with a comma would split lmms-eval's --model_args string."""
    for key, value in rendered.items():
        if isinstance(raw.get(key), str) and "," in value and not value.strip().startswith(("{", "[")):
            raise RegistryError(f"{where}: launch model_args {key}={value!r} has a comma, which would split "
                                "the --model_args string; write structured values as YAML mappings")


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



__all__ = ["BACKENDS", "DTYPES", "RUN_DEVICES", "WRAPPER_DTYPE", "Backend", "LaunchSpec", "hf_launch", "launch_from_entry"]
