"""Print the answer-extraction scorecard as Markdown: the labelled real M3CoT samples (dev and held-out), the
long-prose samples (long_dev, long_heldout) and the synthetic corpus.

    python scripts/extraction_scorecard.py [--real m3cot_dev m3cot_heldout_round11 long_dev] [--synthetic] [--misses]
                                           [--data ../shared/data/m3cot] [--mathvista ../shared/data/mathvista]
                                           [--corpus tests/lmms_eval_tasks/extraction_corpus]

Real samples: precision, coverage and abstention in all and per tier, rule, prompt, style and model (the text is
read from --data; a sample is skipped, saying so, when the folder is absent); `fitted` or `held out` says which the
rules were fitted to (extraction_bench.real.FITTED). Long-prose samples (extraction_bench.long_prose.SAMPLES; text
from --data and --mathvista): first the targets of issue 31 (precision, the share of the answers that state a letter
for which it is committed, withheld overall and per model), then the same tables per tier, rule, source, style and
model. By default every sample whose label files exist. Synthetic corpus: per kind, rule and reason. --misses also
lists every item read otherwise than labelled.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from extraction_bench import long_prose, real, synthetic

MISS_COLUMNS = {"real": ["id", "expected", "label_reason", "prediction", "candidate", "rule", "reason", "note"],
                "synthetic": ["id", "expected", "label_reason", "prediction", "candidate", "rule", "reason", "known_miss"]}


def _misses(read, columns) -> str:
    disagree = read[(read.committed & ~read.right) | (~read.committed & read.given)]
    shown = disagree[columns].astype(object).where(disagree[columns].notna(), "")
    return f"\nRead otherwise than labelled ({len(disagree)}):\n\n" + shown.to_markdown(index=False)


def _existing_samples() -> list[str]:
    long = [name for name in long_prose.SAMPLES if all(path.exists() for path in long_prose.sample_paths(name))]
    return [*real.SAMPLES, *long]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", nargs="*", default=None,
                        help="real samples: M3CoT ones in tests/lmms_eval_tasks/extraction_real, long-prose ones "
                             f"({', '.join(long_prose.SAMPLES)}); default: every sample whose labels exist")
    parser.add_argument("--synthetic", action=argparse.BooleanOptionalAction, default=True, help="the synthetic corpus")
    parser.add_argument("--data", type=Path, default=real.DATA_FOLDER, help="folder of the M3CoT <model>__<style>.jsonl.gz")
    parser.add_argument("--mathvista", type=Path, default=long_prose.MATHVISTA_FOLDER, help="folder of the MathVista runs")
    parser.add_argument("--corpus", type=Path, default=synthetic.DEFAULT_FOLDER, help="folder of *.jsonl corpus files")
    parser.add_argument("--misses", action="store_true", help="also list the items read otherwise than labelled")
    args = parser.parse_args(argv)
    for name in _existing_samples() if args.real is None else args.real:
        if name in long_prose.SAMPLES:
            missing = [path for path in long_prose.sample_paths(name) if not path.exists()]
            if missing:
                sys.exit(f"{missing[0]}: no such label file (a chunk of sample {name})")
            if not (args.data.is_dir() and args.mathvista.is_dir()):
                print(f"## {name}: skipped, no M3CoT data at {args.data} or MathVista data at {args.mathvista}\n")
                continue
            read = long_prose.read_sample(long_prose.load_sample(name), args.data, args.mathvista)
            print(long_prose.scorecard(read, f"{name} ({'fitted' if name == 'long_dev' else 'held out'})"))
        else:
            if not (real.LABELS_FOLDER / f"{name}.jsonl").exists():
                sys.exit(f"{real.LABELS_FOLDER / name}.jsonl: no such sample (samples: "
                         f"{', '.join([*real.SAMPLES, *long_prose.SAMPLES])})")
            if not args.data.is_dir():
                print(f"## {name}: skipped, no M3CoT data at {args.data}\n")
                continue
            read = real.read_sample(real.load_sample(name), args.data)
            print(real.scorecard(read, f"{name} ({'fitted' if name in real.FITTED else 'held out'})"))
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
