"""Time extract_choice on the real responses of the labelled M3CoT dev sample (text from ../shared/data/m3cot), and
extract_number on those of the fitted MathVista free-form samples with their questions (../shared/data/mathvista and
../shared/data/vlmevalkit), where that text is there.

    PYTHONPATH=. python perf/bench_extraction.py [--repeat 3]

Prints the milliseconds per response (best of --repeat passes over each sample).
"""

from __future__ import annotations

import argparse
import sys
import time

from extraction_bench import long_prose, mathvista, real
from lmms_eval_tasks.extraction import extract_choice, extract_number


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
    if mathvista.DATA_FOLDER.is_dir() and long_prose.VLMEVALKIT_FOLDER.is_dir():
        asked = _free_form_items()
        best = min(_numbers_pass(asked) for _ in range(args.repeat))
        print(f"extract_number: {best / len(asked) * 1e3:.3f} ms per response ({len(asked)} responses, best of {args.repeat})")


def _free_form_items() -> list[tuple[str, str]]:
    """(response, question) of every answer of the fitted free-form MathVista samples."""
    keys = [label.key for name in mathvista.FITTED if mathvista.sample_kind(name) == mathvista.FREE_FORM
            for label in mathvista.load_sample(name)]
    items = {item.key: item for item in [*long_prose.mathvista_items(), *long_prose.vlmevalkit_items()]}
    return [(items[key].response, items[key].question) for key in keys]


def _numbers_pass(items: list[tuple[str, str]]) -> float:
    start = time.perf_counter()
    for response, question in items:
        extract_number(response, question)
    return time.perf_counter() - start


def _pass(items: list[tuple[list[str], str]]) -> float:
    start = time.perf_counter()
    for options, response in items:
        extract_choice(response, options)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
