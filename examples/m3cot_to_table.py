"""The M3CoT authors' saved model outputs (../shared/data/m3cot/) as a per-question table (docs/importing-outputs.md).

    python examples/m3cot_to_table.py [--data ../shared/data/m3cot] [--out m3cot.parquet]
        [--models llava-7b llava-13b instruct-blip-7b instruct-blip-13b] [--styles direct cot dsp ccot]
    python -m postprocess report --table m3cot.parquet --extra-models examples/m3cot_models.yaml --out m3cot_report/

One row per model, prompting style and question: benchmark "M3CoT" (not one of the paper's nine), split "test",
subtask = the file's `topic`, question_id = `id`, variant = the style (direct, cot, dsp, ccot), options = `choices`
(lettered A, B, ... in that order), gold = `answer`, response = the model's last turn (`messages[-1]`: the answer
of a one-turn conversation, the final answer after the follow-up "select the answer" prompt of a two-turn one),
without the end-of-sequence token `</s>` some models' text ends in. The text is scored by the project's own
extraction when the table is read, never here.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import pandas as pd

SIZE_PAIRS = ["llava-7b", "llava-13b", "instruct-blip-7b", "instruct-blip-13b"]
END_OF_SEQUENCE = "</s>"


def m3cot_rows(path: Path) -> list[dict]:
    """The table rows of one `<model>__<style>.jsonl.gz` file."""
    model, style = path.name.removesuffix(".jsonl.gz").split("__")
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            rows.append({"model": model, "benchmark": "M3CoT", "split": "test", "subtask": item["topic"],
                         "question_id": item["id"], "variant": style, "options": item["choices"],
                         "gold": item.get("answer"), "response": item["messages"][-1].removesuffix(END_OF_SEQUENCE)})
    return rows


def m3cot_table(data: Path, models: list[str], styles: list[str] | None = None) -> pd.DataFrame:
    files = sorted(p for model in models for p in data.glob(f"{model}__*.jsonl.gz")
                   if styles is None or p.name.removesuffix(".jsonl.gz").split("__")[1] in styles)
    if not files:
        raise SystemExit(f"error: no {'/'.join(models)} files of the styles {styles or 'any'} in {data}")
    return pd.DataFrame([row for path in files for row in m3cot_rows(path)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "m3cot")
    parser.add_argument("--out", type=Path, default=Path("m3cot.parquet"))
    parser.add_argument("--models", nargs="+", default=SIZE_PAIRS)
    parser.add_argument("--styles", nargs="+", help="prompting styles to keep (default: every style of the files)")
    args = parser.parse_args()
    table = m3cot_table(args.data, args.models, args.styles)
    if args.out.suffix == ".jsonl":
        table.to_json(args.out, orient="records", lines=True, force_ascii=False)
    else:
        table.to_parquet(args.out, index=False)
    print(f"{len(table):,} rows ({table['model'].nunique()} models, {table['variant'].nunique()} styles) -> {args.out}")


if __name__ == "__main__":
    main()
