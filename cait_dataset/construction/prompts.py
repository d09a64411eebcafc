"""The construction prompts of "Seeing vs. Believing", Appendix B, as the paper prints them (Tables 19, 21, 22).

Where a table is printed cut short, the completion is ours and is marked here:
  Table 19  "(Few-shot examples omitted)": our examples take its place. They are the paper's own example
            scenes (the abstract's rabbit and tiger; Appendix C's cases 1, 3 and 4), each as a normal scene
            and its subject-object inversion. The number of groups per verb ("10") is a parameter; 10 gives
            the printed text.
  Table 21  the user prompt's scene sets are printed as `{ "id": 1, "uncommon": [...], ... }`: ours carry the
            fields of Table 20's output data for each kept scene (id, common, uncommon, selected,
            anthropomorphize, style), which the system prompt asks the model to respect. The same list fills
            the system prompt's {scene_sets_json}. The `...` inside the output structure is the paper's text.
  Table 22  printed in full; "512 x 512" is the generator's size (512 gives the printed text).
"""

from __future__ import annotations

import json

PER_VERB = 10  # scene pairs asked per verb (Table 19)
IMAGE_SIZE = 512  # pixels per side (Table 22)
LLM_MODEL, LLM_TEMPERATURE = "gpt-4o-mini", 0.7  # Tables 19 and 21
IMAGE_MODEL, IMAGE_TEMPERATURE = "gemini-2.5-flash-image", 0.7  # Table 22

# ---------------------------------------------------------------------------------------------- Table 19
# Ours (see the module docstring): the paper's example scenes, in place of "(Few-shot examples omitted)".
SCENE_EXAMPLES = (
    ("A tiger is chasing a rabbit.", "A rabbit is chasing a tiger."),
    ("A parent is guiding a little boy.", "A little boy is guiding a parent."),
    ("A knight stabs a dragon with a sword.", "A dragon stabs the knight with a sword."),
    ("A father is guiding a girl riding a bike on the road.", "A girl on the road is guiding her father riding a bike."),
)
SCENE_PAIRS_SYSTEM = (
    "Please note the following examples I have provided. Each group is divided into two parts: the normal scene "
    "and the scene that is logical but extremely uncommon after the master-guest inversion. When reversing, try to "
    "keep the general structure of the original sentence’s language description unchanged, only swapping the "
    "positions of the subject and object. Following these examples, generate semantic scenarios that meet the "
    "requirements for the verbs I gave you, with {per_verb} groups for each verb.\n"
    "{examples}\n"
    "You MUST respond in valid json format. Output a json object with the following structure: "
    '{{ "verb": "<input_verb>", "scene_sets": [ {{ "id": <number>, "common": ["<common_sentence>"], '
    '"uncommon": ["<uncommon_sentence>"] }} ] }}'
)


def scene_examples_text() -> str:
    return "\n".join(f"Group {number}:\nNormal scene: {common}\nUncommon scene: {uncommon}"
                     for number, (common, uncommon) in enumerate(SCENE_EXAMPLES, 1))


def scene_pairs_system(per_verb: int = PER_VERB) -> str:
    return SCENE_PAIRS_SYSTEM.format(per_verb=per_verb, examples=scene_examples_text())


def scene_pairs_user(verb: str) -> str:
    return f'{{ "verb": {json.dumps(verb, ensure_ascii=False)} }}'


# ---------------------------------------------------------------------------------------------- Table 21
DESCRIPTION_SYSTEM = (
    "You are given: - verb: {verb}, - scene_sets: {scene_sets_json} Task: For each uncommon semantic scenario "
    "(subject–object inversion) in the scene_sets, generate ONE highly detailed and visually grounded description "
    "suitable for Gemini’s text-to-image model. Each description must: 1. Clearly convey the subject–object role "
    "reversal described in the uncommon_text. 2. Respect the per-scene options (anthropomorphize, style). 3. Be "
    "vivid and concrete, describing what the viewer can see. Output strictly in json format. You MUST return a "
    'valid json object with the following structure: {{ "verb": "<verb>", "records": [ {{ "scene_id": 1, '
    '"uncommon_image_description": "<description>", ... }} ] }}'
)


def description_scene_sets(scenes: list[dict]) -> list[dict]:
    """Table 20's output record of each kept scene (ours: the fields Table 21 prints as `...`), numbered
    1..n in the order given. `scenes`: dicts with common_text, uncommon_text, anthropomorphize (bool), style."""
    return [{"id": number, "common": [scene["common_text"]], "uncommon": [scene["uncommon_text"]], "selected": True,
             "anthropomorphize": scene["anthropomorphize"], "style": scene["style"]}
            for number, scene in enumerate(scenes, 1)]


def description_system(verb: str, scenes: list[dict]) -> str:
    scene_sets = json.dumps(description_scene_sets(scenes), ensure_ascii=False)
    return DESCRIPTION_SYSTEM.format(verb=verb, scene_sets_json=scene_sets)


def description_user(verb: str, scenes: list[dict]) -> str:
    return json.dumps({"verb": verb, "scene_sets": description_scene_sets(scenes)}, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- Table 22
IMAGE_TEMPLATE = (
    "You are a visual reasoning model that deliberately violates common sense. You must prioritize paradox, "
    "contradiction, and reversed causality over realism. World rules: 1. Physical laws can be inverted. 2. Causes "
    "may appear after results. 3. Object scale, weight, and function may contradict logic. 4. The image must look "
    "realistic in style but impossible in logic. 5. Do not explain the paradox visually – let it appear naturally. "
    "Here is the uncommon and counter-intuitive scene you have to generate: {description} "
    "Image size: {size} × {size} pixels"
)


def image_prompt(description: str, size: int = IMAGE_SIZE) -> str:
    return IMAGE_TEMPLATE.format(description=description.strip(), size=size)


def messages_text(system: str | None, user: str) -> str:
    """A chat request as one text, for the record's `prompts` field."""
    return f"[system]\n{system}\n[user]\n{user}" if system else user
