"""Small local copies of the nine benchmark splits (and a CAIT-format folder), built in code, with the hub datasets' real column
names and types (multi-image BLINK, MMMU image_1..7 with placeholders, MMBench hint NaN/"nan",
ScienceQA integer answers and text-only rows, MathVista list/float answers and a metadata struct,
VLMEvalKit's AI2D TSV with base64 images).

They are written in every format the local override accepts (parquet, JSON lines, TSV,
save_to_disk), so the demo and the tests exercise each loading path. `write_fixtures(root)` returns
the `--data TASK=PATH` overrides that point the tasks at them.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import datasets
import pandas as pd
from datasets import Features, Image, List, Value
from PIL import Image as PILImage
from PIL import ImageDraw

from lmms_eval_tasks import cait

COLOURS = {"red": (220, 30, 30), "green": (30, 170, 30), "blue": (30, 30, 220), "yellow": (230, 210, 20)}


def drawn_image(seed: int, size: int = 64) -> PILImage.Image:
    """A grey canvas with a coloured square whose colour and place depend on the seed."""
    name = list(COLOURS)[seed % len(COLOURS)]
    image = PILImage.new("RGB", (size, size), (128, 128, 128))
    offset = (seed * 7) % (size // 2)
    ImageDraw.Draw(image).rectangle([offset, offset, offset + size // 3, offset + size // 3], fill=COLOURS[name])
    return image


def _png_bytes(image: PILImage.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _dataset(rows: list[dict], features: Features) -> datasets.Dataset:
    return datasets.Dataset.from_list(rows, features=features)


def mmt_bench_rows(count: int = 6) -> tuple[list[dict], Features]:
    letters = "ABCDEFGHI"
    layouts = [(4, "autonomous_driving"), (2, "gui_navigation"), (5, "threed"), (4, "autonomous_driving"),
               (9, "visual_recognition"), (4, "gui_navigation")]
    rows = []
    for i in range(count):
        n, l2 = layouts[i % len(layouts)]
        row = {"index": 1000 + i, "question": f"What colour is the square in scene {i}?", "answer": letters[i % n],
               "category": f"{l2}_fine", "l2-category": l2, "image": drawn_image(i)}
        row.update({letter: (f"colour {letter.lower()}{i}" if k < n else None) for k, letter in enumerate(letters)})
        rows.append(row)
    features = Features({"index": Value("int64"), "question": Value("string"),
                         **{letter: Value("string") for letter in letters}, "answer": Value("string"),
                         "category": Value("string"), "l2-category": Value("string"), "image": Image()})
    return rows, features


MMMU_FEATURES = Features({
    "id": Value("string"), "question": Value("string"), "options": Value("string"), "explanation": Value("string"),
    **{f"image_{n}": Image() for n in range(1, 8)}, "img_type": Value("string"), "answer": Value("string"),
    "topic_difficulty": Value("string"), "question_type": Value("string"), "subfield": Value("string"),
})


def mmmu_rows(split: str, with_answers: bool = True, count: int = 4) -> list[dict]:
    subjects = [("Chemistry", "Organic Chemistry"), ("Finance", "Investment"), ("Physics", "Thermodynamics")]
    rows = []
    for i in range(count):
        subject, subfield = subjects[i % len(subjects)]
        open_question = i % 4 == 3
        images = {f"image_{n}": None for n in range(1, 8)}
        images["image_1"] = drawn_image(i)
        question = f"Look at <image 1>. Which compound is shown in case {i}?"
        if i % 4 == 1:  # two images, the second referenced from an option
            images["image_2"] = drawn_image(i + 5)
            question = f"Compare <image 1> with the options. Which is cheaper in case {i}?"
        options = [] if open_question else ["<image 2>" if i % 4 == 1 and k == 2 else f"choice {k} of {i}" for k in range(4)]
        answer = ("['24', '24.0']" if open_question else "ABCD"[i % 4]) if with_answers else "?"
        rows.append({"id": f"{split}_{subject}_{i + 1}", "question": question if not open_question else
                     f"Compute the yield shown in <image 1> (case {i}).", "options": str(options), "explanation": "",
                     **images, "img_type": "['Diagrams']", "answer": answer, "topic_difficulty": "Medium",
                     "question_type": "open" if open_question else "multiple-choice", "subfield": subfield})
    return rows


def scienceqa_rows(count: int = 7) -> tuple[list[dict], Features]:
    rows = []
    for i in range(count):
        n = 2 + i % 4  # 2..5 choices
        rows.append({"image": drawn_image(i) if i % 7 != 2 else None,  # every 7th, from row 2, is text-only
                     "question": f"Which force acts on object {i}?", "choices": [f"force {k}" for k in range(n)],
                     "answer": i % n, "hint": "" if i % 2 else "The object is at rest.", "task": "closed choice",
                     "grade": "grade5", "subject": "natural science", "topic": "physics",
                     "category": ["Velocity, acceleration, and forces", "Basic economic principles"][i % 2],
                     "skill": "Identify forces", "lecture": "", "solution": ""})
    features = Features({"image": Image(), "question": Value("string"), "choices": List(Value("string")),
                         "answer": Value("int64"), "hint": Value("string"), "task": Value("string"),
                         "grade": Value("string"), "subject": Value("string"), "topic": Value("string"),
                         "category": Value("string"), "skill": Value("string"), "lecture": Value("string"),
                         "solution": Value("string")})
    return rows, features


def mme_rows(image_dir: Path, images: int = 3) -> list[dict]:
    """JSON lines with image file paths (the json override path); two questions per image as in MME."""
    image_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(images):
        category = ["existence", "count", "landmark"][i % 3]
        path = image_dir / f"{category}_{i}.png"
        drawn_image(i).save(path)
        for answer in ("Yes", "No"):
            rows.append({"question_id": f"{category}/{i:04d}.png", "image": str(path), "answer": answer,
                         "question": f"Is there a {'red' if answer == 'Yes' else 'purple'} square? Please answer yes or no.",
                         "category": category})
    return rows


def ai2d_rows(count: int = 5) -> list[dict]:
    """VLMEvalKit's AI2D_TEST.tsv columns, images as base64 PNG."""
    return [{"index": 2000 + i, "image": base64.b64encode(_png_bytes(drawn_image(i))).decode(),
             "question": f"Which stage follows stage {i} in the diagram?", "A": f"stage {i + 1}", "B": f"stage {i + 2}",
             "C": f"stage {i + 3}", "D": f"stage {i + 4}", "answer": "ABCD"[i % 4],
             "category": ["foodChainsWebs", "lifeCycles"][i % 2]} for i in range(count)]


def mathvista_rows(count: int = 6) -> tuple[list[dict], Features]:
    specs = [  # (question_type, answer_type, choices, answer, precision, task)
        ("multi_choice", "text", ["3", "4", "5", "6"], "5", None, "geometry problem solving"),
        ("free_form", "integer", None, "12", None, "math word problem"),
        ("free_form", "float", None, "1.45", 2.0, "figure question answering"),
        ("free_form", "list", None, "[2, 7, 9]", None, "figure question answering"),
        ("multi_choice", "text", ["yes", "no"], "no", None, "visual question answering"),
        ("free_form", "float", None, "0.6", 1.0, "textbook question answering"),
    ]
    rows = []
    for i in range(count):
        question_type, answer_type, choices, answer, precision, task = specs[i % len(specs)]
        question = f"What is the value asked for in figure {i}?"
        if choices:
            query = ("Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, D, "
                     f"at the end.\nQuestion: {question}\nChoices:\n" +
                     "\n".join(f"({chr(65 + k)}) {c}" for k, c in enumerate(choices)))
        else:
            kind = {"integer": "an integer answer", "float": f"a floating-point number with {int(precision or 0)} decimal places",
                    "list": "a Python list as an answer"}[answer_type]
            query = f"Hint: Please answer the question requiring {kind} and provide the final value at the end.\nQuestion: {question}"
        rows.append({"pid": str(i + 1), "question": question, "image": f"images/{i + 1}.jpg", "decoded_image": drawn_image(i),
                     "choices": choices, "unit": None, "precision": precision, "answer": answer,
                     "question_type": question_type, "answer_type": answer_type,
                     "metadata": {"category": "math-targeted-vqa", "context": "scientific figure", "grade": "high school",
                                  "img_height": 64, "img_width": 64, "language": "english", "skills": ["arithmetic reasoning"],
                                  "source": "fixture", "split": "testmini", "task": task},
                     "query": query})
    features = Features({
        "pid": Value("string"), "question": Value("string"), "image": Value("string"), "decoded_image": Image(),
        "choices": List(Value("string")), "unit": Value("string"), "precision": Value("float64"),
        "answer": Value("string"), "question_type": Value("string"), "answer_type": Value("string"),
        "metadata": {"category": Value("string"), "context": Value("string"), "grade": Value("string"),
                     "img_height": Value("int64"), "img_width": Value("int64"), "language": Value("string"),
                     "skills": List(Value("string")), "source": Value("string"), "split": Value("string"),
                     "task": Value("string")},
        "query": Value("string")})
    return rows, features


def blink_rows(count: int = 6) -> tuple[list[dict], Features]:
    specs = [("Jigsaw", 2, 2), ("Multi-view_Reasoning", 2, 2), ("Forensic_Detection", 4, 4),
             ("Relative_Depth", 1, 2), ("Art_Style", 3, 2), ("Counting", 1, 4)]
    rows = []
    for i in range(count):
        sub_task, n_images, n_choices = specs[i % len(specs)]
        choices = [f"the {['first', 'second', 'third', 'fourth'][k]} image" for k in range(n_choices)]
        prompt = (f"Which image fits the reference best in sub-task {sub_task}?\nSelect from the following choices.\n" +
                  "\n".join(f"({chr(65 + k)}) {c}" for k, c in enumerate(choices)))
        rows.append({"idx": f"val_{sub_task}_{i + 1}", "question": "Which image fits the reference best?",
                     "sub_task": sub_task.replace("_", " "), "choices": choices, "answer": f"({chr(65 + i % n_choices)})",
                     "prompt": prompt, "explanation": "",
                     **{f"image_{n}": drawn_image(i + n) if n <= n_images else None for n in range(1, 5)}})
    features = Features({"idx": Value("string"), "question": Value("string"), "sub_task": Value("string"),
                         "choices": List(Value("string")), "answer": Value("string"), "prompt": Value("string"),
                         "explanation": Value("string"), **{f"image_{n}": Image() for n in range(1, 5)}})
    return rows, features


def mmbench_rows(count: int = 6) -> tuple[list[dict], Features]:
    rows = []
    hints = [None, "nan", "The picture shows a kitchen.", None, "A chart of sales.", None]
    l2 = ["coarse_perception", "attribute_reasoning", "logic_reasoning"]
    for i in range(count):
        block, j = divmod(i, 6)
        two_options = j == 3
        index = 10 * block + j if j < 4 else 1_000_000 + 10 * block + j - 4  # circular copies of questions 0 and 1
        rows.append({"index": index, "question": f"What is in the picture {i % 4}?", "hint": hints[j],
                     "A": f"thing a{i % 4}", "B": f"thing b{i % 4}", "C": None if two_options else f"thing c{i % 4}",
                     "D": None if two_options else f"thing d{i % 4}", "answer": "AB"[i % 2],
                     "category": "image_scene", "L2-category": l2[i % 3], "source": "fixture", "split": "dev",
                     "image": drawn_image(i)})
    features = Features({"index": Value("int64"), "question": Value("string"), "hint": Value("string"),
                         **{letter: Value("string") for letter in "ABCD"}, "answer": Value("string"),
                         "category": Value("string"), "L2-category": Value("string"), "source": Value("string"),
                         "split": Value("string"), "image": Image()})
    return rows, features


def write_fixtures(root: Path, scale: int = 1) -> dict[str, str]:
    """Write every fixture under root, `scale` times the default number of rows; return {base task: path}
    for `export_tasks(..., data=...)`."""
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)

    def parquet(name: str, rows: list[dict], features: Features) -> str:
        path = root / f"{name}.parquet"
        _dataset(rows, features).to_parquet(str(path))
        return str(path)

    data = {
        "invscale_mmtbench_val": parquet("mmtbench_val", *mmt_bench_rows(6 * scale)),
        "invscale_mmmu_dev_val": ",".join([parquet("mmmu_dev", mmmu_rows("dev", count=4 * scale), MMMU_FEATURES),
                                           parquet("mmmu_validation", mmmu_rows("validation", count=4 * scale), MMMU_FEATURES)]),
        "invscale_mmmu_test": parquet("mmmu_test", mmmu_rows("test", with_answers=False, count=4 * scale), MMMU_FEATURES),
        "invscale_scienceqa_img_test": parquet("scienceqa_img_test", *scienceqa_rows(7 * scale)),
        "invscale_mathvista_testmini": parquet("mathvista_testmini", *mathvista_rows(6 * scale)),
        "invscale_mmbench_dev_en": parquet("mmbench_dev_en", *mmbench_rows(6 * scale)),
    }
    mme_path = root / "mme_test.jsonl"
    mme_path.write_text("".join(json.dumps(row) + "\n" for row in mme_rows(root / "mme_images", 3 * scale)))
    data["invscale_mme_test"] = str(mme_path)

    ai2d_path = root / "AI2D_TEST.tsv"
    pd.DataFrame(ai2d_rows(5 * scale)).to_csv(ai2d_path, sep="\t", index=False)
    data["invscale_ai2d_test"] = str(ai2d_path)

    blink_path = root / "blink_val"
    datasets.DatasetDict({"val": _dataset(*blink_rows(6 * scale))}).save_to_disk(str(blink_path))
    data["blink_val"] = str(blink_path)

    data["cait"] = str(cait.prepare(write_cait_fixture(root / "cait_folder"), root / "cait"))
    return data


FIXTURE_SCENES = [  # (category, characteristic, verb, common, uncommon, style)
    ("Human-Human", "Inversion of institutional power", "scold", "A teacher scolds a student.",
     "A student scolds a teacher.", "realistic"),
    ("Human-Human", "Reversal of caretaking duties across generations", "feed", "A mother feeds her baby.",
     "A baby feeds its mother.", "cartoon"),
    ("Human-Animal", "Animals replacing humans as dominant figures", "walk", "A man walks a dog on a leash.",
     "A dog walks a man on a leash.", "realistic"),
    ("Human-Animal", "Animals providing domestic care to humans", "bathe", "A woman bathes a cat.",
     "A cat bathes a woman.", "cartoon"),
    ("Animal-Animal", "Transposition of traditional predator and prey roles", "chase", "A tiger chases a rabbit.",
     "A rabbit chases a tiger.", "realistic"),
    ("Animal-Animal", "Transposition of traditional predator and prey roles", "eat", "A cat eats a mouse.",
     "A mouse eats a cat.", "cartoon"),
    ("Bio-StillLife", "Inanimate objects gaining autonomy", "cut", "A man cuts a carrot with a knife.",
     "A carrot cuts a man with a knife.", "cartoon"),
    ("Bio-StillLife", "Inanimate objects gaining autonomy", "read", "A girl reads a book.", "A book reads a girl.",
     "realistic"),
]


def write_cait_fixture(folder: Path) -> Path:
    """A small CAIT-format folder (lmms_eval_tasks/cait.py): drawn scenes, cait.jsonl, images/."""
    folder = Path(folder)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for i, (category, characteristic, verb, common, uncommon, style) in enumerate(FIXTURE_SCENES):
        image_path = f"images/scene_{i:03d}.png"
        drawn_image(i, size=96).save(folder / image_path)
        lines.append(json.dumps({"id": f"cait_{i:03d}", "image": image_path, "category": category,
                                 "characteristic": characteristic, "verb": verb, "common_text": common,
                                 "uncommon_text": uncommon, "gt_prompt": f"A detailed {style} picture: {uncommon}",
                                 "style": style}))
    (folder / "cait.jsonl").write_text("\n".join(lines) + "\n")
    return folder
