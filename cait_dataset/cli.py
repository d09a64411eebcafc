"""Console scripts: `cait-quality` (Tables 9-10), `cait-lora` (Table 8) and `cait-build` (Section 3.2, its own
module: construction/command.py); also `python -m cait_dataset quality|lora|build`.

  cait-quality score --out DIR --cait FOLDER [--captions Winoground=CSV] [--images NAME=FOLDER] [options]
  cait-quality winoground-export OUT              Winoground from the hub as a captioned CSV + images
  cait-lora split FOLDER WORK [--train-fraction 0.6 --seed 0]
  cait-lora train WORK [--base Qwen/Qwen2.5-VL-3B-Instruct] [hyper-parameters]
  cait-lora evaluate WORK [--wrapper W] [--model-args K=V,...] [--limit N] [--gen-kwargs K=V,...]
  cait-lora report WORK                           Table 8 from WORK/runs
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path

from lmms_eval_tasks.question import DocError

from .lora import DEFAULT_BASE, LoraSettings
from .quality import BRISQUE_METRICS, DEFAULT_CLIP_MODEL, METRICS, NIQE_METRICS
from .split import PAPER_TRAIN_FRACTION

SOURCE_KINDS = {"cait": "a CAIT folder", "captions": "a captioned CSV", "images": "a folder of images"}


class _AppendSource(argparse.Action):
    """Keeps every dataset option in command-line order: the tables list datasets in that order."""

    def __call__(self, parser, namespace, value, option_string=None):
        name, sep, path = value.partition("=")
        if not sep:
            if self.dest != "cait":
                parser.error(f"{option_string} {value!r}: expected NAME=PATH")
            name, path = "CAIT", value
        if not name or not path:
            parser.error(f"{option_string} {value!r}: expected NAME=PATH")
        namespace.sources = [*(namespace.sources or []), (self.dest, name, Path(path))]


def quality_parser(prog: str = "cait-quality") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Image quality (NIQE, BRISQUE) and CLIP caption "
                                     "alignment per dataset: the CAIT paper's Tables 9-10")
    commands = parser.add_subparsers(dest="command", required=True)
    score = commands.add_parser("score", help="score the datasets' images and write the tables")
    score.set_defaults(sources=[])
    score.add_argument("--cait", action=_AppendSource, metavar="[NAME=]FOLDER", help="a CAIT folder (name: CAIT)")
    score.add_argument("--captions", action=_AppendSource, metavar="NAME=CSV",
                       help="a CSV with image, correct_caption, reversed_caption (e.g. Winoground)")
    score.add_argument("--images", action=_AppendSource, metavar="NAME=FOLDER", help="a folder of images (no captions)")
    score.add_argument("--out", type=Path, required=True, help="output folder")
    score.add_argument("--metrics", nargs="+", choices=METRICS, default=list(METRICS))
    score.add_argument("--niqe-metric", choices=NIQE_METRICS, default="niqe", help="pyiqa metric name (niqe)")
    score.add_argument("--brisque-metric", choices=BRISQUE_METRICS, default="brisque", help="pyiqa metric name (brisque)")
    score.add_argument("--niqe-params", type=Path, help="NIQE parameter file (.mat); default: pyiqa downloads its own")
    score.add_argument("--brisque-params", type=Path,
                       help="BRISQUE parameter file (pyiqa's .pth, or .mat for brisque_matlab); default: pyiqa downloads its own")
    score.add_argument("--clip-model", default=DEFAULT_CLIP_MODEL, help=f"hub id or local folder ({DEFAULT_CLIP_MODEL})")
    score.add_argument("--device", help="torch device (default: cuda when available)")
    score.add_argument("--batch-size", type=int, default=32, help="CLIP images per batch (32)")
    export = commands.add_parser("winoground-export", help="write Winoground (gated on the hub: log in first) "
                                 "as images/ + captions.csv for --captions")
    export.add_argument("out", type=Path)
    export.add_argument("--dataset", default="facebook/winoground", help="hub id or local dataset folder")
    export.add_argument("--split", default="test")
    return parser


def quality_main(argv: list[str] | None = None, prog: str = "cait-quality") -> int:
    from . import quality

    args = quality_parser(prog).parse_args(argv)
    try:
        if args.command == "winoground-export":
            import datasets

            source = Path(args.dataset)
            data = (datasets.load_from_disk(str(source))[args.split] if source.is_dir()
                    else datasets.load_dataset(args.dataset, split=args.split))
            print(quality.winoground_export(data, args.out))
            return 0
        if not args.sources:
            raise DocError("no dataset given: use --cait, --captions or --images")
        readers = {"cait": quality.cait_items, "captions": quality.captioned_items, "images": quality.folder_items}
        items = [readers[kind](path, name) for kind, name, path in args.sources]
        names = [name for _, name, _ in args.sources]
        if len(set(names)) != len(names):
            raise DocError(f"dataset names must differ, got {names}")
        import pandas as pd

        scores = quality.score_items(pd.concat(items, ignore_index=True), args.metrics, niqe_metric=args.niqe_metric,
                                     brisque_metric=args.brisque_metric, niqe_params=args.niqe_params,
                                     brisque_params=args.brisque_params, clip_model=args.clip_model,
                                     device=args.device, batch_size=args.batch_size)
        for path in quality.write_outputs(scores, args.out):
            print(path)
    except (DocError, ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def lora_parser(prog: str = "cait-lora") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="The CAIT paper's LoRA study (Section 5.2, Table 8): "
                                     "split, train, evaluate on the held-out part, report")
    commands = parser.add_subparsers(dest="command", required=True)
    split = commands.add_parser("split", help="the stratified, seeded train / held-out split of a CAIT folder")
    split.add_argument("folder", type=Path, help="a CAIT folder")
    split.add_argument("work", type=Path, help="the study's work folder")
    split.add_argument("--train-fraction", type=float, default=PAPER_TRAIN_FRACTION)
    split.add_argument("--seed", type=int, default=0)
    train = commands.add_parser("train", help="LoRA on the training part, vision tower frozen; save adapter and merged model")
    train.add_argument("work", type=Path)
    train.add_argument("--base", default=DEFAULT_BASE, help=f"hub id or local folder ({DEFAULT_BASE})")
    defaults = LoraSettings()
    for item in fields(LoraSettings):
        flag = "--" + item.name.replace("_", "-")
        default = getattr(defaults, item.name)
        if isinstance(default, bool):
            train.add_argument(flag, action="store_true", help=f"({default})")
        else:
            kind = str if item.name in ("scheduler", "device") else type(default)
            train.add_argument(flag, type=kind, default=default, help=f"({default})")
    evaluate = commands.add_parser("evaluate", help="run lmms-eval's cait task on the held-out part, base and LoRA")
    evaluate.add_argument("work", type=Path)
    evaluate.add_argument("--wrapper", help="lmms-eval --model (default: the base model's registry launch settings)")
    evaluate.add_argument("--model-args", default="", help="added to --model_args of both runs, e.g. device_map=cpu")
    evaluate.add_argument("--device", help="lmms-eval --device")
    evaluate.add_argument("--limit", type=int, help="lmms-eval --limit (first N held-out scenes)")
    evaluate.add_argument("--gen-kwargs", help="lmms-eval --gen_kwargs")
    evaluate.add_argument("--batch-size", type=int, default=1)
    report = commands.add_parser("report", help="Table 8 from the held-out runs")
    report.add_argument("work", type=Path)
    return parser


def lora_main(argv: list[str] | None = None, prog: str = "cait-lora") -> int:
    from . import heldout, lora, split

    args = lora_parser(prog).parse_args(argv)
    try:
        if args.command == "split":
            summary = split.write_split(args.folder, args.work, args.train_fraction, args.seed)
            print(f"{summary['scenes']['train']} training and {summary['scenes']['heldout']} held-out scenes -> "
                  f"{args.work / split.SPLIT_FILE}")
        elif args.command == "train":
            settings = LoraSettings(**{item.name: getattr(args, item.name) for item in fields(LoraSettings)})
            manifest = lora.train(args.work, args.base, settings)
            print(f"{manifest['global_steps']} steps, loss {manifest['train_loss']:.4f}; merged model {manifest['merged']}")
        elif args.command == "evaluate":
            for key, results in heldout.evaluate(args.work, args.wrapper, args.model_args, device=args.device,
                                                 limit=args.limit, gen_kwargs=args.gen_kwargs,
                                                 batch_size=args.batch_size).items():
                print(f"{key}: {results}")
        else:
            numbers = heldout.report(args.work)
            print(heldout.lora_display(numbers).frame.to_string(index=False))
    except (DocError, ValueError, FileNotFoundError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def build_main(argv: list[str] | None = None, prog: str = "cait-build") -> int:
    from .construction.command import main

    return main(argv, prog)
