"""Print the answer-extraction scorecard as Markdown: the labelled real M3CoT samples (dev and held-out), the
long-prose samples (long_dev, long_heldout), the labelled MathVista samples and the synthetic corpus.

    python scripts/extraction_scorecard.py [--real m3cot_dev m3cot_heldout_round11 long_dev] [--synthetic] [--misses]
                                           [--mathvista numeric_dev_1 mc_dev_1] [--data ../shared/data/m3cot]
                                           [--mathvista-data ../shared/data/mathvista]
                                           [--corpus tests/lmms_eval_tasks/extraction_corpus]

Real samples: precision, coverage and abstention in all and per tier, rule, prompt, style and model (the text is
read from --data; a sample is skipped, saying so, when the folder is absent); `fitted` or `held out` says which the
rules were fitted to (extraction_bench.real.FITTED). Long-prose samples (extraction_bench.long_prose.SAMPLES; text
from --data and --mathvista-data): first the targets of issue 31 (precision, the share of the answers that state a
letter for which it is committed, withheld overall and per model), then the same tables per tier, rule, source,
style and model. By default every sample whose label files exist. MathVista samples (extraction_bench.mathvista;
those of its SAMPLES that are labelled): free-form numbers and multiple choice, precision and coverage in all, per
answer type, rule and model, beside the MathVista authors' GPT-4 extraction and its agreement with ours. Synthetic
corpus: per kind, rule and reason. --misses also lists every item read otherwise than labelled.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from extraction_bench import long_prose, mathvista, real, synthetic

MISS_COLUMNS = {"real": ["id", "expected", "label_reason", "prediction", "candidate", "rule", "reason", "note"],
                "mathvista": ["id", "expected", "label_reason", "prediction", "candidate", "rule", "reason", "gpt4_reading",
                              "note"],
                "synthetic": ["id", "expected", "label_reason", "prediction", "candidate", "rule", "reason", "known_miss"]}


def _misses(read, columns) -> str:
    disagree = read[(read.committed & ~read.right) | (~read.committed & read.given)]
    shown = disagree[columns].astype(object).where(disagree[columns].notna(), "")
    return f"\nRead otherwise than labelled ({len(disagree)}):\n\n" + shown.to_markdown(index=False)


def _labelled(mathvista_sample: str) -> bool:
    """Whether every chunk file of a MathVista sample exists."""
    chunks = mathvista.SAMPLES.get(mathvista_sample, (mathvista_sample,))
    return all((mathvista.LABELS_FOLDER / f"{chunk}.jsonl").exists() for chunk in chunks)


def _status(name: str, module) -> str:
    return "fitted" if name in module.FITTED else "held out"


def _existing_samples() -> list[str]:
    long = [name for name in long_prose.SAMPLES if all(path.exists() for path in long_prose.sample_paths(name))]
    return [*real.SAMPLES, *long]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", nargs="*", default=None,
                        help="real samples: M3CoT ones in tests/lmms_eval_tasks/extraction_real, long-prose ones "
                             f"({', '.join(long_prose.SAMPLES)}); default: every sample whose labels exist")
    parser.add_argument("--mathvista", nargs="*", default=[name for name in mathvista.SAMPLES if _labelled(name)],
                        help="MathVista samples in tests/lmms_eval_tasks/extraction_real/mathvista")
    parser.add_argument("--mathvista-data", type=Path, default=mathvista.DATA_FOLDER,
                        help="folder of the MathVista <run>.jsonl.gz")
    parser.add_argument("--synthetic", action=argparse.BooleanOptionalAction, default=True, help="the synthetic corpus")
    parser.add_argument("--data", type=Path, default=real.DATA_FOLDER, help="folder of the M3CoT <model>__<style>.jsonl.gz")
    parser.add_argument("--corpus", type=Path, default=synthetic.DEFAULT_FOLDER, help="folder of *.jsonl corpus files")
    parser.add_argument("--misses", action="store_true", help="also list the items read otherwise than labelled")
    args = parser.parse_args(argv)
    for name in _existing_samples() if args.real is None else args.real:
        if name in long_prose.SAMPLES:
            missing = [path for path in long_prose.sample_paths(name) if not path.exists()]
            if missing:
                sys.exit(f"{missing[0]}: no such label file (a chunk of sample {name})")
            if not (args.data.is_dir() and args.mathvista_data.is_dir()):
                print(f"## {name}: skipped, no M3CoT data at {args.data} or MathVista data at {args.mathvista_data}\n")
                continue
            read = long_prose.read_sample(long_prose.load_sample(name), args.data, args.mathvista_data)
            print(long_prose.scorecard(read, f"{name} ({_status(name, long_prose)})"))
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
    for name in args.mathvista:
        if not _labelled(name):
            sys.exit(f"{mathvista.LABELS_FOLDER / name}: no such sample (samples: {', '.join(mathvista.SAMPLES)})")
        if not args.mathvista_data.is_dir():
            print(f"## {name}: skipped, no MathVista data at {args.mathvista_data}\n")
            continue
        read = mathvista.read_sample(mathvista.load_sample(name), mathvista.sample_kind(name), args.mathvista_data)
        print(mathvista.scorecard(read, f"MathVista {name} ({_status(name, mathvista)})"))
        if args.misses:
            print(_misses(read, MISS_COLUMNS["mathvista"]))
        print()
    if args.synthetic:
        read = synthetic.read_corpus(synthetic.load_corpus(args.corpus))
        print("### synthetic corpus\n")
        print(synthetic.scorecard(read))
        if args.misses:
            print(_misses(read, MISS_COLUMNS["synthetic"]))


if __name__ == "__main__":
    main()
