"""Print the answer-extraction scorecard as Markdown: the labelled real M3CoT samples (dev and held-out) and
the synthetic corpus.

    python scripts/extraction_scorecard.py [--real m3cot_dev m3cot_heldout] [--synthetic] [--misses]
                                           [--data ../shared/data/m3cot]
                                           [--corpus tests/lmms_eval_tasks/extraction_corpus]

Real samples: precision, coverage and abstention in all and per tier, rule, prompt, style and model (the text is
read from --data; a sample is skipped, saying so, when the folder is absent). Synthetic corpus: per kind, rule and
reason. --misses also lists every item read otherwise than labelled.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from extraction_bench import real, synthetic

MISS_COLUMNS = {"real": ["id", "expected", "label_reason", "prediction", "candidate", "rule", "reason", "note"],
                "synthetic": ["id", "expected", "label_reason", "prediction", "candidate", "rule", "reason", "known_miss"]}


def _misses(read, columns) -> str:
    disagree = read[(read.committed & ~read.right) | (~read.committed & read.given)]
    shown = disagree[columns].astype(object).where(disagree[columns].notna(), "")
    return f"\nRead otherwise than labelled ({len(disagree)}):\n\n" + shown.to_markdown(index=False)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", nargs="*", default=list(real.SAMPLES),
                        help="real samples in tests/lmms_eval_tasks/extraction_real")
    parser.add_argument("--synthetic", action=argparse.BooleanOptionalAction, default=True, help="the synthetic corpus")
    parser.add_argument("--data", type=Path, default=real.DATA_FOLDER, help="folder of the M3CoT <model>__<style>.jsonl.gz")
    parser.add_argument("--corpus", type=Path, default=synthetic.DEFAULT_FOLDER, help="folder of *.jsonl corpus files")
    parser.add_argument("--misses", action="store_true", help="also list the items read otherwise than labelled")
    args = parser.parse_args(argv)
    for name in args.real:
        if not (real.LABELS_FOLDER / f"{name}.jsonl").exists():
            sys.exit(f"{real.LABELS_FOLDER / name}.jsonl: no such sample (samples: {', '.join(real.SAMPLES)})")
        if not args.data.is_dir():
            print(f"## {name}: skipped, no M3CoT data at {args.data}\n")
            continue
        read = real.read_sample(real.load_sample(name), args.data)
        print(real.scorecard(read, name))
        if args.misses:
            print(_misses(read, MISS_COLUMNS["real"]))
        print()
    if args.synthetic:
        read = synthetic.read_corpus(synthetic.load_corpus(args.corpus))
        print("### synthetic corpus\n")
        print(synthetic.scorecard(read))
        if args.misses:
            print(_misses(read, MISS_COLUMNS["synthetic"]))


if __name__ == "__main__":
    main()
