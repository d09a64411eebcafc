"""python -m cait_dataset quality ... | lora ... | build ...  (the console scripts cait-quality, cait-lora, cait-build)."""

from __future__ import annotations

import sys

from .cli import build_main, lora_main, quality_main

COMMANDS = {"quality": quality_main, "lora": lora_main, "build": build_main}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m cait_dataset {{{','.join(COMMANDS)}}} ...", file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
