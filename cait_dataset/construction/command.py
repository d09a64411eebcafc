"""`cait-build` (also `python -m cait_dataset build`): the CAIT construction pipeline over one working folder.

  cait-build verbs WORK (--verbs FILE [--principles-met] | --verbnet [DIR])
  cait-build scenes WORK --config FILE [--llm NAME] [--samples 1] [--per-verb 10] [--dry-run]
  cait-build review-export WORK [--annotators 1] [--server]
  cait-build review-import WORK (--export FILE | --project ID)
  cait-build describe WORK --config FILE [--llm NAME] [--group-size 10] [--dry-run]
  cait-build images WORK --config FILE [--generator NAME] [--candidates 1] [--retry-refused] [--dry-run]
  cait-build filter-export WORK [--size N] [--image-folder DIR --image-url-prefix URL] [--annotators 1] [--server]
  cait-build filter-import WORK (--export FILE | --project ID)
  cait-build assemble WORK [--size N] [--seed 0]
  cait-build status WORK [--size N]
  cait-build run WORK --config FILE [--llm NAME] [--generator NAME] [stage options] [--dry-run]

--config is a YAML file with `judges:` (the LLMs, invscale/judges/config.py's schema) and `generators:`
(cait_dataset/construction/generators.py's); model_configs/cait_build.example.yaml has the paper's settings.
--server (and --project) reach the Label Studio server named by LABEL_STUDIO_URL / LABEL_STUDIO_API_KEY.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lmms_eval_tasks.question import DocError
from invscale.label_studio import ImageOutput, LabelStudioError
from invscale.judges import JudgeConfigError, JudgeError, choose_judges

from . import prompts
from .files import BuildError
from .generators import load_generators


def _pick(items: list, name: str | None, what: str, path: Path):
    if name is None:
        return items[0]
    for item in items:
        if item.name == name:
            return item
    raise BuildError(f"{path}: no {what} named {name!r} (there are {[item.name for item in items]})")


def llm_of(args) -> object:
    if args.config is None:
        raise BuildError("this stage asks an LLM: give --config FILE")
    return choose_judges(args.config, [args.judge] if args.judge else [], named_by="--judge")[0]


def generator_of(args) -> object:
    if args.config is None:
        raise BuildError("this stage makes images: give --config FILE")
    return _pick(load_generators(args.config), args.generator, "generator", args.config)


def parser(prog: str = "cait-build") -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog=prog, description="Build a CAIT dataset as the 'Seeing vs. Believing' "
                                   "paper did (Section 3.2, Tables 19-22): resumable stages over one working folder")
    commands = main.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help)
        sub.add_argument("work", type=Path, help="the working folder")
        return sub

    def model_options(sub, llm: bool = True, generator: bool = False) -> None:
        sub.add_argument("--config", type=Path, help="YAML with judges: (LLMs) and generators:")
        if llm:
            sub.add_argument("--judge", metavar="NAME", help="the judges entry to ask (default: the first)")
            sub.add_argument("--llm", dest="judge", help=argparse.SUPPRESS)  # the older spelling
        if generator:
            sub.add_argument("--generator", help="the generators entry to use (default: the first)")
        sub.add_argument("--dry-run", action="store_true", help="count the calls / images and their cost; make none")

    def label_studio_export(sub) -> None:
        sub.add_argument("--annotators", type=int, default=1, help="annotators per task (1)")
        sub.add_argument("--server", action="store_true", help="also create the Label Studio project")

    def label_studio_import(sub) -> None:
        source = sub.add_mutually_exclusive_group(required=True)
        source.add_argument("--export", type=Path, help="a Label Studio JSON export file")
        source.add_argument("--project", type=int, help="a project id on the server")

    verbs = command("verbs", "add candidate verbs to verbs.csv (the four principles are judged there)")
    source = verbs.add_mutually_exclusive_group(required=True)
    source.add_argument("--verbs", type=Path, help="a verb list: .txt (one a line) or .csv (verb, principle columns)")
    source.add_argument("--verbnet", nargs="?", const="", metavar="DIR",
                        help="VerbNet's class files (default: nltk's installed verbnet corpus)")
    verbs.add_argument("--principles-met", action="store_true",
                       help="the list is already filtered: record its verbs' unjudged principles as yes")

    scenes = command("scenes", "scene pairs for the library verbs (Table 19)")
    model_options(scenes)
    scenes.add_argument("--samples", type=int, default=1, help="calls per verb, each an independent draw (1)")
    scenes.add_argument("--per-verb", type=int, default=prompts.PER_VERB, help=f"pairs asked per call ({prompts.PER_VERB})")

    label_studio_export(command("review-export", "add new scenes to review.csv and write their review tasks"))
    label_studio_import(command("review-import", "fill review.csv from Label Studio annotations"))

    describe = command("describe", "detailed descriptions of the kept scenes (Table 21)")
    model_options(describe)
    describe.add_argument("--group-size", type=int, default=prompts.PER_VERB, help="scenes per call (10)")

    images = command("images", "images of the described scenes (Table 22)")
    model_options(images, llm=False, generator=True)
    images.add_argument("--candidates", type=int, default=1, help="images per scene (1)")
    images.add_argument("--retry-refused", action="store_true", help="ask again for prompts the provider refused")

    filter_export = command("filter-export", "add new images to filter.csv and write their filtering tasks")
    label_studio_export(filter_export)
    filter_export.add_argument("--size", type=int, help="target number of scenes: leave out characteristics whose "
                               "Table 1 quota is filled")
    filter_export.add_argument("--image-folder", type=Path, help="write task images here (default: inline data URIs)")
    filter_export.add_argument("--image-url-prefix", default="", help="the URL the image folder is served under")
    label_studio_import(command("filter-import", "fill filter.csv from Label Studio annotations"))

    assemble = command("assemble", "write the CAIT folder (WORK/cait) from the kept images")
    assemble.add_argument("--size", type=int, help="at most Table 1's quota of this many scenes per characteristic")
    assemble.add_argument("--seed", type=int, default=0, help="draws beyond-quota scenes to leave out (0)")

    status = command("status", "what each stage's file holds")
    status.add_argument("--size", type=int, help="target number of scenes for the Table 1 quotas")

    run = command("run", "every automatic stage with what people decided so far, then the pending human work")
    model_options(run, generator=True)
    run.add_argument("--samples", type=int, default=1)
    run.add_argument("--per-verb", type=int, default=prompts.PER_VERB)
    run.add_argument("--group-size", type=int, default=prompts.PER_VERB)
    run.add_argument("--candidates", type=int, default=1)
    run.add_argument("--retry-refused", action="store_true")
    run.add_argument("--size", type=int)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--annotators", type=int, default=1)
    return main


def _annotations(args, controls=()):
    from invscale.label_studio import annotations_from_export, annotations_from_server, client_from_environment

    if args.export:
        return annotations_from_export(args.export, controls)
    return annotations_from_server(client_from_environment(), args.project, controls)


def _create_project(task_set) -> None:
    from invscale.label_studio import client_from_environment, create_project

    project = create_project(client_from_environment(), task_set)
    print(f"Label Studio project {project} with {len(task_set.tasks)} task(s)")


def _run(args) -> None:
    from . import assemble, describe, filtering, images, review, runner, scenes, verbs

    work = args.work
    if args.command == "verbs":
        if args.verbs:
            candidates, left_out = verbs.listed_verbs(args.verbs, args.principles_met), 0
        else:
            candidates, left_out = verbs.verbnet_candidates(Path(args.verbnet) if args.verbnet else None)
        update = verbs.update_verbs(work, candidates)
        print(f"{update.added} verb(s) added, {update.filled} completed; {update.total} in {work / 'verbs.csv'}, "
              f"{update.library} in the library, {update.unjudged} with principles to judge"
              + (f"; {left_out} VerbNet verb(s) without an Agent V NP frame left out" if left_out else ""))
    elif args.command == "scenes":
        llm = llm_of(args)
        if args.dry_run:
            print(scenes.estimate_scenes(work, llm, args.samples, args.per_verb).line())
            return
        result = scenes.make_scenes(work, llm, args.samples, args.per_verb)
        print(f"{result.asked} request(s), {result.made} call(s) made; {result.scenes} scene(s) added, "
              f"{result.total} in {work / 'scenes.jsonl'}")
        for line in result.unparsed:
            print(f"unparsed: {line}")
    elif args.command == "review-export":
        exported = review.export_review(work, args.annotators)
        print(f"{exported.added} scene(s) added to review.csv ({exported.updated} undecided updated from scenes.jsonl, "
              f"{exported.kept_text} decided with sentences edited in review.csv); {exported.undecided} task(s) in "
              f"{exported.paths['tasks.json']}")
        if args.server and exported.task_set.tasks:
            _create_project(exported.task_set)
    elif args.command == "review-import":
        result = review.import_review(work, _annotations(args, review.CONTROLS))
        print(f"{result.decided} scene(s) decided ({result.kept} kept); {result.undecided} still to review; "
              f"{result.differing} decided row(s) the annotations disagree with (kept as they were)")
        for line in result.conflicts:
            print(f"undecided: {line}")
        if result.unknown:
            print(f"{len(result.unknown)} annotated item(s) are no scene of review.csv, e.g. {result.unknown[0]}")
    elif args.command == "describe":
        llm = llm_of(args)
        if args.dry_run:
            print(describe.estimate_descriptions(work, llm, args.group_size).line())
            return
        result = describe.describe_scenes(work, llm, args.group_size)
        print(f"{result.asked} scene(s) asked about, {result.made} call(s) made; {result.pending} kept scene(s) "
              f"still without a description")
        for line in result.unparsed:
            print(f"unparsed: {line}")
    elif args.command == "images":
        generator = generator_of(args)
        if args.dry_run:
            print(images.estimate_images(work, generator, args.candidates, args.retry_refused).line())
            return
        result = images.generate_images(work, generator, args.candidates, args.retry_refused,
                                        on_image=lambda record: print(f"  {record['scene_id']} #{record['candidate']}: "
                                                                      f"{record['file'] or 'refused: ' + record['refused']}"))
        print(f"{result.made} image(s) made now; {result.images} needed, {result.refused} refused, "
              f"{result.truncated} with prompts cut by the text encoder; {result.undescribed} kept scene(s) "
              "not described yet")
    elif args.command == "filter-export":
        output = ImageOutput(args.image_folder, args.image_url_prefix) if args.image_folder else ImageOutput()
        exported = filtering.export_filter(work, args.size, output, args.annotators)
        print(f"{exported.added} image(s) added to filter.csv; {exported.undecided} task(s) in "
              f"{exported.paths['tasks.json']}" + (f"; {exported.quota_full} left out (their Table 1 quota is filled)"
                                                  if exported.quota_full else ""))
        print(filtering.proportions(work, args.size).to_string(index=False))
        if args.server and exported.task_set.tasks:
            _create_project(exported.task_set)
    elif args.command == "filter-import":
        result = filtering.import_filter(work, _annotations(args))
        print(f"{result.decided} image(s) decided ({result.kept} kept); {result.undecided} still to filter; "
              f"{result.differing} decided row(s) the annotations disagree with (kept as they were)")
        for line in result.conflicts:
            print(f"undecided: {line}")
        if result.unknown:
            print(f"{len(result.unknown)} annotated item(s) are no image of filter.csv, e.g. {result.unknown[0]}")
    elif args.command == "assemble":
        result = assemble.assemble(work, args.size, args.seed)
        print(f"{result.records} record(s) in {result.folder}" + (f"; {result.left_out} kept scene(s) beyond their "
                                                                  f"quota left out" if result.left_out else ""))
        print(result.proportions.to_string(index=False))
    elif args.command == "status":
        print("\n".join(runner.status(work, args.size)))
    else:
        settings = runner.BuildSettings(
            llm=llm_of(args), generator=generator_of(args), samples=args.samples, per_verb=args.per_verb,
            group_size=args.group_size, candidates=args.candidates, retry_refused=args.retry_refused, size=args.size,
            seed=args.seed, annotators=args.annotators)
        if args.dry_run:
            print("\n".join(runner.estimate(work, settings)))
        else:
            runner.run(work, settings)


def main(argv: list[str] | None = None, prog: str = "cait-build") -> int:
    args = parser(prog).parse_args(argv)
    try:
        _run(args)
    except (BuildError, JudgeConfigError, JudgeError, LabelStudioError, DocError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
