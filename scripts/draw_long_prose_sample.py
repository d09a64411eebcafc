"""Draw labelling samples of long real prose and of MathVista (extraction_bench.long_prose): the labellers' input,
one JSON object a line, in --chunks files under --out, none of its items in an earlier sample.

    python scripts/draw_long_prose_sample.py --kind long_mc --per-file 100 --share 0.45 --seed 20261231 \
        --chunks 3 --out /tmp/labelling/long_heldout [--exclude /tmp/labelling/long_dev] [--vlmevalkit]

--exclude names folders (or files) of earlier draws whose keys must not be drawn again; the keys of the label files
in tests/lmms_eval_tasks/extraction_real and its long_prose/ and mathvista/ folders are always excluded. The
labellers follow LABELLING.md (multiple choice) or LABELLING_NUMERIC.md (free form) in that folder.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from extraction_bench import long_prose, real


def _keys_in(path: Path) -> set[str]:
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    keys = set()
    for file in files:
        for number, line in enumerate(file.read_text().splitlines(), 1):
            if line.strip():
                record = json.loads(line)
                if "key" in record:
                    keys.add(record["key"])
                elif "file" in record and "id" in record:  # an M3CoT label file
                    keys.add(long_prose.item_key(long_prose.M3COT, record["file"], str(record["id"])))
                else:
                    raise SystemExit(f"{file}:{number}: neither 'key' nor 'file' and 'id'")
    return keys


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", required=True, choices=long_prose.KINDS)
    parser.add_argument("--per-file", type=int, required=True, help="at most this many items of each data file")
    parser.add_argument("--share", type=float, default=1.0, help="at most this share of what each file has left")
    parser.add_argument("--seed", type=int, required=True, help="the draw's seed (record it in the sample's docs)")
    parser.add_argument("--chunks", type=int, default=1, help="how many input files to split the draw into")
    parser.add_argument("--out", type=Path, required=True, help="folder for input_<k>.jsonl")
    parser.add_argument("--exclude", type=Path, nargs="*", default=[], help="earlier draws (folders or files)")
    parser.add_argument("--vlmevalkit", type=Path, nargs="?", const=long_prose.VLMEVALKIT_FOLDER, default=None,
                        help="draw from the VLMEvalKit prediction files under this folder too (default folder: "
                             "../shared/data/vlmevalkit); draws before the third held-out round did not")
    args = parser.parse_args(argv)
    exclude = set().union(*(_keys_in(real.LABELS_FOLDER / sub) for sub in ("", "long_prose", "mathvista")))
    for path in args.exclude:
        exclude |= _keys_in(path)
    drawn = long_prose.draw(args.kind, args.per_file, args.share, args.seed, exclude, vlmevalkit=args.vlmevalkit)
    args.out.mkdir(parents=True, exist_ok=True)
    size = -(-len(drawn) // args.chunks)
    for k in range(args.chunks):
        with open(args.out / f"input_{k + 1}.jsonl", "w") as handle:
            for item in drawn[k * size : (k + 1) * size]:
                handle.write(json.dumps(long_prose.labeller_input(item), ensure_ascii=False) + "\n")
    files = len({item.file for item in drawn})
    print(f"{len(drawn)} items of kind {args.kind} from {files} files ({len(exclude)} keys excluded) in {args.chunks} "
          f"files under {args.out}")


if __name__ == "__main__":
    main()
