"""`python -m invscale_demo --cait-build`: CAIT construction (cait_dataset/construction) end to end, offline, on a
handful of scenes, then the CAIT tasks on what it built.

An in-process stand-in for the LLM (an OpenAI-compatible chat endpoint on 127.0.0.1 answering the Table 19
and Table 21 prompts from a small scene bank), a tiny random-weight diffusers pipeline for the images
(invscale_demo/tiny_diffusion.py, 512x512, 2 steps), and a demo annotator whose decisions go through the
same Label Studio export-file import a person's would: 2 verbs x 2 scene pairs -> review -> descriptions
-> images -> filtering -> the CAIT folder, validated, then lmms-eval's CAIT tasks on the smallest tiny model
of each demo family.

`fake_llm_answer` is also the tests' LLM (tests/cait_dataset/test_cait_build.py).
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PREDATOR_PREY = "Transposition of traditional predator and prey roles"


@dataclass(frozen=True)
class BankScene:
    verb: str
    common: str
    uncommon: str
    characteristic: str
    style: str
    anthropomorphize: bool


SCENE_BANK = (
    BankScene("chase", "A tiger chases a rabbit.", "A rabbit chases a tiger.", PREDATOR_PREY, "realistic", False),
    BankScene("chase", "A cat chases a mouse.", "A mouse chases a cat.", PREDATOR_PREY, "cartoon", False),
    BankScene("feed", "A mother feeds her baby.", "A baby feeds its mother.",
              "Reversal of caretaking duties across generations", "cartoon", False),
    BankScene("feed", "A farmer feeds a horse.", "A horse feeds a farmer.",
              "Animals providing domestic care to humans", "realistic", True),
)
DEMO_VERBS = ("chase", "feed")
# For verbs outside the bank: (agent, patient) pairs whose inversion is counter-intuitive.
GENERIC_PAIRS = (("lion", "mouse"), ("teacher", "student"), ("farmer", "sheep"))


def third_person(verb: str) -> str:
    first, _, rest = verb.partition(" ")
    if re.search(r"(s|sh|ch|x|z|o)$", first):
        first += "es"
    elif re.search(r"[^aeiou]y$", first):
        first = first[:-1] + "ies"
    else:
        first += "s"
    return f"{first} {rest}".strip()


def scene_pairs_answer(verb: str) -> dict:
    """Table 19's output for a verb: the bank's pairs, or generic ones."""
    bank = [scene for scene in SCENE_BANK if scene.verb == verb]
    pairs = [(scene.common, scene.uncommon) for scene in bank] or [
        (f"A {agent} {third_person(verb)} a {patient}.", f"A {patient} {third_person(verb)} a {agent}.")
        for agent, patient in GENERIC_PAIRS]
    return {"verb": verb, "scene_sets": [{"id": number, "common": [common], "uncommon": [uncommon]}
                                         for number, (common, uncommon) in enumerate(pairs, 1)]}


def descriptions_answer(verb: str, scene_sets: list[dict]) -> dict:
    """Table 21's output: one description per scene set, built from its sentence and settings."""
    records = []
    for scene in scene_sets:
        uncommon = scene["uncommon"][0] if isinstance(scene["uncommon"], list) else scene["uncommon"]
        traits = " The acting subject stands upright with human-like hands and expression." \
            if scene.get("anthropomorphize") else ""
        records.append({"scene_id": scene["id"], "uncommon_text": uncommon, "style": scene.get("style"),
                        "uncommon_image_description": f"A {scene.get('style', 'realistic')} image, in daylight: "
                                                      f"{uncommon.rstrip('.')}, seen clearly in the centre.{traits}"})
    return {"verb": verb, "records": records}


def fake_llm_answer(prompt: str) -> str:
    """The answer to a Table 19 user prompt ({"verb": ...}) or a Table 21 one ({"verb", "scene_sets"})."""
    try:
        data = json.loads(prompt)
    except json.JSONDecodeError:
        return "This is not a CAIT construction prompt."
    if isinstance(data, dict) and set(data) == {"verb"}:
        return json.dumps(scene_pairs_answer(data["verb"]))
    if isinstance(data, dict) and "scene_sets" in data:
        return json.dumps(descriptions_answer(data["verb"], data["scene_sets"]))
    return "This is not a CAIT construction prompt."


class FakeChatEndpoint:
    """POST /v1/chat/completions on 127.0.0.1, answered by fake_llm_answer (the last user message)."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                content = body["messages"][-1]["content"]
                text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
                data = json.dumps({"id": "demo", "object": "chat.completion", "created": 0, "model": body.get("model"),
                                   "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                       "role": "assistant", "content": fake_llm_answer(text)}}]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeChatEndpoint:
        threading.Thread(target=self._server.serve_forever, daemon=True, name="fake-llm").start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def label_studio_export(tasks: list[dict], answers: dict[str, dict[str, str]], annotator: int = 1) -> list[dict]:
    """A Label Studio JSON export of `tasks` (task data records with item_key) with one annotation each:
    answers[item_key] maps each choice control to its choice."""
    exported = []
    for number, data in enumerate(tasks, 1):
        result = [{"from_name": control, "to_name": "image", "type": "choices", "value": {"choices": [choice]}}
                  for control, choice in answers[data["item_key"]].items()]
        exported.append({"id": number, "data": data, "annotations": [{
            "id": number, "completed_by": annotator, "result": result, "was_cancelled": False, "lead_time": 3.0,
            "created_at": "2026-01-01T00:00:00Z"}]})
    return exported


def demo_review_answers(tasks: list[dict]) -> dict[str, dict[str, str]]:
    """The demo annotator keeps every bank scene with the bank's settings (and rejects anything else)."""
    from cait_dataset.construction.review import ANTHROPOMORPHIC, CATEGORY_OF, KEEP, NORMAL, REJECT

    bank = {scene.uncommon: scene for scene in SCENE_BANK}
    answers = {}
    for data in tasks:
        scene = bank.get(data["uncommon_text"])
        answers[data["item_key"]] = {"label": REJECT} if scene is None else {
            "label": KEEP, "anthropomorphize": ANTHROPOMORPHIC if scene.anthropomorphize else NORMAL,
            "style": scene.style, "characteristic": f"{CATEGORY_OF[scene.characteristic]}: {scene.characteristic}"}
    return answers


def build_demo_cait(out: Path, say=print, image_size: int = 512) -> Path:
    """Build the demo's CAIT folder under OUT/cait_build (every stage resumes: a rerun makes no call)."""
    from diffusers.utils import logging as diffusers_logging

    from cait_dataset.construction import assemble, describe, filtering, images, review, scenes, verbs
    from cait_dataset.construction.generators import GeneratorConfig
    from invscale.label_studio import annotations_from_export
    from invscale.judges import JudgeConfig

    from .tiny_diffusion import ensure_tiny_diffusion

    work = Path(out) / "cait_build"
    work.mkdir(parents=True, exist_ok=True)
    verb_list = work / "demo_verbs.txt"
    verb_list.write_text("\n".join(DEMO_VERBS) + "\n")
    verbs.update_verbs(work, verbs.listed_verbs(verb_list, principles_met=True))
    diffusers_logging.set_verbosity_error()  # the tiny tokenizer reads 77 characters: images.jsonl counts the cut
    pipeline = ensure_tiny_diffusion(Path(out) / "models" / "tiny-diffusion")
    generator = GeneratorConfig(name="tiny-diffusion", kind="diffusers", model=str(pipeline), size=image_size, steps=2,
                                device="cpu")
    started = time.time()
    with FakeChatEndpoint() as endpoint:
        llm = JudgeConfig(name="demo-llm", provider="openai", model="gpt-4o-mini", base_url=endpoint.url,
                          temperature=0.7, max_tokens=4096, requests_per_second=100)
        made = scenes.make_scenes(work, llm, per_verb=2)
        exported = review.export_review(work)
        if exported.task_set.tasks:
            export_file = work / "review_tasks" / "demo_annotations.json"
            export_file.write_text(json.dumps(label_studio_export(exported.task_set.tasks,
                                                                 demo_review_answers(exported.task_set.tasks))))
            review.import_review(work, annotations_from_export(export_file, review.CONTROLS))
        described = describe.describe_scenes(work, llm)
    made_images = images.generate_images(work, generator)
    filtered = filtering.export_filter(work)
    if filtered.task_set.tasks:
        export_file = work / "filter_tasks" / "demo_annotations.json"
        keep_all = {data["item_key"]: {"label": review.KEEP} for data in filtered.task_set.tasks}
        export_file.write_text(json.dumps(label_studio_export(filtered.task_set.tasks, keep_all)))
        filtering.import_filter(work, annotations_from_export(export_file))
    built = assemble.assemble(work)
    say(f"[demo] cait-build: {made.total} scene pairs ({made.made} LLM calls), {described.made} description call(s), "
        f"{made_images.made} image(s) made, {built.records} CAIT records in {built.folder} "
        f"({time.time() - started:.0f} s)")
    return built.folder
