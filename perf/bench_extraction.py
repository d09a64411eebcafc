"""Time extract_choice on the real responses of the labelled M3CoT dev sample (text from ../shared/data/m3cot).

    PYTHONPATH=. python perf/bench_extraction.py [--repeat 3]

Prints the milliseconds per response (best of --repeat passes over the sample).
"""

from __future__ import annotations

import argparse
import sys
import time

from extraction_bench import real
from lmms_eval_tasks.extraction import extract_choice


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="passes over the sample; the fastest is reported")
    args = parser.parse_args(argv)
    if not real.DATA_FOLDER.is_dir():
        sys.exit(f"{real.DATA_FOLDER}: no M3CoT data (see docs/extraction_precision.md)")
    labels = real.load_sample("m3cot_dev")
    responses = real.load_responses({label.file for label in labels})
    items = [responses[(label.file, label.id)] for label in labels]
    best = min(_pass(items) for _ in range(args.repeat))
    print(f"extract_choice: {best / len(items) * 1e3:.3f} ms per response ({len(items)} responses, best of {args.repeat})")


def _pass(items: list[tuple[list[str], str]]) -> float:
    start = time.perf_counter()
    for options, response in items:
        extract_choice(response, options)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
