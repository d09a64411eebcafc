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

from .launch_settings import LaunchSpec, launch_from_entry
from .schema import RegistryError, param_count, text_field

DEFAULT_REGISTRY_PATH = Path(__file__).with_name("models.yaml")

_REQUIRED_MODEL_FIELDS = ("key", "hf_id", "family", "size", "total_params", "active_params", "moe")
_OPTIONAL_MODEL_FIELDS = ("aliases", "vision_encoder", "encoder_params", "encoder_tier", "lmms_eval_model", "launch")
_CAIT_FIELDS = ("name", "group", "params", "total_params", "active_params", "hf_id", "hf_id_inferred", "registry_key",
                "aliases")
CAIT_GROUPS = ("proprietary", "open_instruct", "open_thinking")
_HF_CACHE_DIR = re.compile(r"^models--([^/]+?)--(.+)$")


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
        """The model's key in tables, logs and run folders (formed here only): the registry key when it is one
        of the 19 models, else "<name>-<params>", else the name."""
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
        key=text_field(entry, "key", where, nullable=False),
        hf_id=text_field(entry, "hf_id", where, nullable=False),
        family=text_field(entry, "family", where, nullable=False),
        size=str(entry["size"]),
        total_params=param_count(entry["total_params"], where, "total_params"),
        active_params=param_count(entry["active_params"], where, "active_params"),
        moe=entry["moe"],
        aliases=tuple(aliases),
        vision_encoder=text_field(entry, "vision_encoder", where, nullable=True),
        encoder_params=text_field(entry, "encoder_params", where, nullable=True),
        encoder_tier=text_field(entry, "encoder_tier", where, nullable=True),
        lmms_eval_model=text_field(entry, "lmms_eval_model", where, nullable=True),
        launch=None if entry.get("launch") is None else launch_from_entry(
            entry["launch"], where, text_field(entry, "lmms_eval_model", where, nullable=True)),
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
    total = param_count(entry.get("total_params"), where, "total_params", nullable=True)
    active = param_count(entry.get("active_params"), where, "active_params", nullable=True)
    if total is not None and active is not None and active > total:
        raise RegistryError(f"{where}: field 'active_params' ({active:.3g}) exceeds total_params ({total:.3g})")
    return CaitModel(
        name=text_field(entry, "name", where, nullable=False),
        group=entry["group"],
        params=None if entry.get("params") is None else str(entry["params"]),
        total_params=total,
        active_params=active,
        hf_id=text_field(entry, "hf_id", where, nullable=True),
        hf_id_inferred=bool(entry.get("hf_id_inferred", False)),
        registry_key=text_field(entry, "registry_key", where, nullable=True),
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
    return launch_from_entry(entry["launch"], where, lmms_eval_model=None)


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
        """The CAIT paper's Table 3 models, in the paper's order, with their `key` (CaitModel.key)."""
        frame = pd.DataFrame([{"key": c.key, **{name: getattr(c, name) for name in _CAIT_FIELDS}}
                              for c in self.cait_models], columns=["key", *_CAIT_FIELDS])
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


def _yaml_data(text: str) -> Any:
    """yaml.safe_load's data, parsed by libyaml where PyYAML has it (an eighth of the time: 0.025 s of every command
    that reads the registry); a text libyaml rejects is parsed again in Python, whose error message is the one said."""
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is not None:
        try:
            return yaml.load(text, Loader=loader)  # noqa: S506 (CSafeLoader: the safe constructor)
        except yaml.YAMLError:
            pass
    return yaml.safe_load(text)


def _read_yaml(path: Path) -> Registry:
    try:
        data = _yaml_data(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise RegistryError(f"{path}: not valid YAML: {err}") from err
    return Registry.from_dict(data or {}, source=str(path))


REGISTRY_BESIDE_LOGS = "extra_models.yaml"  # a logs folder's own models: read with those logs, no flag needed


def load_registry(path: str | Path | None = None, extra: Iterable[str | Path] = ()) -> Registry:
    """Load and validate `path` (default: model_configs/models.yaml), merged with each `extra` YAML."""
    registry = _read_yaml(Path(path) if path is not None else DEFAULT_REGISTRY_PATH)
    for extra_path in extra:
        registry = registry.merge(_read_yaml(Path(extra_path)))
    return registry


__all__ = ["CAIT_GROUPS", "DEFAULT_REGISTRY_PATH", "REGISTRY_BESIDE_LOGS", "CaitModel", "ModelSpec", "Registry", "load_registry"]
