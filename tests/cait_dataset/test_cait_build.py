"""cait-build (cait_dataset/construction): the CAIT construction pipeline, offline. The LLM and the image
endpoints are a local server speaking the OpenAI and Gemini wire formats (reeval_server.py) through the
official clients, the LLM answering as invscale_demo.cait_build_demo.fake_llm_answer does; people are
Label Studio export files; the local generator is a tiny random-weight diffusers pipeline."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from reeval_server import JudgeServer, drawn_png

from cait_dataset.__main__ import main as cait_dataset_main
from cait_dataset.construction import answers, assemble, describe, filtering, images, prompts, review, runner, scenes, verbs
from cait_dataset.construction.command import main
from cait_dataset.construction.files import BuildError
from cait_dataset.construction.generators import GeneratorConfig, load_generators
from invscale_demo.cait_build_demo import SCENE_BANK, fake_llm_answer, label_studio_export
from invscale_demo.tiny_diffusion import ensure_tiny_diffusion
from lmms_eval_tasks.__main__ import main as lmms_eval_tasks_main
from lmms_eval_tasks.cait import read_folder
from invscale.label_studio import annotations_from_export
from invscale.judges import JudgeCache, JudgeConfig, JudgeError

KEY = "sk-test-cait-build"
PREDATOR_PREY = "Transposition of traditional predator and prey roles"
CARETAKING = "Reversal of caretaking duties across generations"


# ---------------------------------------------------------------------------------------------- prompts
def test_table_19_is_the_printed_prompt_with_our_examples_in_place_of_the_omitted_ones():
    system = prompts.scene_pairs_system()
    printed_before, printed_after = ((
        "Please note the following examples I have provided. Each group is divided into two parts: the normal scene "
        "and the scene that is logical but extremely uncommon after the master-guest inversion. When reversing, try to "
        "keep the general structure of the original sentence’s language description unchanged, only swapping the "
        "positions of the subject and object. Following these examples, generate semantic scenarios that meet the "
        "requirements for the verbs I gave you, with 10 groups for each verb."), (
        'You MUST respond in valid json format. Output a json object with the following structure: { "verb": '
        '"<input_verb>", "scene_sets": [ { "id": <number>, "common": ["<common_sentence>"], "uncommon": '
        '["<uncommon_sentence>"] } ] }'))
    assert system.startswith(printed_before + "\n") and system.endswith("\n" + printed_after)
    assert system[len(printed_before) + 1:-len(printed_after) - 1] == prompts.scene_examples_text()
    assert "Uncommon scene: A rabbit is chasing a tiger." in system
    assert "with 3 groups for each verb" in prompts.scene_pairs_system(3)
    assert prompts.scene_pairs_user("play with") == '{ "verb": "play with" }'


def test_table_21_fills_the_printed_prompt_with_table_20_records():
    scene = {"common_text": "A tiger chases a rabbit.", "uncommon_text": "A rabbit chases a tiger.",
             "anthropomorphize": True, "style": "cartoon"}
    system, user = prompts.description_system("chase", [scene]), prompts.description_user("chase", [scene])
    records = [{"id": 1, "common": ["A tiger chases a rabbit."], "uncommon": ["A rabbit chases a tiger."],
                "selected": True, "anthropomorphize": True, "style": "cartoon"}]
    assert json.loads(user) == {"verb": "chase", "scene_sets": records}
    assert system.startswith(f"You are given: - verb: chase, - scene_sets: {json.dumps(records)} Task: For each "
                             "uncommon semantic scenario (subject–object inversion) in the scene_sets, generate ONE")
    assert system.endswith('{ "verb": "<verb>", "records": [ { "scene_id": 1, "uncommon_image_description": '
                           '"<description>", ... } ] }')


def test_table_22_is_the_printed_template_around_the_description():
    assert prompts.image_prompt(" A rabbit chases a tiger. ") == (
        "You are a visual reasoning model that deliberately violates common sense. You must prioritize paradox, "
        "contradiction, and reversed causality over realism. World rules: 1. Physical laws can be inverted. 2. Causes "
        "may appear after results. 3. Object scale, weight, and function may contradict logic. 4. The image must look "
        "realistic in style but impossible in logic. 5. Do not explain the paradox visually – let it appear naturally. "
        "Here is the uncommon and counter-intuitive scene you have to generate: A rabbit chases a tiger. "
        "Image size: 512 × 512 pixels")


# ---------------------------------------------------------------------------------------------- answers
def test_scene_pairs_are_read_from_the_table_19_structure():
    pairs = answers.scene_pairs(fake_llm_answer('{ "verb": "chase" }'))
    assert [(p.set_id, p.common, p.uncommon) for p in pairs] == [
        (1, "A tiger chases a rabbit.", "A rabbit chases a tiger."), (2, "A cat chases a mouse.", "A mouse chases a cat.")]
    fenced = "```json\n" + json.dumps({"verb": "x", "scene_sets": [{"id": 1, "common": "A b c.", "uncommon": "C b a."}]}) \
             + "\n```"
    assert answers.scene_pairs(fenced)[0].uncommon == "C b a."


@pytest.mark.parametrize("answer, message", [
    ("Sure! Here are the scenes.", "not a JSON object"),
    ("[1, 2]", "not a JSON object but a list"),
    ('{"verb": "x", "scene_sets": []}', "no non-empty list 'scene_sets'"),
    ('{"verb": "x", "scene_sets": [{"id": 1, "common": ["A b."], "uncommon": ["a B."]}]}', "are the same"),
    ('{"verb": "x", "scene_sets": [{"id": 1, "common": ["A b.", "C d."], "uncommon": ["B a."]}]}',
     r"scene_sets\[1\].common must be one sentence"),
    (('{"verb": "x", "scene_sets": [{"id": 1, "common": "A b.", "uncommon": "B a."}, '
      '{"id": 1, "common": "C d.", "uncommon": "D c."}]}'), "id 1 is not a single unique value"),
])
def test_a_scene_pairs_answer_that_breaks_the_structure_is_refused_with_the_reason(answer, message):
    with pytest.raises(ValueError, match=message):
        answers.scene_pairs(answer)


@pytest.mark.parametrize("records, message", [
    ([{"scene_id": 1, "uncommon_image_description": "x"}], r"no description for scene_id\(s\) \[2\]"),
    ([{"scene_id": 1, "uncommon_image_description": "x"}, {"scene_id": 3, "uncommon_image_description": "y"}],
     "scene_id 3 is not one of the ids 1..2"),
    ([{"scene_id": 1, "uncommon_image_description": "x"}, {"scene_id": "1", "uncommon_image_description": "y"}],
     "described twice"),
    ([{"scene_id": 1, "uncommon_image_description": ""}, {"scene_id": 2, "uncommon_image_description": "y"}],
     "no uncommon_image_description"),
])
def test_a_descriptions_answer_must_describe_exactly_the_scenes_asked_about(records, message):
    with pytest.raises(ValueError, match=message):
        answers.descriptions(json.dumps({"verb": "x", "records": records}), count=2)
    assert answers.descriptions(json.dumps({"records": [{"scene_id": "2", "uncommon_image_description": " b "},
                                                        {"scene_id": 1, "uncommon_image_description": "a"}]}), 2) == ["a", "b"]


# ---------------------------------------------------------------------------------------------- verbs
VERBNET_CLASS = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE VNCLASS SYSTEM "vn_class-3.dtd">
<VNCLASS ID="{id}">
  <MEMBERS>{members}</MEMBERS>
  <THEMROLES/>
  <FRAMES>{frames}</FRAMES>
  <SUBCLASSES>{subclasses}</SUBCLASSES>
</VNCLASS>
"""
FRAME = """<FRAME><DESCRIPTION descriptionNumber="0.2" primary="NP V NP" secondary="" xtag=""/>
<EXAMPLES><EXAMPLE>{example}</EXAMPLE></EXAMPLES>
<SYNTAX><NP value="{subject}"><SYNRESTRS/></NP><VERB/><NP value="{object}"><SYNRESTRS/></NP></SYNTAX>
<SEMANTICS/></FRAME>"""


def verbnet_corpus(folder: Path) -> Path:
    """A tiny corpus in VerbNet's XML format: chase and kick (Agent V NP, kick's subclass inheriting),
    meet (Actor1 V Actor2: symmetric, no Agent frame)."""
    def members(*names):
        return "".join(f'<MEMBER name="{name}" wn="" grouping=""/>' for name in names)

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "chase-51.6.xml").write_text(VERBNET_CLASS.format(
        id="chase-51.6", members=members("chase", "pursue"), subclasses="",
        frames=FRAME.format(example="Jackie chased the thief.", subject="Agent", object="Theme")))
    subclass = (f'<VNSUBCLASS ID="hit-18.1-1"><MEMBERS>{members("whack")}</MEMBERS><THEMROLES/><FRAMES/>'
                '<SUBCLASSES/></VNSUBCLASS>')
    (folder / "hit-18.1.xml").write_text(VERBNET_CLASS.format(
        id="hit-18.1", members=members("kick", "chase"), subclasses=subclass,
        frames=FRAME.format(example="Paula hit the ball.", subject="Agent", object="Patient")))
    (folder / "meet-36.3.xml").write_text(VERBNET_CLASS.format(
        id="meet-36.3", members=members("meet"), subclasses="",
        frames=FRAME.format(example="Anne met Cathy.", subject="Actor1", object="Actor2")))
    return folder


def test_verbnet_candidates_are_the_verbs_with_an_agent_frame(tmp_path):
    candidates, left_out = verbs.verbnet_candidates(verbnet_corpus(tmp_path / "verbnet"))
    found = {c.verb: (c.verbnet_classes, c.agent_frames) for c in candidates}
    assert found == {"chase": ("chase-51.6;hit-18.1", "Agent V Patient;Agent V Theme"),
                     "kick": ("hit-18.1", "Agent V Patient"), "pursue": ("chase-51.6", "Agent V Theme"),
                     "whack": ("hit-18.1-1", "Agent V Patient")}
    assert left_out == 1  # meet
    update = verbs.update_verbs(tmp_path / "work", candidates)
    assert (update.added, update.library, update.unjudged) == (4, 0, 4)  # people judge the four principles


def test_without_the_verbnet_corpus_the_error_says_what_to_do(monkeypatch):
    import nltk

    def not_installed(name):
        raise LookupError(name)

    monkeypatch.setattr(nltk.data, "find", not_installed)
    with pytest.raises(BuildError, match=r"VerbNet corpus is not installed .*--verbs FILE"):
        verbs.verbnet_candidates()


def test_verb_lists_merge_into_verbs_csv_keeping_what_people_wrote(tmp_path):
    work = tmp_path / "work"
    (tmp_path / "verbs.txt").write_text("# the paper's examples\nChase\n\nkick\n")
    verbs.update_verbs(work, verbs.listed_verbs(tmp_path / "verbs.txt"))
    table = pd.read_csv(work / "verbs.csv", dtype=str, keep_default_na=False)
    table.loc[table["verb"] == "chase", list(verbs.PRINCIPLES)] = ["yes", "Y", "TRUE", "1"]
    table.loc[table["verb"] == "kick", "commonality"] = "no"
    table.to_csv(work / "verbs.csv", index=False)
    (tmp_path / "more.csv").write_text("verb,static_recognizability\nkick,yes\nfeed,\n")
    update = verbs.update_verbs(work, verbs.listed_verbs(tmp_path / "more.csv", principles_met=True))
    assert (update.added, update.filled, update.total) == (1, 1, 3)
    merged = verbs.read_verbs(work).set_index("verb")
    assert merged.loc["chase", list(verbs.PRINCIPLES)].tolist() == ["yes"] * 4
    assert merged.loc["kick", list(verbs.PRINCIPLES)].tolist() == ["yes", "yes", "yes", "no"]  # the "no" stays
    assert verbs.library(verbs.read_verbs(work)) == ["chase", "feed"]


def test_the_verbs_and_dry_run_commands(tmp_path, server, capsys):
    work = tmp_path / "work"
    assert main(["verbs", str(work), "--verbnet", str(verbnet_corpus(tmp_path / "verbnet"))]) == 0
    assert capsys.readouterr().out.startswith("4 verb(s) added, 0 completed; 4 in ")
    assert main(["run", str(work), "--config", str(config_file(tmp_path, server)), "--dry-run"]) == 2
    assert "no verb has all four principles judged yes yet" in capsys.readouterr().err
    (tmp_path / "library.txt").write_text("chase\nkick\n")
    assert main(["verbs", str(work), "--verbs", str(tmp_path / "library.txt"), "--principles-met"]) == 0
    assert "2 completed; 4 in" in capsys.readouterr().out
    assert main(["run", str(work), "--config", str(config_file(tmp_path, server)), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("scene pairs  (Table 19) gpt-4o-mini: 2 call(s) to make")
    assert out[-1] == "images after review and description: at most 20 more image(s), up to $0.80"
    assert server.requests == []


@pytest.mark.parametrize("text, message", [
    ("verb,commonality\nchase,maybe\n", r"more.csv:2: field 'commonality': 'maybe' is not yes or no"),
    ("verb\nchase!\n", r"more.csv:2: field 'verb': 'chase!' is not a verb"),
    ("word\nchase\n", r"missing column\(s\) \['verb'\]"),
])
def test_a_bad_verb_list_is_named_by_file_line_and_field(tmp_path, text, message):
    (tmp_path / "more.csv").write_text(text)
    with pytest.raises(BuildError, match=message):
        verbs.listed_verbs(tmp_path / "more.csv")


# ---------------------------------------------------------------------------------------------- the run
@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("CAIT_BUILD_KEY", KEY)
    with JudgeServer(keys={KEY}, answer=fake_llm_answer) as running:
        yield running


def llm(server, **changes) -> JudgeConfig:
    return JudgeConfig(**{"name": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini",
                          "base_url": server.openai_url, "api_key_env": "CAIT_BUILD_KEY", "temperature": 0.7,
                          "max_tokens": 4096, "requests_per_second": 1000, "backoff_s": 0, "parse_retries": 1,
                          "price_input_per_mtok": 0.15, "price_output_per_mtok": 0.6, **changes})


def images_endpoint(server, **changes) -> GeneratorConfig:
    return GeneratorConfig(**{"name": "images", "kind": "openai", "model": "gpt-image-1", "base_url": server.openai_url,
                              "api_key_env": "CAIT_BUILD_KEY", "requests_per_second": 1000, "backoff_s": 0,
                              "price_per_image": 0.04, **changes})


def config_file(tmp_path, server) -> Path:
    """The --config file of the command-line tests: the LLM and two generators on the local server."""
    judge = {k: v for k, v in vars(llm(server)).items() if k != "params"}
    generator = {k: v for k, v in vars(images_endpoint(server)).items() if k != "params"}
    gemini = {"name": "gemini", "kind": "gemini", "model": "gemini-2.5-flash-image", "base_url": server.gemini_url,
              "api_key_env": "CAIT_BUILD_KEY", "temperature": 0.7, "requests_per_second": 1000, "backoff_s": 0}
    path = tmp_path / "cait_build.yaml"
    path.write_text(yaml.safe_dump({"judges": [judge], "generators": [generator, gemini]}))
    return path


def library_work(tmp_path, verb_names=("chase", "feed")) -> Path:
    work = tmp_path / "work"
    (tmp_path / "verbs.txt").write_text("\n".join(verb_names))
    verbs.update_verbs(work, verbs.listed_verbs(tmp_path / "verbs.txt", principles_met=True))
    return work


BANK = {scene.uncommon: scene for scene in SCENE_BANK}


def review_answers(tasks, reject=()):
    """Keep the bank's scenes with the bank's settings (reject the scene ids in `reject`)."""
    out = {}
    for data in tasks:
        scene = BANK[data["uncommon_text"]]
        out[data["item_key"]] = {"label": "reject"} if data["item_key"] in reject else {
            "label": "keep", "anthropomorphize": "anthropomorphic" if scene.anthropomorphize else "normal",
            "style": scene.style, "characteristic": f"{review.CATEGORY_OF[scene.characteristic]}: {scene.characteristic}"}
    return out


def write_export(path: Path, exported: list[dict]) -> Path:
    path.write_text(json.dumps(exported))
    return path


def test_the_whole_build_through_the_command_line(tmp_path, server, capsys):
    config, work = config_file(tmp_path, server), library_work(tmp_path)
    assert main(["scenes", str(work), "--config", str(config), "--dry-run"]) == 0
    assert "gpt-4o-mini: 2 call(s) to make (0 of 2 cached)" in capsys.readouterr().out
    assert main(["scenes", str(work), "--config", str(config)]) == 0
    assert "4 scene(s) added" in capsys.readouterr().out
    assert main(["scenes", str(work), "--config", str(config)]) == 0  # nothing left to ask
    assert len(server.answered) == 2
    [system] = {r.body["messages"][0]["content"] for r in server.answered}
    assert system == prompts.scene_pairs_system() and server.answered[0].body["temperature"] == 0.7

    assert main(["review-export", str(work)]) == 0
    tasks = json.loads((work / "review_tasks" / "scene-review_tasks.json").read_text())
    assert [task["data"]["item_key"] for task in tasks] == ["chase-0-01", "chase-0-02", "feed-0-01", "feed-0-02"]
    data = [task["data"] for task in tasks]
    export = write_export(tmp_path / "review_export.json",
                          label_studio_export(data, review_answers(data, reject={"chase-0-02"})))
    assert main(["review-import", str(work), "--export", str(export)]) == 0
    assert "4 scene(s) decided (3 kept); 0 still to review" in capsys.readouterr().out

    assert main(["describe", str(work), "--config", str(config)]) == 0
    assert "3 scene(s) asked about, 2 call(s) made" in capsys.readouterr().out
    assert main(["images", str(work), "--config", str(config), "--dry-run"]) == 0
    assert "images: 3 image(s) to make (0 of 3 made), about $0.12" in capsys.readouterr().out
    assert main(["images", str(work), "--config", str(config)]) == 0
    assert [r.body["size"] for r in server.answered if r.path == "/v1/images/generations"] == ["512x512"] * 3

    assert main(["filter-export", str(work)]) == 0
    filter_tasks = [task["data"] for task in json.loads((work / "filter_tasks" / "image-filter_tasks.json").read_text())]
    assert all(task["image"].startswith("data:image/png;base64,") for task in filter_tasks)
    export = write_export(tmp_path / "filter_export.json",
                          label_studio_export(filter_tasks, {t["item_key"]: {"label": "keep"} for t in filter_tasks}))
    assert main(["filter-import", str(work), "--export", str(export)]) == 0
    assert main(["assemble", str(work)]) == 0
    assert "3 record(s)" in capsys.readouterr().out
    assert lmms_eval_tasks_main(["cait-validate", str(work / "cait")]) == 0

    records = {r["id"]: r for r in read_folder(work / "cait")}
    assert set(records) == {"chase-0-01", "feed-0-01", "feed-0-02"}
    horse = records["feed-0-02"]
    assert (horse["category"], horse["characteristic"], horse["style"], horse["anthropomorphized"]) == (
        "Human-Animal", "Animals providing domestic care to humans", "realistic", True)
    assert (horse["common_text"], horse["uncommon_text"]) == ("A farmer feeds a horse.", "A horse feeds a farmer.")
    assert horse["generator"] == "openai:gpt-image-1"
    assert horse["gt_prompt"].startswith("A realistic image, in daylight: A horse feeds a farmer")
    assert horse["prompts"]["image"] == prompts.image_prompt(horse["gt_prompt"])
    assert horse["prompts"]["scene_pairs"] == f"[system]\n{prompts.scene_pairs_system()}\n[user]\n" + '{ "verb": "feed" }'
    assert horse["prompts"]["description"].startswith("[system]\nYou are given: - verb: feed, - scene_sets: ")
    assert cait_dataset_main(["build", "status", str(work)]) == 0
    assert "cait:         3 records" in capsys.readouterr().out


def run_to_descriptions(work, server) -> None:
    """Scenes, every bank scene kept in the review, and described."""
    scenes.make_scenes(work, llm(server))
    exported = review.export_review(work)
    export = write_export(work / "review.json", label_studio_export(exported.task_set.tasks,
                                                                    review_answers(exported.task_set.tasks)))
    review.import_review(work, annotations_from_export(export, review.CONTROLS))
    describe.describe_scenes(work, llm(server))


def run_to_images(work, server, **generator):
    """run_to_descriptions, then the scenes' images from the local endpoint."""
    run_to_descriptions(work, server)
    return images.generate_images(work, images_endpoint(server, **generator))


def keep_all_images(work):
    exported = filtering.export_filter(work)
    export = write_export(work / "filter.json", label_studio_export(
        exported.task_set.tasks, {t["item_key"]: {"label": "keep"} for t in exported.task_set.tasks}))
    return filtering.import_filter(work, annotations_from_export(export))


def test_edits_are_picked_up_and_only_what_they_change_is_redone(tmp_path, server):
    work = library_work(tmp_path)
    assert run_to_images(work, server).made == 4
    calls = len(server.answered)
    # a person corrects a sentence in review.csv and turns a scene to cartoon: that scene is described again
    table = pd.read_csv(work / "review.csv", dtype=str, keep_default_na=False)
    table.loc[table["scene_id"] == "chase-0-01", ["uncommon_text", "style"]] = ["A small rabbit chases a tiger.", "cartoon"]
    table.to_csv(work / "review.csv", index=False)
    result = describe.describe_scenes(work, llm(server))
    assert (result.asked, result.made) == (1, 1)
    assert "A small rabbit chases a tiger." in server.answered[-1].prompt
    # a person rewrites a description: that scene gets a new image, the others are kept
    lines = [json.loads(line) for line in (work / "descriptions.jsonl").read_text().splitlines()]
    lines[-1]["description"] = "A horse in an apron spoons porridge into a seated farmer's mouth."
    (work / "descriptions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    made = images.generate_images(work, images_endpoint(server))
    assert (made.images, made.made) == (4, 2)
    assert prompts.image_prompt(lines[-1]["description"]) in {r.prompt for r in server.answered[-2:]}
    assert len(server.answered) == calls + 1 + 2
    assert len(images.current_images(work)) == 4


def test_a_killed_image_run_resumes_with_the_images_it_lacks(tmp_path, server):
    work = library_work(tmp_path)
    run_to_descriptions(work, server)
    answered = len(server.answered)
    server.fail_next(1, 500)  # the first image call fails for good (no retries), the others are kept
    generator = images_endpoint(server, max_retries=0, concurrency=1)
    with pytest.raises(JudgeError, match=r"generator 'images': request failed \(500\) after 1 attempt"):
        images.generate_images(work, generator)
    assert len(server.answered) == answered  # no image started after the failure
    server.fail_next(1, 503)  # retried
    result = images.generate_images(work, images_endpoint(server))
    assert (result.images, result.made) == (4, 4)
    assert images.generate_images(work, images_endpoint(server)).made == 0
    image_file = work / images.current_images(work)[0]["file"]
    image_file.write_bytes(b"not the image")  # a damaged file is made again
    assert images.generate_images(work, images_endpoint(server)).made == 1


def test_samples_draw_more_scenes_per_verb_and_unparsable_answers_are_counted(tmp_path, server):
    work = library_work(tmp_path, ("chase", "juggle"))
    server.answer = lambda prompt: "I cannot do that." if "juggle" in prompt else fake_llm_answer(prompt)
    result = scenes.make_scenes(work, llm(server), samples=2, per_verb=3)
    assert (result.asked, result.made, result.scenes) == (4, 4, 4)
    assert result.unparsed == ["verb 'juggle' sample 0: not a JSON object (Expecting value at character 0)",
                               "verb 'juggle' sample 1: not a JSON object (Expecting value at character 0)"]
    assert sum("juggle" in r.prompt for r in server.answered) == 4  # asked again once (parse_retries 1)
    assert [s["scene_id"] for s in scenes.read_scenes(work)] == ["chase-0-01", "chase-0-02", "chase-1-01", "chase-1-02"]
    assert "with 3 groups for each verb" in server.answered[0].body["messages"][0]["content"]
    assert scenes.estimate_scenes(work, llm(server), samples=2, per_verb=3).calls == 0  # cached, even the unparsed


def test_several_annotators_must_agree_and_decided_rows_are_never_overwritten(tmp_path, server):
    work = library_work(tmp_path, ("chase",))
    scenes.make_scenes(work, llm(server))
    tasks = review.export_review(work).task_set.tasks
    first = label_studio_export(tasks, review_answers(tasks))
    second = label_studio_export(tasks, review_answers(tasks, reject={"chase-0-02"}), annotator=2)
    incomplete = label_studio_export(tasks, {"chase-0-01": {"label": "keep", "style": "cartoon"},
                                             "chase-0-02": {"label": "keep", "style": "cartoon"}}, annotator=3)
    for task, other in zip(first, second):
        task["annotations"] += [{**a, "id": a["id"] + 100} for a in other["annotations"]]
    result = review.import_review(work, annotations_from_export(write_export(tmp_path / "a.json", first),
                                                                review.CONTROLS))
    assert (result.decided, result.kept, result.undecided) == (1, 1, 1)
    disagreement = f"chase-0-02: annotators disagree: keep, normal, cartoon, Animal-Animal: {PREDATOR_PREY} | reject"
    assert result.conflicts == [disagreement]
    table = review.read_review(work).set_index("scene_id")
    assert table.loc["chase-0-02", "note"].startswith("annotators disagree")
    assert review.export_review(work).undecided == 1  # the disagreement goes back to the annotators
    result = review.import_review(work, annotations_from_export(write_export(tmp_path / "b.json", incomplete),
                                                                review.CONTROLS))
    assert result.conflicts[0].startswith("chase-0-01: annotation 1: kept without anthropomorphize and characteristic")
    assert (result.decided, result.differing) == (0, 0)
    again = label_studio_export(tasks, review_answers(tasks, reject={"chase-0-01"}))
    result = review.import_review(work, annotations_from_export(write_export(tmp_path / "c.json", again),
                                                                review.CONTROLS))
    assert (result.decided, result.differing) == (1, 1)  # chase-0-02 decided now; chase-0-01 stays kept
    assert review.read_review(work).set_index("scene_id").loc["chase-0-01", "keep"] == "yes"


@pytest.mark.parametrize("change, message", [
    ({"keep": "perhaps"}, r"review.csv:2: field 'keep': 'perhaps' is not yes or no"),
    ({"keep": "yes", "style": ""}, r"review.csv:2: a kept scene needs style"),
    ({"style": "sketch"}, r"review.csv:2: field 'style' is 'sketch'"),
    ({"characteristic": "Inanimate objects gaining autonomy", "category": "Human-Human"},
     r"review.csv:2: field 'category' is 'Human-Human', but characteristic"),
])
def test_a_bad_edit_of_review_csv_is_named_by_line_and_field(tmp_path, server, change, message):
    work = library_work(tmp_path, ("chase",))
    scenes.make_scenes(work, llm(server))
    review.export_review(work)
    table = pd.read_csv(work / "review.csv", dtype=str, keep_default_na=False)
    table.loc[0, ["keep", "anthropomorphize", "style", "characteristic"]] = ["keep", "normal", "cartoon", PREDATOR_PREY]
    for column, value in change.items():
        table.loc[0, column] = value
    table.to_csv(work / "review.csv", index=False)
    with pytest.raises(BuildError, match=message):
        review.read_review(work)


def test_filtering_steers_toward_table_1_and_assembly_draws_to_the_quotas(tmp_path, server):
    work = library_work(tmp_path)
    run_to_images(work, server, size=64)
    images.generate_images(work, images_endpoint(server, size=64), candidates=2)
    exported = filtering.export_filter(work)
    assert exported.undecided == 8
    keys = [t["item_key"] for t in exported.task_set.tasks]
    # keep candidate 0 of the two chase scenes; reject the rest of chase-0-01
    answers_ = {key: {"label": "keep" if key.startswith(("chase-0-01-0", "chase-0-02-0")) else "reject"}
                for key in keys if key.startswith("chase")}
    export = write_export(tmp_path / "f.json", label_studio_export(
        [t for t in exported.task_set.tasks if t["item_key"] in answers_], answers_))
    filtering.import_filter(work, annotations_from_export(export))
    # for 8 scenes, predator-prey's quota is 1 (18% of 8): its images are no longer asked about
    steered = filtering.export_filter(work, size=8)
    assert (steered.undecided, steered.quota_full) == (4, 0)
    table = filtering.proportions(work, size=8).set_index("characteristic")
    assert table.loc[PREDATOR_PREY, ["scenes", "quota", "missing"]].tolist() == [2, 1, 0]
    assert table.loc[CARETAKING, ["scenes", "quota", "missing"]].tolist() == [0, 1, 1]
    keep = {t["item_key"]: {"label": "keep"} for t in steered.task_set.tasks}
    filtering.import_filter(work, annotations_from_export(write_export(tmp_path / "g.json", label_studio_export(
        steered.task_set.tasks, keep))))
    with pytest.raises(BuildError, match=r"2 scene\(s\) have more than one kept image, e.g. feed-0-01"):
        assemble.assemble(work)
    table = pd.read_csv(work / "filter.csv", dtype=str, keep_default_na=False)
    table.loc[table["image"].str.contains("feed-0-0[12]-1-"), "keep"] = "no"
    table.to_csv(work / "filter.csv", index=False)
    built = assemble.assemble(work, size=8, seed=0)
    assert (built.records, built.left_out) == (3, 1)  # one predator-prey scene beyond its quota of 1
    selection = pd.read_csv(work / "selection.csv")
    assert selection.groupby("characteristic")["selected"].apply(lambda s: (s == "yes").sum()).to_dict() == {
        "Animals providing domestic care to humans": 1, CARETAKING: 1, PREDATOR_PREY: 1}
    reached = built.proportions.set_index("characteristic")
    assert reached.loc[PREDATOR_PREY, ["scenes", "share", "table1_share"]].tolist() == [1, round(1 / 3, 4), 0.18]
    assert (work / "proportions.csv").exists() and len(read_folder(work / "cait")) == 3


def test_the_dry_run_counts_calls_images_and_cost_and_bounds_what_reviews_may_add(tmp_path, server):
    work = library_work(tmp_path)
    settings = runner.BuildSettings(llm=llm(server), generator=images_endpoint(server), per_verb=2, candidates=2)
    lines = runner.estimate(work, settings)
    assert lines[0].startswith("scene pairs  (Table 19) gpt-4o-mini: 2 call(s) to make (0 of 2 cached)")
    assert lines[0].endswith("<= 8,192 output tokens, about $0.01")  # max_tokens bounds the output
    assert lines[1] == "descriptions after review: at most 2 more call(s) for up to 4 scene(s)"
    assert lines[3] == "images after review and description: at most 8 more image(s), up to $0.32"
    assert server.requests == []  # a dry run asks nothing


def test_run_does_every_automatic_stage_and_lists_the_pending_human_work(tmp_path, server):
    work = library_work(tmp_path)
    said = []
    settings = runner.BuildSettings(llm=llm(server), generator=images_endpoint(server, size=64))
    runner.run(work, settings, said.append)
    assert said[-1] == "pending human work: 4 scene(s) to review (import the annotations, then run again)"
    tasks = review.export_review(work).task_set.tasks
    review.import_review(work, annotations_from_export(write_export(
        tmp_path / "r.json", label_studio_export(tasks, review_answers(tasks))), review.CONTROLS))
    runner.run(work, settings, said.append)
    assert said[-1] == "pending human work: 4 image(s) to filter (import the annotations, then run again)"
    keep_all_images(work)
    runner.run(work, settings, said.append)
    assert said[-2:] == [f"cait: 4 record(s) in {work / 'cait'}", "pending human work: none"]


def test_a_run_whose_images_were_all_refused_has_nothing_to_filter(tmp_path, server):
    work = library_work(tmp_path, ("chase",))
    server.image_answer = lambda prompt, size: None
    run_to_images(work, server)
    said = []
    runner.run(work, runner.BuildSettings(llm=llm(server), generator=images_endpoint(server)), said.append)
    assert said[-2:] == ["images: 0 made now, 2 needed, 2 refused", "pending human work: none"]
    assert not (work / "filter.csv").exists()


# ---------------------------------------------------------------------------------------------- generators
def test_gemini_through_google_genai_stores_what_it_returns_and_records_refusals(tmp_path, server):
    work = library_work(tmp_path, ("chase",))
    gemini = GeneratorConfig(name="gemini", kind="gemini", model="gemini-2.5-flash-image", base_url=server.gemini_url,
                             api_key_env="CAIT_BUILD_KEY", temperature=0.7, requests_per_second=1000, backoff_s=0)
    server.image_answer = lambda prompt, size: None if "mouse" in prompt else drawn_png(prompt, size)
    scenes.make_scenes(work, llm(server))
    tasks = review.export_review(work).task_set.tasks
    review.import_review(work, annotations_from_export(write_export(
        tmp_path / "r.json", label_studio_export(tasks, review_answers(tasks))), review.CONTROLS))
    describe.describe_scenes(work, llm(server))
    server.fail_next(1, 503)
    result = images.generate_images(work, gemini)
    assert (result.images, result.made, result.refused) == (2, 2, 1)
    calls = [r for r in server.requests if r.model == "gemini-2.5-flash-image"]
    assert [r.status for r in calls] == [503, 200, 200]
    assert calls[-1].body["generationConfig"]["temperature"] == 0.7
    assert calls[-1].body["generationConfig"]["responseModalities"] == ["IMAGE"]
    [made] = images.current_images(work)
    assert (made["width"], made["height"], made["label"]) == (1024, 1024, "gemini:gemini-2.5-flash-image")
    refused = [r for r in images.image_store(work).answers.values() if r["refused"]]
    assert refused[0]["refused"].startswith("no image in the answer (")
    assert images.generate_images(work, gemini).made == 0  # a refusal is not asked again ...
    assert images.generate_images(work, gemini, retry_refused=True).made == 1  # ... unless asked to


def test_an_openai_content_policy_refusal_is_an_outcome_not_an_error(tmp_path, server):
    work = library_work(tmp_path, ("feed",))
    server.image_answer = lambda prompt, size: None if "baby" in prompt else drawn_png(prompt, size)
    result = run_to_images(work, server)
    assert (result.images, result.made, result.refused) == (2, 2, 1)
    refused = [r for r in images.image_store(work).answers.values() if r["refused"]]
    assert refused[0]["refused"].startswith("content_policy_violation")


@pytest.fixture(scope="module")
def tiny_pipeline(tmp_path_factory) -> Path:
    return ensure_tiny_diffusion(tmp_path_factory.mktemp("diffusion") / "tiny-diffusion")


def test_a_local_diffusers_pipeline_makes_seeded_images_and_counts_cut_prompts(tmp_path, server, tiny_pipeline):
    work = library_work(tmp_path, ("chase",))
    run_to_images(work, server)
    table22 = GeneratorConfig(name="local", kind="diffusers", model=str(tiny_pipeline), size=64, steps=2, device="cpu")
    result = images.generate_images(work, table22)
    assert (result.images, result.made, result.truncated) == (2, 2, 2)  # the tiny tokenizer reads 77 characters
    made = [r for r in images.current_images(work) if r["generator"] == "local"]
    assert {(r["width"], r["height"]) for r in made} == {(64, 64)}
    # Table 22's preamble fills the 77 tokens, so the two scenes' prompts read the same and so do their images:
    # that is why a generator may be given the description alone.
    assert len({r["sha256"] for r in made}) == 1
    described = GeneratorConfig(name="local-description", kind="diffusers", model=str(tiny_pipeline), size=64,
                                steps=2, device="cpu", prompt="description")
    assert images.generate_images(work, described, candidates=2).made == 4
    made = [r for r in images.current_images(work) if r["generator"] == "local-description"]
    assert len({r["sha256"] for r in made}) == 4  # two scenes x two seeds
    (work / made[-1]["file"]).unlink()
    assert images.generate_images(work, described, candidates=2).made == 1
    remade = {r["file"]: r["sha256"] for r in images.current_images(work)}
    assert remade[made[-1]["file"]] == made[-1]["sha256"]  # the same seed, the same image


@pytest.mark.parametrize("entry, message", [
    ({"kind": "dalle"}, "field 'kind' is 'dalle'"),
    ({"size": 0}, "field 'size' must be a positive whole number"),
    ({"temperature": 0.7}, "field 'temperature' is sent to gemini generators only"),
    ({"colour": "red"}, "unknown field 'colour'"),
    ({"prompt": "caption"}, "field 'prompt' is 'caption'"),
])
def test_a_bad_generator_entry_is_named(tmp_path, entry, message):
    path = tmp_path / "generators.yaml"
    path.write_text(yaml.safe_dump({"generators": [{"name": "g", "kind": "openai", "model": "m", **entry}]}))
    with pytest.raises(BuildError, match=message):
        load_generators(path)


def test_the_example_configuration_holds_the_papers_settings():
    example = Path(__file__).parents[2] / "model_configs" / "cait_build.example.yaml"
    from invscale.judges import load_judges

    judge = load_judges(example)[0]
    assert (judge.model, judge.temperature) == (prompts.LLM_MODEL, prompts.LLM_TEMPERATURE)
    gemini = load_generators(example)[0]
    assert (gemini.kind, gemini.model, gemini.temperature, gemini.size) == (
        "gemini", prompts.IMAGE_MODEL, prompts.IMAGE_TEMPERATURE, 512)


def test_the_demo_builds_a_valid_cait_folder(tmp_path, tiny_pipeline):
    from invscale_demo.cait_build_demo import build_demo_cait

    shutil.copytree(tiny_pipeline, tmp_path / "models" / "tiny-diffusion")
    folder = build_demo_cait(tmp_path, say=lambda line: None, image_size=64)
    records = read_folder(folder)
    assert [r["id"] for r in records] == ["chase-0-01", "chase-0-02", "feed-0-01", "feed-0-02"]
    assert {r["generator"].split(":")[0] for r in records} == {"diffusers"}
    cache = JudgeCache(tmp_path / "cait_build" / "llm_cache" / "demo-llm.jsonl")
    assert len(cache.answers) == 4  # 2 scene-pair calls, 2 description calls
    build_demo_cait(tmp_path, say=lambda line: None, image_size=64)  # a rerun makes no call
    assert len(JudgeCache(tmp_path / "cait_build" / "llm_cache" / "demo-llm.jsonl").answers) == 4
