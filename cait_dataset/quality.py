"""Image quality and caption alignment of CAIT beside other datasets (CAIT paper, Section 5.4, Tables 9-10).

Datasets, one table row each, in the order given:
  a CAIT folder     the tasks' format (lmms_eval_tasks/cait.py). The correct caption of an image is its
                    `uncommon_text` (the scene the image shows), the reversed caption its `common_text`.
  a captioned CSV   columns `image`, `correct_caption`, `reversed_caption` (`image` relative to the CSV's
                    folder, or absolute); other columns are ignored. Winoground gives two rows per example:
                    image_0 with caption_0 correct and caption_1 reversed, image_1 the other way round
                    (`winoground_export` writes that folder from the hub dataset).
  an image folder   every image file under the folder (NIQE and BRISQUE only: no captions).

Metrics:
  niqe, brisque     no-reference quality through pyiqa (lower is better), one score per image. Both need a
                    parameter file (NIQE's pristine Gaussian model, BRISQUE's SVR): pyiqa downloads its
                    own from the Hugging Face hub (chaofengc/IQA-PyTorch-Weights) unless a local path is
                    given. Metric names are pyiqa's: `niqe` / `brisque` (pyiqa's defaults), or the
                    `niqe_matlab` / `brisque_matlab` ports; the paper does not say which it used.
  clip              cosine similarity of the CLIP image embedding with the text embedding of the correct
                    and of the reversed caption (CLIP ViT-B/32, openai/clip-vit-base-patch32, by default),
                    and the margin correct - reversed. Captions longer than CLIP's 77 tokens are cut.

NIQE and BRISQUE depend on resolution, so CAIT images are scored at the paper's 512 x 512 (CAIT Appendix A,
the generation prompt: "Image size: 512 x 512 pixels"): an image stored at another size (Gemini returns
1024 x 1024) is resized with Lanczos before scoring (`score_size`; the other datasets are scored as
stored, the paper says nothing of resizing them). The table's note says so.

An image the metric cannot score (NIQE's fit fails on a flat image; BRISQUE gives NaN there) keeps NaN
in the per-image frame with the reason in `unscored_because`; the tables average the finite scores and
count the others in their `unscored` columns. A file that is not a readable image raises DocError.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from lmms_eval_tasks.cait import read_folder
from lmms_eval_tasks.question import DocError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff")
CAPTION_COLUMNS = ("image", "correct_caption", "reversed_caption")
ITEM_COLUMNS = ["dataset", "image", "correct_caption", "reversed_caption", "score_size"]
PAPER_IMAGE_SIZE = 512  # the CAIT images' side in pixels (the generation prompt of CAIT Appendix A)
SCORE_COLUMNS = ["niqe", "brisque", "clip_correct", "clip_reversed", "clip_margin"]
NOTE_COLUMN = "unscored_because"
METRICS = ("niqe", "brisque", "clip")
DEFAULT_CLIP_MODEL = "openai/clip-vit-base-patch32"
NIQE_METRICS = ("niqe", "niqe_matlab")
BRISQUE_METRICS = ("brisque", "brisque_matlab")


# ---------------------------------------------------------------------------------------------- datasets
def cait_items(folder: Path, name: str = "CAIT") -> pd.DataFrame:
    """A CAIT folder's images with their correct (uncommon) and reversed (common) caption."""
    records = read_folder(Path(folder))
    return pd.DataFrame({"dataset": name, "image": [r["image"] for r in records],
                         "correct_caption": [r["uncommon_text"] for r in records],
                         "reversed_caption": [r["common_text"] for r in records], "score_size": PAPER_IMAGE_SIZE},
                        columns=ITEM_COLUMNS)


def captioned_items(path: Path, name: str) -> pd.DataFrame:
    """A captioned CSV (module docstring); DocError names the line and field of a bad row."""
    path = Path(path)
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in CAPTION_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DocError(f"{path}: missing column(s) {missing}; a captioned CSV needs {list(CAPTION_COLUMNS)}")
        rows = []
        for line, row in enumerate(reader, start=2):  # line 1 is the header
            for column in CAPTION_COLUMNS:
                if not (row[column] or "").strip():
                    raise DocError(f"{path}:{line}: field '{column}' is empty")
            image = Path(row["image"]) if Path(row["image"]).is_absolute() else path.parent / row["image"]
            if not image.is_file():
                raise DocError(f"{path}:{line}: field 'image' names {image}, which does not exist")
            rows.append({"dataset": name, "image": str(image), "correct_caption": row["correct_caption"],
                         "reversed_caption": row["reversed_caption"]})
    if not rows:
        raise DocError(f"{path}: no rows")
    return pd.DataFrame(rows, columns=ITEM_COLUMNS)


def folder_items(folder: Path, name: str) -> pd.DataFrame:
    """Every image file under `folder` (by suffix, sorted), without captions."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DocError(f"{folder}: not a folder")
    images = sorted(str(p) for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    if not images:
        raise DocError(f"{folder}: no image files ({', '.join(IMAGE_SUFFIXES)})")
    return pd.DataFrame({"dataset": name, "image": images, "correct_caption": None, "reversed_caption": None},
                        columns=ITEM_COLUMNS)


def winoground_export(dataset, out: Path) -> Path:
    """Write Winoground (a `datasets` split with id, image_0, image_1, caption_0, caption_1, e.g.
    load_dataset("facebook/winoground", split="test"), which is gated on the hub) as images/ and
    captions.csv: two rows per example, each image with its own caption correct and the other reversed."""
    out = Path(out)
    (out / "images").mkdir(parents=True, exist_ok=True)
    rows = []
    for example in dataset:
        for index in (0, 1):
            relative = f"images/{example['id']}_{index}.png"
            example[f"image_{index}"].convert("RGB").save(out / relative)
            rows.append({"image": relative, "correct_caption": example[f"caption_{index}"],
                         "reversed_caption": example[f"caption_{1 - index}"], "id": f"{example['id']}_{index}"})
    pd.DataFrame(rows, columns=[*CAPTION_COLUMNS, "id"]).to_csv(out / "captions.csv", index=False)
    return out / "captions.csv"


# ---------------------------------------------------------------------------------------------- scores
def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _readable(image: str) -> None:
    from PIL import Image

    try:
        with Image.open(image) as picture:
            picture.load()
    except (OSError, ValueError) as error:
        raise DocError(f"{image}: not a readable image ({error})") from None


def _at_size(image: str, size: int):
    """The image as pyiqa's input tensor (1 x 3 x H x W in [0, 1]), resized with Lanczos to size x size."""
    import torch
    from PIL import Image

    with Image.open(image) as picture:
        rgb = picture.convert("RGB")
    if rgb.size != (size, size):
        rgb = rgb.resize((size, size), Image.Resampling.LANCZOS)
    return torch.from_numpy(np.asarray(rgb, dtype=np.float32) / 255.0).permute(2, 0, 1)[None]


def iqa_scores(images: Sequence[str], metric: str, params: Path | None = None,
               device: str | None = None, sizes: Sequence[int | None] | None = None
               ) -> tuple[list[float], list[str | None]]:
    """(one pyiqa no-reference score per image file, why a score is missing). `params` is the metric's
    parameter file (None: pyiqa's own, downloaded from the hub on first use); `sizes` per image the side it
    is scored at (None: as stored). An image the metric cannot score (NIQE of a flat image fails to fit)
    gets NaN and the library's message; an unreadable file raises DocError."""
    import pyiqa
    import torch

    if metric not in NIQE_METRICS + BRISQUE_METRICS:
        raise ValueError(f"unknown quality metric {metric!r}; one of {NIQE_METRICS + BRISQUE_METRICS}")
    options = {} if params is None else {"pretrained_model_path": str(params)}
    scorer = pyiqa.create_metric(metric, device=device or default_device(), **options)
    scores, notes = [], []
    for image, size in zip(images, sizes or [None] * len(images)):
        _readable(image)
        try:
            with torch.no_grad():
                shown = str(image) if size is None else _at_size(image, size)
                score = float(torch.as_tensor(scorer(shown)).reshape(-1)[0])
            note = None if math.isfinite(score) else f"{metric}: not finite"
        except (RuntimeError, ValueError, ArithmeticError) as error:  # torch.linalg errors are RuntimeErrors
            score, note = math.nan, f"{metric}: {type(error).__name__}: {str(error).splitlines()[0]}"
        scores.append(score)
        notes.append(note)
    return scores, notes


def clip_similarities(images: Sequence[str], correct: Sequence[str], reversed_: Sequence[str],
                      model: str = DEFAULT_CLIP_MODEL, device: str | None = None,
                      batch_size: int = 32) -> pd.DataFrame:
    """Columns clip_correct, clip_reversed, clip_margin: cosine similarities of each image's CLIP embedding
    with its two captions' embeddings. `model` is a hub id or a local folder (CLIPModel + its processor)."""
    import torch
    from PIL import Image
    from transformers import AutoProcessor, CLIPModel

    device = device or default_device()
    clip = CLIPModel.from_pretrained(model).to(device).eval()
    processor = AutoProcessor.from_pretrained(model)

    def normalised(features):
        return torch.nn.functional.normalize(features.pooler_output.float(), dim=-1)

    rows = []
    for start in range(0, len(images), batch_size):
        chunk = slice(start, start + batch_size)
        pictures = [Image.open(path).convert("RGB") for path in images[chunk]]
        with torch.no_grad():
            image_inputs = processor(images=pictures, return_tensors="pt").to(device)
            image_embeddings = normalised(clip.get_image_features(**image_inputs))
            texts = [*correct[chunk], *reversed_[chunk]]
            text_inputs = processor(text=texts, padding=True, truncation=True, return_tensors="pt").to(device)
            text_embeddings = normalised(clip.get_text_features(**text_inputs))
        n = len(pictures)
        rows.append(torch.stack([(image_embeddings * text_embeddings[:n]).sum(-1),
                                 (image_embeddings * text_embeddings[n:]).sum(-1)], dim=1).cpu().numpy())
    values = np.concatenate(rows) if rows else np.empty((0, 2))
    frame = pd.DataFrame(values.astype(float), columns=["clip_correct", "clip_reversed"])
    frame["clip_margin"] = frame["clip_correct"] - frame["clip_reversed"]
    return frame


def score_items(items: pd.DataFrame, metrics: Sequence[str] = METRICS, *, niqe_metric: str = "niqe",
                brisque_metric: str = "brisque", niqe_params: Path | None = None, brisque_params: Path | None = None,
                clip_model: str = DEFAULT_CLIP_MODEL, device: str | None = None, batch_size: int = 32) -> pd.DataFrame:
    """The items (ITEM_COLUMNS) with the asked metrics' columns (SCORE_COLUMNS; the others NaN) and
    NOTE_COLUMN (why a quality score is missing). CLIP scores only the captioned items."""
    unknown = sorted(set(metrics) - set(METRICS))
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; choose from {list(METRICS)}")
    scored = items.reset_index(drop=True).reindex(columns=[*items.columns, *(
        [] if "score_size" in items.columns else ["score_size"])])  # items without one are scored as stored
    for column in SCORE_COLUMNS:
        scored[column] = np.nan
    images = list(scored["image"])
    sizes = [None if pd.isna(size) else int(size) for size in scored["score_size"]]
    notes = [[] for _ in images]
    for column, metric, params in (("niqe", niqe_metric, niqe_params), ("brisque", brisque_metric, brisque_params)):
        if column in metrics:
            scored[column], missing = iqa_scores(images, metric, params, device, sizes)
            for kept, note in zip(notes, missing):
                kept += [note] if note else []
    scored[NOTE_COLUMN] = ["; ".join(kept) or None for kept in notes]
    captioned = scored["correct_caption"].notna() & scored["reversed_caption"].notna()
    if "clip" in metrics and captioned.any():
        clip = clip_similarities(list(scored.loc[captioned, "image"]), list(scored.loc[captioned, "correct_caption"]),
                                 list(scored.loc[captioned, "reversed_caption"]), clip_model, device, batch_size)
        scored.loc[captioned, clip.columns] = clip.to_numpy()
    return scored


# ---------------------------------------------------------------------------------------------- tables
def _mean_and_unscored(values: pd.Series) -> tuple[float, int]:
    finite = values[np.isfinite(values.astype(float))]
    return (float(finite.mean()) if len(finite) else math.nan), int(len(values) - len(finite))


def perceptual_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Table 9 as numbers: one row per dataset (first-seen order): images, mean NIQE and BRISQUE over the
    finite scores, and the images without a finite score per metric."""
    rows = []
    for dataset, group in scores.groupby("dataset", sort=False):
        niqe, niqe_unscored = _mean_and_unscored(group["niqe"])
        brisque, brisque_unscored = _mean_and_unscored(group["brisque"])
        rows.append({"dataset": dataset, "images": len(group), "niqe": niqe, "brisque": brisque,
                     "niqe_unscored": niqe_unscored, "brisque_unscored": brisque_unscored})
    return pd.DataFrame(rows, columns=["dataset", "images", "niqe", "brisque", "niqe_unscored", "brisque_unscored"])


def clip_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Table 10 as numbers: one row per captioned dataset: image-caption pairs, mean cosine similarity with
    the correct and with the reversed caption, and the mean margin (correct - reversed)."""
    rows = []
    for dataset, group in scores.groupby("dataset", sort=False):
        if group["correct_caption"].isna().all():
            continue
        correct, unscored = _mean_and_unscored(group["clip_correct"])
        reversed_, _ = _mean_and_unscored(group["clip_reversed"])
        margin, _ = _mean_and_unscored(group["clip_margin"])
        rows.append({"dataset": dataset, "pairs": len(group), "correct": correct, "reversed": reversed_,
                     "margin": margin, "unscored": unscored})
    return pd.DataFrame(rows, columns=["dataset", "pairs", "correct", "reversed", "margin", "unscored"])


def quality_tables(scores: pd.DataFrame) -> list:
    """Tables 9 and 10 for postprocess.render.tables.write_table, values as printed (the paper's precision)."""
    from postprocess.render.tables import Table

    def fmt(value: float, digits: int) -> str:
        return "–" if pd.isna(value) else f"{value:.{digits}f}"

    tables = []
    perceptual = perceptual_table(scores)
    if perceptual[["niqe", "brisque"]].notna().any().any():
        display = pd.DataFrame({"Dataset": perceptual["dataset"], "Images": perceptual["images"],
                                "NIQE ↓": perceptual["niqe"].map(lambda v: fmt(v, 2)),
                                "BRISQUE ↓": perceptual["brisque"].map(lambda v: fmt(v, 2))})
        unscored = perceptual[(perceptual["niqe_unscored"] > 0) | (perceptual["brisque_unscored"] > 0)]
        note = "Means over the images; lower is better."
        resized = scores.groupby("dataset", sort=False)["score_size"].first().dropna() if "score_size" in scores \
            else pd.Series(dtype=float)
        if len(resized):
            note += " " + ", ".join(f"{dataset} scored at {int(size)} × {int(size)}" for dataset, size in resized.items()) + (
                " (the paper's CAIT size; images stored at another size resized with Lanczos); the other datasets as "
                "stored.")
        if not unscored.empty:
            note += " Images without a finite score, left out of the mean: " + ", ".join(
                f"{d} NIQE {n}, BRISQUE {b}" for d, n, b in
                zip(unscored["dataset"], unscored["niqe_unscored"], unscored["brisque_unscored"])) + "."
        tables.append(Table("table09_perceptual_quality", "Perceptual quality (NR-IQA) per dataset (paper Table 9)",
                            display, note=note))
    alignment = clip_table(scores)
    if not alignment.empty and alignment["correct"].notna().any():
        display = pd.DataFrame({"Dataset": alignment["dataset"], "Pairs": alignment["pairs"],
                                "Correct Caption": alignment["correct"].map(lambda v: fmt(v, 3)),
                                "Reversed Caption": alignment["reversed"].map(lambda v: fmt(v, 3)),
                                "Margin": alignment["margin"].map(lambda v: fmt(v, 4))})
        tables.append(Table("table10_clip_alignment",
                            "Mean CLIP cosine similarity between images and captions (paper Table 10)", display,
                            note="Margin: mean of correct minus reversed similarity per image."))
    return tables


def write_outputs(scores: pd.DataFrame, out: Path) -> list[Path]:
    """scores.csv (per image), and per table its rendered csv/md/tex plus `<name>_values.csv` (unrounded)."""
    from postprocess.render.tables import write_table

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    scores.to_csv(out / "scores.csv", index=False)
    paths = [out / "scores.csv"]
    values = {"table09_perceptual_quality": perceptual_table(scores), "table10_clip_alignment": clip_table(scores)}
    for table in quality_tables(scores):
        paths += write_table(table, out)
        values[table.name].to_csv(out / f"{table.name}_values.csv", index=False)
        paths.append(out / f"{table.name}_values.csv")
    return paths
