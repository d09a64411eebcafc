"""What a logged answer's model was shown: its question and image(s), reloaded from the task's data by
question_id, through the task layer (lmms_eval_tasks) rather than a copy of it. Used by the judges
that read logged answers: the error taxonomy (postprocess/inverse_scaling/taxonomy/) and answer
adjudication (postprocess/adjudication/).

The logs keep each answer but not the question's text or images. For each benchmark split the data is
the base task's dataset block: read from a task folder's `<base task>.yaml` (the package's own
tasks/ by default, i.e. the hub datasets; or a folder written by `python -m lmms_eval_tasks export
--data ...`), or given as `--data TASK=PATH` the way `export` takes it (install.dataset_block). The
rows become canonical questions with the task's own process_docs steps (hooks.questions_for: the
adapter, the finalizer, the image filter), the record's variant is applied (apply_variant: the options
in the order the models saw them), and the images are what lmms-eval would pass the model
(hooks.doc_to_visual), as PNG bytes. A question_id the data lacks is an error naming the split and the
data source: the logs were made from other data.

Without a network (the situation of many users: a cluster's compute nodes, a laptop on a train) the hub's
datasets would each cost huggingface_hub's retries (five, about 23 s) before failing. A run (question_loading:
one command) asks the hub once, with the one request datasets makes first (the dataset card's HEAD, without
retries); when that request gets no answer the rest of the run reads hub datasets only from the local Hugging
Face cache, in the libraries' own offline mode (as HF_HUB_OFFLINE=1, which is honoured up front). The splits
whose questions could not be loaded are collected (QuestionLoading.unloaded) so that a command says once which
they are and how to give them (--tasks-dir, --data).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lmms_eval_tasks.benchmarks import BY_KEY, BenchmarkSpec
from lmms_eval_tasks.install import DATASET_KEYS, TASKS_DIR, dataset_block
from lmms_eval_tasks.question import Question


class QuestionSourceError(ValueError):
    """A task's data that cannot be read, or lacks a logged question; the message names both."""


class NotCachedError(QuestionSourceError):
    """A hub dataset not in the local cache, read without the hub (unreachable, or offline mode)."""


LOCAL_DATA_HINT = ("give --tasks-dir DIR (written by `invscale tasks export --data TASK=PATH`) or --data TASK=PATH for "
                   "local data, or run where the hub is reachable")
SHOWN_FROM = f"; what is shown is read from the task's dataset: {LOCAL_DATA_HINT}"  # ends load_split's errors


@dataclass(frozen=True)
class Unloaded:
    """A split whose questions could not be loaded: how many were wanted, and why."""
    benchmark: str
    split: str
    task: str  # the base task whose data it is (what --data names)
    questions: int
    reason: str
    cache_only: bool  # a hub dataset looked for in the local cache only (hub unreachable, or offline mode)


@dataclass
class QuestionLoading:
    """One run's loading of questions: whether the hub answered (asked once), why it did not, and the splits whose
    questions could not be loaded."""
    hub_reachable: bool = False
    hub_unreachable: str | None = None  # the first failed request's error: no further hub request is made
    unloaded: list[Unloaded] = field(default_factory=list)

    def missing(self) -> str | None:
        """What is missing and how to give it, in one sentence; None when nothing is."""
        if not self.unloaded:
            return None
        splits = ", ".join(f"{u.benchmark} {u.split} {u.questions}" for u in self.unloaded)
        tasks = " ".join(f"--data {task}=PATH" for task in dict.fromkeys(u.task for u in self.unloaded))
        why = []
        if any(u.cache_only for u in self.unloaded):
            why.append(f"the Hugging Face hub cannot be reached ({self.hub_unreachable}), so no further hub request "
                       "was made and only the local cache was read" if self.hub_unreachable else
                       "HF_HUB_OFFLINE is set and they are not in the local Hugging Face cache")
        others = list(dict.fromkeys(u.reason.removesuffix(SHOWN_FROM) for u in self.unloaded if not u.cache_only))
        why += others[:3] + (["..."] if len(others) > 3 else [])
        why = "; ".join(why)
        return (f"{sum(u.questions for u in self.unloaded)} questions and their images cannot be loaded ({splits}): "
                f"{why}; give the data with --tasks-dir DIR (a task folder written by `invscale tasks export DIR "
                f"--data TASK=PATH ...`) or {tasks}")


_LOADING: ContextVar[QuestionLoading | None] = ContextVar("question_loading", default=None)


@contextmanager
def question_loading() -> Iterator[QuestionLoading]:
    """The questions loaded inside are one run: the hub is asked at most once (module docstring)."""
    token = _LOADING.set(QuestionLoading())
    try:
        yield _LOADING.get()
    finally:
        _LOADING.reset(token)


def _hub_offline() -> bool:
    """The libraries' offline mode (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE, read when they were imported)."""
    import datasets
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE or datasets.config.HF_HUB_OFFLINE)


@contextmanager
def _offline_mode() -> Iterator[None]:
    """huggingface_hub and datasets in their offline mode (cache only) for the calls inside."""
    import datasets
    from huggingface_hub import constants

    saved = constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = datasets.config.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE = saved


def _hub_repo(block: dict) -> str | None:
    """The hub dataset datasets would read the split from: the dataset path when it is a repo id (not a builder,
    folder or file), or the repo of its hf://datasets/ data files; None for local data."""
    path = str(block["dataset_path"])
    kwargs = block.get("dataset_kwargs") or {}
    if kwargs.get("load_from_disk"):
        return None
    if path.count("/") == 1 and not Path(path).exists():
        return path
    files = kwargs.get("data_files") or {}
    for value in files.values() if isinstance(files, dict) else [files]:
        for name in [value] if isinstance(value, str) else value:
            if str(name).startswith("hf://datasets/"):
                return "/".join(str(name).removeprefix("hf://datasets/").split("/")[:2]).split("@")[0]
    return None


def _hub_answers(repo: str, block: dict, loading: QuestionLoading) -> bool:
    """Whether the hub can be asked for this dataset: asked once a run, by the HEAD of the dataset card that
    datasets sends first (huggingface_hub's get_hf_file_metadata, which does not retry); an HTTP error is an
    answer (datasets then says what it means), a transport error (no connection, DNS, timeout) is not."""
    if loading.hub_unreachable is not None or _hub_offline():
        return False
    if not loading.hub_reachable:
        from huggingface_hub import get_hf_file_metadata, hf_hub_url
        from huggingface_hub.errors import HfHubHTTPError
        from huggingface_hub.utils import httpx

        revision = (block.get("dataset_kwargs") or {}).get("revision")
        try:
            get_hf_file_metadata(hf_hub_url(repo, "README.md", repo_type="dataset", revision=revision))
        except HfHubHTTPError:
            pass
        except httpx.TransportError as error:
            loading.hub_unreachable = f"{type(error).__name__}: {str(error)[:200]}"
            return False
        loading.hub_reachable = True
    return True


@dataclass(frozen=True)
class ShownQuestion:
    question: Question  # as the variant showed it (options in the shown order, gold remapped)
    images: tuple[bytes, ...]  # PNG bytes (or reload_questions' `encode` of them), in the order the model got them
    image_problems: tuple[str, ...] = ()  # with partial_images: why each image not in `images` could not be read


def _yaml_block(tasks_dir: Path, base: str) -> dict:
    path = Path(tasks_dir) / f"{base}.yaml"
    if not path.is_file():
        raise QuestionSourceError(f"{path}: no such task file (is {tasks_dir} a task folder?)")
    spec = yaml.safe_load(path.read_text(encoding="utf-8").replace("!function ", ""))
    block = {key: spec[key] for key in DATASET_KEYS if key in spec}
    if "dataset_path" not in block or "test_split" not in block:
        raise QuestionSourceError(f"{path}: no dataset_path / test_split")
    files = (block.get("dataset_kwargs") or {}).get("data_files")
    if isinstance(files, dict):  # lmms-eval resolves relative data files against the YAML's folder
        block["dataset_kwargs"]["data_files"] = {
            split: [str(path.parent / f) if "://" not in f and not Path(f).is_absolute() else f
                    for f in ([paths] if isinstance(paths, str) else paths)]
            for split, paths in files.items()}
    return block


def dataset_source(spec: BenchmarkSpec, tasks_dir: Path | None = None, data: Mapping[str, str] | None = None) -> dict:
    """The dataset keys lmms-eval would load the split's base task from."""
    if data and spec.task in data:
        return dataset_block(spec.task, data[spec.task])
    return _yaml_block(Path(tasks_dir or TASKS_DIR), spec.task)


def load_split(block: dict, where: str, loading: QuestionLoading | None = None):
    """The task's test split as a datasets.Dataset, loaded the way lmms-eval's task loader does; a hub dataset
    from the local cache only once the run's hub request has failed (module docstring)."""
    import datasets

    loading = loading or _LOADING.get() or QuestionLoading()
    kwargs = dict(block.get("dataset_kwargs") or {})
    repo = _hub_repo(block)
    online = repo is None or _hub_answers(repo, block, loading)
    try:
        if kwargs.pop("load_from_disk", False):
            return datasets.load_from_disk(block["dataset_path"])[block["test_split"]]
        with _offline_mode() if not online else nullcontext():
            return datasets.load_dataset(block["dataset_path"], block.get("dataset_name"), split=block["test_split"],
                                         **kwargs)
    except Exception as error:  # noqa: BLE001 (datasets raises many kinds: offline hub, missing file, bad split)
        cause = (f"not in the local Hugging Face cache, and the hub cannot be reached ({loading.hub_unreachable})"
                 if not online and loading.hub_unreachable else f"{type(error).__name__}: {str(error)[:300]}")
        raise (QuestionSourceError if online else NotCachedError)(
            f"{where}: cannot load {block['dataset_path']} split {block['test_split']}: {cause}{SHOWN_FROM}") from None


def reload_questions(wanted: Iterable[tuple[str, str, str, str]], tasks_dir: Path | None = None,
                     data: Mapping[str, str] | None = None,
                     encode: Callable[[Any], Any] | None = None,
                     partial_images: bool = False) -> dict[tuple[str, str, str, str], ShownQuestion]:
    """(benchmark, split, question_id, variant) -> the question as shown, with its images: PNG bytes, or what
    `encode` makes of each image doc_to_visual gives (the explorer takes the PIL images as they are: a PNG of a
    1024 x 1024 photo costs about 0.8 s to encode). An image that cannot be read is a DocError (a judge must see
    every image), or with `partial_images` left out and said in image_problems (the explorer shows the rest)."""
    import datasets

    if encode is None:  # the judges' PNG bytes; its module (aiohttp's client) is not imported for the explorer
        from invscale.judges.client import image_bytes as encode

    by_split: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for benchmark, split, question_id, variant in wanted:
        by_split.setdefault((benchmark, split), set()).add((question_id, variant))
    loading = _LOADING.get() or QuestionLoading()
    shown, unloaded = {}, []
    for (benchmark, split), keys in by_split.items():
        spec = BY_KEY.get(f"{benchmark}:{split}")
        if spec is None:
            raise QuestionSourceError(f"no task holds {benchmark} {split}")
        block = dataset_source(spec, tasks_dir, data)
        where = f"{benchmark} {split} (task {spec.task}, data {block['dataset_path']})"
        try:
            dataset = load_split(block, where, loading)
        except QuestionSourceError as error:  # the other splits are still tried: one message names every one
            unloaded.append(Unloaded(benchmark, split, spec.task, len({q for q, _ in keys}), str(error),
                                     isinstance(error, NotCachedError)))
            continue
        # the task hooks once a split's data is read (without any, nothing of theirs is needed)
        from lmms_eval_tasks.hooks import QUESTION_COLUMN, doc_to_visual, questions_for, visuals_and_problems
        from lmms_eval_tasks.variants import VARIANTS, apply_variant

        positions, questions = questions_for(dataset, spec)
        index = {question.question_id: (position, question) for position, question in zip(positions, questions)}
        absent = sorted(question_id for question_id, _ in keys if question_id not in index)
        if absent:
            raise QuestionSourceError(f"{where}: no question {absent[0]!r} ({len(absent)} of the wanted questions "
                                      "are missing): were the logs made from other data?")
        # Images decoded by load_image, not by datasets: a file that cannot be read is then said for its question.
        dataset = dataset.cast(datasets.Features({name: datasets.Image(decode=False) if isinstance(
            feature, datasets.Image) else feature for name, feature in dataset.features.items()}))
        for question_id, variant in sorted(keys):
            if variant not in VARIANTS:
                raise QuestionSourceError(f"{where}: question {question_id!r} has unknown variant {variant!r}")
            position, question = index[question_id]
            question = apply_variant(question, VARIANTS[variant])
            doc = {**dataset[position], QUESTION_COLUMN: question.to_json()}
            images, problems = visuals_and_problems(doc) if partial_images else (doc_to_visual(doc), [])
            shown[(benchmark, split, question_id, variant)] = ShownQuestion(
                question, tuple(encode(image) for image in images), tuple(problems))
    loading.unloaded.extend(unloaded)
    if len(unloaded) == 1:
        raise QuestionSourceError(unloaded[0].reason)
    if unloaded:
        raise QuestionSourceError(QuestionLoading(loading.hub_reachable, loading.hub_unreachable, unloaded).missing())
    return shown
