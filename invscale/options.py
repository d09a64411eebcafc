"""Options spelled the same way in every command that takes them."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_tasks_dir_argument(parser: argparse.ArgumentParser, default: Path | None, help: str) -> None:
    """--tasks-dir: the task folder lmms-eval reads (lmms-eval's own --include_path). The older spelling
    --include-path stays accepted, unlisted, so existing command lines keep working."""
    parser.add_argument("--tasks-dir", type=Path, default=default, metavar="DIR", help=help)
    parser.add_argument("--include-path", dest="tasks_dir", type=Path, help=argparse.SUPPRESS)
