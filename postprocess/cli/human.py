"""The human-annotation commands of `python -m postprocess` (postprocess/human/).

  human-export --set taxonomy|cait-baseline|cait-failures --out OUT [--server] ...
      writes OUT/<set>_tasks.json (Label Studio's import format), <set>_label_config.xml,
      <set>_items.csv (what the statistics need and annotators must not see) and, for the sampled
      sets, <set>_strata.csv (numbers drawn per stratum); with --server also creates the project
      on the Label Studio server named by LABEL_STUDIO_URL / LABEL_STUDIO_API_KEY.
        taxonomy       --verdicts FILE --questions FILE [--n 127 --flagged-share 0.4 --strata benchmark]
        cait-baseline  --cait-folder DIR
        cait-failures  --cait-folder DIR --logs DIR ... [--n 200 --variant structured]
  human-import (--project ID | --export FILE) --out annotations.csv
      the annotations of a project on the server, or of a Label Studio JSON export file.
  human-stats --set SET --annotations CSV --items CSV --out DIR [--by group|model]
      DIR/human_<set>_<table>.csv for each table of postprocess.human.agreement.
Frames are read from .csv, .parquet or .jsonl files (the questions' `images` lists need Parquet or JSONL;
relative image paths are relative to the questions file's folder).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from postprocess.cli.logs import add_log_arguments, read_logs
from postprocess.human.sets import DEFAULT_ANNOTATORS, PAPER_FLAGGED_SHARE, SET_NAMES

DEFAULT_SIZES = {"taxonomy": 127, "cait-failures": 200}


def add(subparsers: argparse._SubParsersAction, prefix: str = "human-") -> None:
    """The three commands, named <prefix>export, <prefix>import, <prefix>stats (`invscale human export`: no prefix)."""
    export = subparsers.add_parser(f"{prefix}export", help="write a human-annotation task set for Label Studio")
    export.add_argument("--set", required=True, choices=SET_NAMES, dest="task_set")
    export.add_argument("--out", required=True, type=Path, metavar="OUT", help="output folder")
    export.add_argument("--seed", type=int, default=0, help="sampling and presentation order seed (0)")
    export.add_argument("--annotators", type=int, help=f"annotators per task {DEFAULT_ANNOTATORS}")
    export.add_argument("--n", type=int, help=f"sample size {DEFAULT_SIZES}")
    export.add_argument("--image-folder", type=Path, metavar="DIR",
                        help="write images here and reference them by --image-url-prefix (default: inline data URIs)")
    export.add_argument("--image-url-prefix", default="", metavar="URL",
                        help="the URL the image folder is served under, e.g. /data/local-files/?d=images/")
    export.add_argument("--server", action="store_true",
                        help="also create the project on the server named by LABEL_STUDIO_URL / LABEL_STUDIO_API_KEY")
    export.add_argument("--verdicts", type=Path, metavar="FILE", help="taxonomy: the judges' verdicts")
    export.add_argument("--questions", type=Path, metavar="FILE", help="taxonomy: what the judged questions show")
    export.add_argument("--flagged-share", type=float, default=PAPER_FLAGGED_SHARE,
                        help="taxonomy: share of the sample flagged Bad Annotation by either judge (0.4; Appendix H "
                             "allows at most 55 of its 127)")
    export.add_argument("--strata", nargs="+", default=["benchmark"], choices=["benchmark", "family"],
                        help="taxonomy: the columns the quotas are spread over (benchmark)")
    export.add_argument("--cait-folder", type=Path, metavar="DIR", help="CAIT sets: the CAIT folder (cait.jsonl)")
    export.add_argument("--variant", default="structured", help="cait-failures: the prompt variant (structured)")
    add_log_arguments(export, required=False)
    export.set_defaults(handler=export_main)

    imported = subparsers.add_parser(f"{prefix}import", help="Label Studio annotations (server or export file) -> CSV")
    source = imported.add_mutually_exclusive_group(required=True)
    source.add_argument("--project", type=int, help="project id on the server named by LABEL_STUDIO_URL")
    source.add_argument("--export", type=Path, metavar="FILE", help="a Label Studio JSON export file")
    imported.add_argument("--out", required=True, type=Path, metavar="CSV", help="annotations CSV")
    imported.set_defaults(handler=import_main)

    stats = subparsers.add_parser(f"{prefix}stats", help="agreement, accuracy and failure-mode tables of annotations")
    stats.add_argument("--set", required=True, choices=SET_NAMES, dest="task_set")
    stats.add_argument("--annotations", required=True, type=Path, metavar="CSV", help="a human-import output")
    stats.add_argument("--items", required=True, type=Path, metavar="CSV", help="the set's items file (human-export)")
    stats.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder")
    stats.add_argument("--by", default="group", choices=["group", "model"], help="cait-failures: count modes by (group)")
    stats.set_defaults(handler=stats_main)


def read_frame(path: Path) -> pd.DataFrame:
    """A frame from .csv, .parquet or .jsonl."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    if path.suffix == ".jsonl":
        return pd.read_json(path, lines=True, dtype=False)
    if path.suffix == ".csv":
        return pd.read_csv(path)
    raise ValueError(f"{path}: expected a .csv, .parquet or .jsonl file")


def with_image_paths_from(questions: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Relative image paths of a questions file are relative to the file's folder."""
    if "images" not in questions:
        return questions

    def resolve(images):
        listed = list(images) if isinstance(images, (list, tuple, np.ndarray)) else [images]
        return [str(folder / image) if isinstance(image, str) and not Path(image).is_absolute() else image
                for image in listed]
    return questions.assign(images=questions["images"].map(resolve))


def _require(args: argparse.Namespace, *names: str) -> None:
    missing = [f"--{name.replace('_', '-')}" for name in names if not getattr(args, name)]
    if missing:
        raise ValueError(f"human-export --set {args.task_set} needs {' and '.join(missing)}")


def build_task_set(args: argparse.Namespace):
    """(TaskSet, strata frame or None) for the export options."""
    from lmms_eval_tasks.cait import read_folder
    from postprocess.human import task_sets
    from invscale.label_studio import ImageOutput

    images = ImageOutput(args.image_folder, args.image_url_prefix) if args.image_folder else ImageOutput()
    annotators = args.annotators or DEFAULT_ANNOTATORS[args.task_set]
    size = args.n or DEFAULT_SIZES.get(args.task_set)
    if args.task_set == "taxonomy":
        _require(args, "verdicts", "questions")
        sample = task_sets.sample_taxonomy_check(read_frame(args.verdicts), size, args.flagged_share,
                                                 tuple(args.strata), args.seed)
        questions = with_image_paths_from(read_frame(args.questions), args.questions.parent)
        return task_sets.taxonomy_task_set(sample, questions, images, args.seed, annotators), sample.strata
    _require(args, "cait_folder")
    records = read_folder(args.cait_folder)
    if args.task_set == "cait-baseline":
        return task_sets.cait_baseline_task_set(records, images, args.seed, annotators), None
    _require(args, "logs")
    from postprocess.cait.metrics import cait_models_frame, cait_rows

    registry, ingested = read_logs(args)
    sample = task_sets.sample_cait_failures(cait_rows(ingested.table), size, args.seed, args.variant)
    return task_sets.cait_failure_task_set(sample, records, cait_models_frame(registry), images, args.seed,
                                           annotators), sample.strata


def export_main(args: argparse.Namespace) -> int:
    from invscale.label_studio import client_from_environment, create_project, write_task_set

    task_set, strata = build_task_set(args)
    paths = write_task_set(task_set, args.out)
    if strata is not None:
        paths["strata.csv"] = args.out / f"{task_set.name}_strata.csv"
        strata.to_csv(paths["strata.csv"], index=False)
        print(f"{task_set.name}: drew {int(strata['drawn'].sum())} of {int(strata['available'].sum())} "
              f"(asked for {args.n or DEFAULT_SIZES[task_set.name]}); per stratum: {paths['strata.csv']}")
    print(f"{task_set.name}: {len(task_set.tasks)} tasks in {paths['tasks.json']}")
    if args.server:
        project = create_project(client_from_environment(), task_set)
        print(f"{task_set.name}: Label Studio project {project} with {len(task_set.tasks)} tasks, "
              f"{task_set.annotators_per_task} annotator(s) per task")
    return 0


def import_main(args: argparse.Namespace) -> int:
    from invscale.label_studio import (annotations_from_export, annotations_from_server,
                                                client_from_environment, write_annotations)

    if args.export:
        frame = annotations_from_export(args.export)
    else:
        frame = annotations_from_server(client_from_environment(), args.project)
    write_annotations(frame, args.out)
    print(f"{len(frame)} annotations ({int(frame['skipped'].sum())} skipped) by {frame['annotator'].nunique()} "
          f"annotator(s) on {frame['item_key'].nunique()} items: {args.out}")
    return 0


def read_items(path: Path) -> pd.DataFrame:
    items = pd.read_csv(path, dtype={"item_key": str, "question_key": str, "scene": str, "gold": str, "model": str})
    if "item_key" not in items:
        raise ValueError(f"{path}: no item_key column (not an items file written by human-export)")
    return items


def stats_main(args: argparse.Namespace) -> int:
    from invscale.label_studio import read_annotations
    from postprocess.human.stats_files import set_statistics, write_statistics

    tables = set_statistics(args.task_set, read_annotations(args.annotations), read_items(args.items), args.by)
    write_statistics(args.task_set, tables, args.out)
    print(f"{args.task_set}: {len(tables)} tables ({', '.join(tables)}) in {args.out}")
    return 0
