"""What the registry and the launch settings share: the error type and the field checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class RegistryError(ValueError):
    """An invalid registry entry or override; the message names the source, the model and the field."""


def param_count(value: Any, where: str, field_name: str, nullable: bool = False) -> int | None:
    if value is None and nullable:
        return None
    number: float | None = None
    if isinstance(value, bool):  # bool is an int subclass; "true" is never a parameter count
        number = None
    elif isinstance(value, (int, float)):
        number = value
    elif isinstance(value, str):
        try:
            number = float(value.replace("_", ""))
        except ValueError:
            number = None
    if number is None or number != int(number) or number <= 0:
        raise RegistryError(f"{where}: field '{field_name}' must be a positive whole number, got {value!r}")
    return int(number)


def text_field(entry: Mapping, name: str, where: str, nullable: bool) -> str | None:
    value = entry.get(name)
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value.strip():
        raise RegistryError(f"{where}: field '{name}' must be a non-empty string, got {value!r}")
    return value


def positive_int(value: Any, name: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise RegistryError(f"{where}: launch field '{name}' must be a positive whole number, got {value!r}")
    return value
