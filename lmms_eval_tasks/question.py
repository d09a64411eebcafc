"""The canonical question every benchmark adapter produces, and image decoding shared by every task."""

from __future__ import annotations

import base64
import io
import json
import os
import string
from dataclasses import asdict, dataclass, field
from typing import Any

from PIL import Image

LETTERS = string.ascii_uppercase

# How a question is answered and scored.
MCQ, YES_NO, OPEN, NUMERIC = "mcq", "yes_no", "open", "numeric"


class DocError(ValueError):
    """A dataset row that cannot become a question; the message names the benchmark, row and field."""


@dataclass
class Question:
    benchmark: str
    split: str
    subtask: str
    question_id: str
    kind: str  # mcq | yes_no | open | numeric
    text: str  # the stem, or the whole prompt for pre-formatted benchmarks
    image_fields: list[str]
    options: list[str] = field(default_factory=list)
    gold: str | list[str] | None = None  # mcq: letter; yes_no: Yes/No; open: acceptable answers; numeric: value
    hint: str | None = None
    prompt_style: str = "lettered"  # lettered | open | as_is | vlmevalkit | embedded_choices
    answer_type: str | None = None  # MathVista: integer | float | list | text
    precision: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    variant: str = "direct"
    permutation: list[int] | None = None  # shown option j is original option permutation[j]
    images_optional: bool = False  # image_fields lists slots that may be empty (BLINK's image_1..4)

    @property
    def letters(self) -> list[str]:
        return list(LETTERS[: len(self.options)])

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Question:
        return cls(**json.loads(text))


def load_image(value: Any, where: str) -> Image.Image:
    """PIL images, datasets' {'bytes','path'} dicts, file paths and base64 strings (VLMEvalKit TSVs)."""
    if isinstance(value, Image.Image):
        return value.convert("RGB")
    if isinstance(value, dict) and (value.get("bytes") or value.get("path")):
        source = io.BytesIO(value["bytes"]) if value.get("bytes") else value["path"]
        return Image.open(source).convert("RGB")
    if isinstance(value, str) and value:
        if len(value) < 4096 and os.path.isfile(value):
            return Image.open(value).convert("RGB")
        try:
            return Image.open(io.BytesIO(base64.b64decode(value))).convert("RGB")
        except (ValueError, OSError) as error:
            raise DocError(f"{where}: image string is neither a file path nor base64 image data ({error})") from None
    raise DocError(f"{where}: image is {type(value).__name__}, not an image, path or base64 string")
