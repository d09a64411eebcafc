"""The model registry against the paper's tables (Table 1, Table 5, Table 44; CAIT Table 3) and its validation."""

import copy
import re

import pytest
import yaml
from logfactory import tiny_family_registry_dict

from model_configs import DEFAULT_REGISTRY_PATH, Registry, RegistryError, load_registry

TABLE_5 = {
    ("Qwen3-VL", "2B"): "Qwen/Qwen3-VL-2B-Instruct",
    ("Qwen3-VL", "4B"): "Qwen/Qwen3-VL-4B-Instruct",
    ("Qwen3-VL", "8B"): "Qwen/Qwen3-VL-8B-Instruct",
    ("Qwen3-VL", "30B-A3B"): "Qwen/Qwen3-VL-30B-A3B-Instruct",
    ("Qwen3-VL", "32B"): "Qwen/Qwen3-VL-32B-Instruct",
    ("Qwen3-VL", "235B-A22B"): "Qwen/Qwen3-VL-235B-A22B-Instruct",
    ("InternVL3.5", "1B"): "OpenGVLab/InternVL3_5-1B-Instruct",
    ("InternVL3.5", "2B"): "OpenGVLab/InternVL3_5-2B-Instruct",
    ("InternVL3.5", "4B"): "OpenGVLab/InternVL3_5-4B-Instruct",
    ("InternVL3.5", "8B"): "OpenGVLab/InternVL3_5-8B-Instruct",
    ("InternVL3.5", "14B"): "OpenGVLab/InternVL3_5-14B-Instruct",
    ("InternVL3.5", "30B-A3B"): "OpenGVLab/InternVL3_5-30B-A3B-Instruct",
    ("InternVL3.5", "38B"): "OpenGVLab/InternVL3_5-38B-Instruct",
    ("InternVL3.5", "241B-A28B"): "OpenGVLab/InternVL3_5-241B-A28B-Instruct",
    ("Gemma 3", "4B"): "google/gemma-3-4b-it",
    ("Gemma 3", "12B"): "google/gemma-3-12b-it",
    ("Gemma 3", "27B"): "google/gemma-3-27b-it",
    ("Molmo 2", "4B"): "allenai/Molmo2-4B",
    ("Molmo 2", "8B"): "allenai/Molmo2-8B",
}

# Table 44: (family, size) -> vision encoder
TABLE_44 = {
    **{("Qwen3-VL", s): "SigLIP2-Large" for s in ("2B", "4B")},
    **{("Qwen3-VL", s): "SigLIP2-SO-400M" for s in ("8B", "30B-A3B", "32B", "235B-A22B")},
    **{("InternVL3.5", s): "InternViT-300M" for s in ("1B", "2B", "4B", "8B", "14B", "30B-A3B")},
    **{("InternVL3.5", s): "InternViT-6B" for s in ("38B", "241B-A28B")},
    **{("Gemma 3", s): "SigLIP" for s in ("4B", "12B", "27B")},
    **{("Molmo 2", s): "SigLIP 2 SO-400M" for s in ("4B", "8B")},
}


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


@pytest.fixture
def data() -> dict:
    return yaml.safe_load(DEFAULT_REGISTRY_PATH.read_text(encoding="utf-8"))


def _nominal(size: str) -> tuple[int, int]:
    total, active = re.fullmatch(r"(\d+)B(?:-A(\d+)B)?", size).groups()
    return int(total) * 10**9, int(active or total) * 10**9


def test_the_19_models_of_table_5(registry):
    assert len(registry) == 19
    assert registry.families == ("Qwen3-VL", "InternVL3.5", "Gemma 3", "Molmo 2")
    assert {(s.family, s.size): s.hf_id for s in registry} == TABLE_5
    assert [len(registry.family_order(f)) for f in registry.families] == [6, 8, 3, 2]


def test_parameters_are_nominal_from_the_size_label(registry):
    for spec in registry:
        assert (spec.total_params, spec.active_params) == _nominal(spec.size), spec.key
        assert spec.moe == ("-A" in spec.size), spec.key
    internvl_moe = registry.get("InternVL3.5-30B-A3B")
    assert (internvl_moe.total_params, internvl_moe.active_params, internvl_moe.moe) == (30e9, 3e9, True)
    assert registry.get("Qwen3-VL-235B-A22B").active_params == 22e9
    assert registry.get("InternVL3.5-241B-A28B").active_params == 28e9


def test_family_order_is_by_total_params(registry):
    assert [s.size for s in registry.family_order("Qwen3-VL")] == ["2B", "4B", "8B", "30B-A3B", "32B", "235B-A22B"]
    assert [s.size for s in registry.family_order("InternVL3.5")] == [
        "1B", "2B", "4B", "8B", "14B", "30B-A3B", "38B", "241B-A28B"]
    with pytest.raises(RegistryError, match="unknown family 'Llama'"):
        registry.family_order("Llama")


def test_vision_encoders_and_tiers_follow_table_44(registry):
    assert {(s.family, s.size): s.vision_encoder for s in registry} == TABLE_44
    tiers = {s.key: s.encoder_tier for s in registry}
    assert tiers["Qwen3-VL-4B"] == "siglip2-large" != tiers["Qwen3-VL-8B"]
    assert tiers["InternVL3.5-30B-A3B"] == tiers["InternVL3.5-14B"] == "internvit-300m"
    assert tiers["InternVL3.5-38B"] == tiers["InternVL3.5-241B-A28B"] == "internvit-6b"
    assert {tiers[k] for k in ("Gemma-3-4B", "Gemma-3-12B", "Gemma-3-27B")} == {"siglip"}
    assert registry.get("InternVL3.5-38B").encoder_params == "5.5B"


def test_lmms_eval_wrappers(registry):
    assert {s.family: s.lmms_eval_model for s in registry} == {
        "Qwen3-VL": "qwen3_vl", "InternVL3.5": "internvl3_5", "Gemma 3": "gemma3", "Molmo 2": "molmo2"}


@pytest.mark.parametrize("path, key", [
    ("Qwen/Qwen3-VL-2B-Instruct", "Qwen3-VL-2B"),
    ("qwen/qwen3-vl-2b-instruct", "Qwen3-VL-2B"),
    ("/data/models/Qwen3-VL-30B-A3B-Instruct", "Qwen3-VL-30B-A3B"),
    ("/data/models/qwen3-vl-30b-a3b-instruct/", "Qwen3-VL-30B-A3B"),
    ("OpenGVLab/InternVL3_5-14B-HF", "InternVL3.5-14B"),
    ("OpenGVLab/InternVL3_5-8B-HF", "InternVL-3.5-8B"),  # the CAIT Thinking row launches this checkpoint
    ("/scratch/InternVL3_5-241B-A28B-HF", "InternVL3.5-241B-A28B"),
    ("/hf/hub/models--google--gemma-3-4b-it/snapshots/0123abcd", "Gemma-3-4B"),
    ("Molmo-2-8B", "Molmo-2-8B"),
    ("allenai/Molmo2-4B", "Molmo-2-4B"),
])
def test_resolve(registry, path, key):
    assert registry.resolve(path).key == key


@pytest.mark.parametrize("path", ["/models/Qwen3-VL-8B-Thinking-v2", "", "/tmp/tiny-s"])
def test_resolve_unknown_is_none(registry, path):
    assert registry.resolve(path) is None


def test_the_non_instruct_internvl_is_the_cait_papers_thinking_model_not_the_instruct_one(registry):
    spec = registry.resolve("OpenGVLab/InternVL3_5-8B")
    assert spec.family == "CAIT (open_thinking)" and spec.key != "InternVL3.5-8B"


def test_models_frame(registry):
    frame = registry.models_frame()
    assert list(frame.columns[:11]) == ["model", "family", "size", "total_params", "active_params", "moe",
                                        "encoder_tier", "vision_encoder", "encoder_params", "hf_id", "aliases"]
    assert {"lmms_eval_model", "family_rank"} <= set(frame.columns)
    assert len(frame) == 19 and frame["model"].is_unique
    qwen = frame[frame["family"] == "Qwen3-VL"]
    assert qwen["family_rank"].tolist() == [1, 2, 3, 4, 5, 6]
    assert qwen["total_params"].is_monotonic_increasing
    assert frame.loc[frame["model"] == "InternVL3.5-30B-A3B", "active_params"].item() == 3_000_000_000


def test_overrides_map_arbitrary_paths(registry):
    mapped = registry.with_overrides({"/ckpt/run7/step-500/": "Qwen3-VL-2B", "last-only": "gemma-3-27b"})
    assert mapped.resolve("/ckpt/run7/step-500").key == "Qwen3-VL-2B"
    assert mapped.resolve("/elsewhere/last-only").key == "Gemma-3-27B"
    assert registry.resolve("/ckpt/run7/step-500") is None  # the original is unchanged
    with pytest.raises(RegistryError, match="no model with key 'Qwen3-VL-3B'.*Qwen3-VL-2B"):
        registry.with_overrides({"/x": "Qwen3-VL-3B"})


def test_extra_models_from_dict_and_yaml(registry, tmp_path):
    tiny = tiny_family_registry_dict()
    merged = registry.merge(Registry.from_dict(tiny, source="tiny"))
    assert len(merged) == 22 and merged.families[-1] == "Tiny"
    assert [s.key for s in merged.family_order("Tiny")] == ["Tiny-S", "Tiny-M", "Tiny-L"]
    assert merged.resolve("/tmp/models/tiny-m").key == "Tiny-M"
    extra = tmp_path / "tiny.yaml"
    extra.write_text(yaml.safe_dump(tiny), encoding="utf-8")
    assert load_registry(extra=[extra]).resolve("local/tiny-l").key == "Tiny-L"
    with pytest.raises(RegistryError, match="model 'Tiny-S': field 'key'"):
        load_registry(extra=[extra, extra])


def _first_model_error(data: dict, match: str, **changes) -> None:
    broken = copy.deepcopy(data)
    broken["models"][0].update(changes)
    broken["models"][0] = {k: v for k, v in broken["models"][0].items() if v is not ...}
    with pytest.raises(RegistryError, match=match):
        Registry.from_dict(broken, source="models.yaml")


def test_validation_names_the_model_and_field(data):
    _first_model_error(data, r"model 'Qwen3-VL-2B': required field 'hf_id' is missing", hf_id=...)
    _first_model_error(data, r"models\[0\]: required field 'key' is missing", key=...)
    _first_model_error(data, r"'Qwen3-VL-2B': field 'active_params' \(3e\+09\) exceeds total_params",
                       active_params=3_000_000_000)
    _first_model_error(data, r"'Qwen3-VL-2B': field 'moe' is true", moe=True)
    _first_model_error(data, r"'Qwen3-VL-2B': field 'moe' is false", active_params=1_000_000_000)
    _first_model_error(data, r"'Qwen3-VL-2B': field 'family' is 'Qwen4'", family="Qwen4")
    _first_model_error(data, r"'Qwen3-VL-2B': unknown field 'activ_params'", activ_params=1)
    _first_model_error(data, r"'Qwen3-VL-2B': field 'total_params' must be a positive whole number",
                       total_params="two billion")
    _first_model_error(data, r"'Qwen3-VL-2B': field 'moe' must be true or false", moe="no")
    _first_model_error(data, r"model 'Qwen3-VL-4B': field 'key'", key="qwen3-vl-4b")
    _first_model_error(data, r"model 'Gemma-3-4B': field 'hf_id' value 'google/gemma-3-4b-it' is already "
                             r"the key, id or repo name of model 'Qwen3-VL-2B'", hf_id="google/gemma-3-4b-it")
    _first_model_error(data, r"model 'Gemma-3-12B': field 'hf_id' value 'gemma-3-12b-it' is already .* 'Qwen3-VL-2B'",
                       aliases=["someone/gemma-3-12b-it"])


def test_parameter_counts_accept_readable_forms(data):
    data["models"][0].update(total_params="2e9", active_params=2.0e9)
    spec = Registry.from_dict(data).get("Qwen3-VL-2B")
    assert spec.total_params == spec.active_params == 2_000_000_000


def test_cait_models_of_table_3(registry):
    cait = registry.cait_frame()
    assert len(cait) == 18
    assert cait["group"].value_counts().to_dict() == {"open_instruct": 8, "open_thinking": 6, "proprietary": 4}
    assert cait.loc[cait["group"] == "proprietary", "hf_id"].isna().all()
    kimi = cait[cait["name"] == "Kimi-VL-A3B-Thinking"].iloc[0]
    assert (kimi["total_params"], kimi["active_params"]) == (16_000_000_000, 3_000_000_000)
    linked = cait.dropna(subset=["registry_key"])
    assert all(registry.get(k).hf_id == h for k, h in zip(linked["registry_key"], linked["hf_id"]))


def test_cait_validation(data):
    data["cait_models"][4]["group"] = "open"
    with pytest.raises(RegistryError, match=r"cait_models\[4\] \(Qwen2.5-VL-Instruct\): field 'group'"):
        Registry.from_dict(data)


def test_cait_only_models_resolve_after_the_four_families():
    registry = load_registry()
    assert registry.resolve("/ckpt/Qwen2.5-VL-7B-Instruct").key == "Qwen2.5-VL-Instruct-7B"
    assert registry.resolve("gpt-5.4").family == "CAIT (proprietary)"
    assert registry.resolve("gpt-5.4").total_params == 0  # unknown for API models
    assert registry.resolve("Qwen/Qwen3-VL-8B-Instruct").key == "Qwen3-VL-8B"  # the registry model wins
    assert registry.with_overrides({"/runs/llava7b": "LLaVA-NeXT-7B"}).resolve("/runs/llava7b").key == "LLaVA-NeXT-7B"
