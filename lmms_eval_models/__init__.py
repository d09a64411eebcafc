"""lmms-eval model wrappers this project adds; lmms-eval 0.7.3 finds them through the `lmms_eval.models`
entry-point group declared in pyproject.toml (`lmms-eval --model molmo2`, `--model internvl_thinking`),
with no edit to lmms-eval."""


def model_manifests():
    """The entry point's payload. lmms-eval is imported here rather than at module top because lmms-eval
    imports this module while it is still building its model registry."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return [ModelManifest(model_id="molmo2", chat_class_path="lmms_eval_models.molmo2.Molmo2"),
            ModelManifest(model_id="internvl_thinking",
                          chat_class_path="lmms_eval_models.internvl_thinking.InternVLThinking")]
