"""Print the answer-extraction scorecard on the labelled corpus as Markdown (the README quotes it).

    python scripts/extraction_scorecard.py [--corpus tests/extraction_corpus] [--misses]

Per rule: answers given, right, precision, share of the committed answers; per reason: abstentions, of
which labelled non-answers, and committed answers missed. --misses also lists every item read otherwise
than labelled.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from extraction_bench.synthetic import (
    DEFAULT_FOLDER,
    load_corpus,
    read_corpus,
    scorecard,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_FOLDER, help="folder of *.jsonl corpus files")
    parser.add_argument("--misses", action="store_true", help="also list the items read otherwise than labelled")
    args = parser.parse_args(argv)
    read = read_corpus(load_corpus(args.corpus))
    print(scorecard(read))
    if args.misses:
        misses = read[~read.agrees]
        print(f"\nRead otherwise than labelled ({len(misses)}):\n")
        columns = ["id", "expected", "label_reason", "prediction", "rule", "reason", "known_miss"]
        print(misses[columns].astype(object).where(misses[columns].notna(), "").to_markdown(index=False))


if __name__ == "__main__":
    main()
