"""Draw a new labelled-sample candidate from the M3CoT outputs: `--per-file` responses of every <model>__<style>
file, none that an existing sample in tests/lmms_eval_tasks/extraction_real already holds, written as the labellers'
input (one {"key", "options", "response"} a line, key "<file>/<id>") in --chunks files under --out.

    python scripts/draw_extraction_sample.py --per-file 50 --seed 20261202 --chunks 4 --out /tmp/labelling

The labellers follow tests/lmms_eval_tasks/extraction_real/LABELLING.md; their labels become
tests/lmms_eval_tasks/extraction_real/<sample>.jsonl.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from extraction_bench import real


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-file", type=int, required=True, help="responses drawn from each data file")
    parser.add_argument("--seed", type=int, required=True, help="the draw's seed (record it in the sample's docs)")
    parser.add_argument("--chunks", type=int, default=1, help="how many input files to split the draw into")
    parser.add_argument("--out", type=Path, required=True, help="folder for input_<k>.jsonl")
    parser.add_argument("--data", type=Path, default=real.DATA_FOLDER, help="folder of the M3CoT <model>__<style>.jsonl.gz")
    args = parser.parse_args(argv)
    earlier = {(label.file, label.id) for path in sorted(real.LABELS_FOLDER.glob("*.jsonl")) for label in real.load_labels(path)}
    drawn = real.draw_sample(args.per_file, args.seed, earlier, args.data)
    responses = real.load_responses({file for file, _ in drawn}, args.data)
    args.out.mkdir(parents=True, exist_ok=True)
    size = -(-len(drawn) // args.chunks)
    for k in range(args.chunks):
        with open(args.out / f"input_{k + 1}.jsonl", "w") as handle:
            for file, id_ in drawn[k * size : (k + 1) * size]:
                options, response = responses[(file, id_)]
                handle.write(json.dumps({"key": f"{file}/{id_}", "options": options, "response": response}) + "\n")
    print(f"{len(drawn)} responses ({args.per_file} from each of {len(drawn) // args.per_file} files, none in an earlier "
          f"sample: {len(earlier)} excluded) in {args.chunks} files under {args.out}")


if __name__ == "__main__":
    main()
