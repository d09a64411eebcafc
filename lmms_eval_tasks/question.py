"""The canonical question every benchmark adapter produces, and image decoding shared by every task."""

from __future__ import annotations

import base64
import io
import json
import os
import string
from dataclasses import asdict, dataclass, field
from typing import Any

from PIL import Image, ImageFile

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


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".tif", ".tiff")


def _decoded(source: Any, where: str) -> Image.Image:
    # Image.open reads only the header: convert() decodes, where a damaged file fails. lmms-eval's task module turns
    # Pillow's LOAD_TRUNCATED_IMAGES on when imported, which would decode a cut-off file padded with grey, silently:
    # it is off while we decode.
    truncated_allowed, ImageFile.LOAD_TRUNCATED_IMAGES = ImageFile.LOAD_TRUNCATED_IMAGES, False
    try:
        with Image.open(source) as image:
            return image.convert("RGB")
    except FileNotFoundError:
        raise DocError(f"{where}: no such file") from None
    except Image.DecompressionBombError as error:
        raise DocError(f"{where}: refused, too large to decode safely ({error})") from None
    except Image.UnidentifiedImageError:  # its message would print the in-memory file's repr
        raise DocError(f"{where}: not a readable image (not a format Pillow reads, or empty)") from None
    except (OSError, ValueError, SyntaxError) as error:  # UnidentifiedImageError is an OSError
        raise DocError(f"{where}: not a readable image ({error})") from None
    finally:
        ImageFile.LOAD_TRUNCATED_IMAGES = truncated_allowed


def load_image(value: Any, where: str) -> Image.Image:
    """PIL images, datasets' {'bytes','path'} dicts, file paths and base64 strings (VLMEvalKit TSVs). An image
    that cannot be decoded (missing, empty, damaged, or above Pillow's decompression-bomb limit) is a DocError
    naming the field and, for a file, its path."""
    if isinstance(value, Image.Image):
        return value.convert("RGB")
    if isinstance(value, dict) and (value.get("bytes") or value.get("path")):
        if value.get("bytes"):
            return _decoded(io.BytesIO(value["bytes"]), f"{where} (image bytes)")
        return _decoded(value["path"], f"{where} (image file {value['path']})")
    if isinstance(value, str) and value:
        if len(value) < 4096 and (os.path.isfile(value) or value.lower().endswith(IMAGE_SUFFIXES)):
            return _decoded(value, f"{where} (image file {value})")
        try:
            data = base64.b64decode(value)
        except ValueError as error:
            raise DocError(f"{where}: image string is neither an existing file nor base64 ({error})") from None
        return _decoded(io.BytesIO(data), f"{where} (base64 image)")
    raise DocError(f"{where}: image is {type(value).__name__}, not an image, path or base64 string")
