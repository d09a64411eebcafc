"""The three human-annotation task sets, from frames to Label Studio task sets (label_studio.TaskSet).

Every set shows one item per task and asks for one choice (the control label_studio.CONTROL). Items
are shuffled with the seed and keyed in shown order ("<set>-0001", ...); what annotators must not see
(gold answers, judges' verdicts, the model, sampling strata) stays out of the tasks and goes to the
items frame, which the statistics (agreement.py) join on `item_key`.

a) taxonomy (inverse-scaling paper, Section 5.6 and Appendix H): a stratified subsample of the
   error-taxonomy questions the LLM judges classified, over-representing what either judge called
   Bad Annotation, labelled by people into the judges' three categories.
   Input: a verdicts frame, one row per judged question and judge (VERDICT_COLUMNS):
     question_key  the judged question (one flip of one case), unique per question
     benchmark     its dataset (e.g. "MMMU"); one value per question
     family        the model family of its case (e.g. "Qwen3-VL"); one value per question
     judge         the judge's name (e.g. "gpt-5.4", "claude-opus-4-6")
     label         one of VERDICT_LABELS: TAXONOMY_LABELS or UNPARSED (no valid verdict after retries)
   Every question needs exactly one verdict from every judge that appears in the frame.
   The tasks show what the judges were shown (Appendix G.1), from a questions frame
   (TAXONOMY_QUESTION_COLUMNS): question_key, question, options (text, or a list lettered A., B., ...),
   answer, response_correct ("Model A"), response_incorrect ("Model B"), images (a list of images:
   paths, bytes, PIL images or datasets image dicts; may be empty).
b) cait-baseline (CAIT paper, Section 3.3, Appendix A.2): every CAIT item, the image and its two
   options in the order the tasks use (lmms_eval_tasks.cait.balance_answer_positions), answer A or B;
   Label Studio's lead_time per annotation is the reasoning time.
c) cait-failures (CAIT paper, Section 5.3, Appendix C): a seeded sample of errors of the structured
   prompt (postprocess.cait.metrics.cait_rows rows with variant "structured" and correct False), labelled
   into the paper's four failure modes, shown with the image, the options, the right answer, the
   model's answer and its full response (the model's name is not shown).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

import numpy as np
import pandas as pd

from lmms_eval_tasks.prompts import CAIT_QUESTION
from invscale.label_studio import ImageOutput, LabelStudioError, TaskSet, choices_xml
from invscale.quotas import largest_remainder
from postprocess.human.sets import DEFAULT_ANNOTATORS, PAPER_FLAGGED_SHARE, SET_NAMES  # noqa: F401 (theirs here too)

GENUINE, BAD_ANNOTATION, FORMAT_MISMATCH = "Genuine Error", "Bad Annotation or Ambiguous", "Format Mismatch"
TAXONOMY_LABELS = (GENUINE, BAD_ANNOTATION, FORMAT_MISMATCH)
UNPARSED = "unparsed"
VERDICT_LABELS = (*TAXONOMY_LABELS, UNPARSED)
VERDICT_COLUMNS = ["question_key", "benchmark", "family", "judge", "label"]
VERDICT_PREFIX = "verdict_"  # sampled items carry each judge's label as verdict_<judge>
TAXONOMY_QUESTION_COLUMNS = ["question_key", "question", "options", "answer", "response_correct",
                             "response_incorrect", "images"]
CAIT_ANSWERS = ("A", "B")
FAILURE_MODES = ("Statistical Frequency Bias", "Logical Impossibility", "Semantic Binding Failure",
                 "Alignment Failure")

# The category definitions of the Appendix G.1 judge prompt, shown to people as the choices' hints.
TAXONOMY_HINTS = {
    GENUINE: "Model B made a clear mistake -- whether through visual misidentification, wrong reasoning, incorrect "
             "knowledge, falling for a plausible distractor, or simply picking the wrong answer. This covers any "
             "case where the model genuinely got it wrong.",
    FORMAT_MISMATCH: "Model B effectively gives the correct answer content, but in a form that would not match the "
                     "benchmark answer format (e.g., numeric value instead of option letter, or full option text "
                     "instead of just the letter). If the response is self-contradictory or clearly commits to the "
                     "wrong answer, use Genuine Error.",
    BAD_ANNOTATION: "Use this only when there is strong evidence that the ground-truth answer is wrong, the question "
                    "is genuinely ambiguous, or multiple answers would reasonably be acceptable. Do NOT use this "
                    "category just because Model B's answer seems plausible; if the benchmark answer is still "
                    "clearly better supported, use Genuine Error.",
}
# The four modes as CAIT Section 5.3 defines them.
FAILURE_MODE_HINTS = {
    "Statistical Frequency Bias": "The model acknowledges the possibility of an event but rejects valid visual "
                                  "evidence because the scenario contradicts the statistical likelihoods observed "
                                  "in its training distribution.",
    "Logical Impossibility": "The model employs a rigid rejection mechanism, asserting that visual content violates "
                             "fundamental physical laws or logical constraints, often explicitly labeling the "
                             "scenario as \"absurd\" or \"impossible\".",
    "Semantic Binding Failure": "A pure vision-language alignment error where the model correctly identifies objects "
                                "but misattributes semantic roles (e.g., Agent-Patient reversal) or spatial relation "
                                "due to attention failures.",
    "Alignment Failure": "A disconnect between reasoning and generation, where the model deduces the correct answer "
                         "in its chain-of-thought but hallucinates an inverted final label due to the re-emergence "
                         "of language priors.",
}
CAIT_STEM = CAIT_QUESTION.splitlines()[0]  # "Which of the following option better describes the image?"


@dataclass(frozen=True)
class Sample:
    """A drawn sample and the numbers drawn per stratum (available, drawn, weight = available / drawn)."""

    items: pd.DataFrame
    strata: pd.DataFrame


# ---------------------------------------------------------------------------------------------- configs
TAXONOMY_CONFIG = f"""<View>
  <Header value="Model A answered correctly and Model B answered incorrectly. Why did Model B fail?"/>
  <Image name="image" valueList="$images"/>
  <Header value="Question"/>
  <Text name="question" value="$question"/>
  <Header value="Options"/>
  <Text name="options" value="$options"/>
  <Header value="Correct answer"/>
  <Text name="answer" value="$answer"/>
  <Header value="Model A response (correct)"/>
  <Text name="response_a" value="$response_a"/>
  <Header value="Model B response (incorrect)"/>
  <Text name="response_b" value="$response_b"/>
  <Header value="Categorize Model B's failure into exactly one category"/>
{choices_xml(TAXONOMY_LABELS, to_name="question", hints=TAXONOMY_HINTS)}
</View>
"""

CAIT_BASELINE_CONFIG = f"""<View>
  <Image name="image" value="$image"/>
  <Header value={quoteattr(CAIT_STEM)}/>
  <Text name="option_a" value="$option_a"/>
  <Text name="option_b" value="$option_b"/>
{choices_xml(CAIT_ANSWERS)}
</View>
"""

CAIT_FAILURE_CONFIG = f"""<View>
  <Image name="image" value="$image"/>
  <Header value={quoteattr(CAIT_STEM)}/>
  <Text name="option_a" value="$option_a"/>
  <Text name="option_b" value="$option_b"/>
  <Text name="outcome" value="$outcome"/>
  <Header value="The model's response"/>
  <Text name="response" value="$response"/>
  <Header value="Which failure mode does the response show?"/>
{choices_xml(FAILURE_MODES, hints=FAILURE_MODE_HINTS)}
</View>
"""


def _item_keys(name: str, count: int) -> list[str]:
    return [f"{name}-{i:04d}" for i in range(1, count + 1)]


def _option_lines(options) -> str:
    if isinstance(options, str):
        return options
    return "\n".join(f"{chr(ord('A') + i)}. {option}" for i, option in enumerate(options))


# ---------------------------------------------------------------------------------------------- taxonomy
def validate_verdicts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The verdicts frame checked against VERDICT_COLUMNS and its rules; returns one row per question
    (question_key, benchmark, family) with a label column verdict_<judge> per judge."""
    missing = [column for column in VERDICT_COLUMNS if column not in verdicts]
    if missing:
        raise ValueError(f"verdicts: missing column(s) {missing}; expected {VERDICT_COLUMNS}")
    bad = verdicts[~verdicts["label"].isin(VERDICT_LABELS)]
    if not bad.empty:
        row = bad.iloc[0]
        raise ValueError(f"verdicts: question {row['question_key']!r} judge {row['judge']!r}: label {row['label']!r} "
                         f"is not one of {list(VERDICT_LABELS)} ({len(bad)} such row(s))")
    duplicated = verdicts[verdicts.duplicated(["question_key", "judge"], keep=False)]
    if not duplicated.empty:
        key, judge = duplicated.iloc[0][["question_key", "judge"]]
        count = int(((duplicated["question_key"] == key) & (duplicated["judge"] == judge)).sum())
        raise ValueError(f"verdicts: question {key!r} has {count} verdicts from judge {judge!r}")
    for column in ("question_key", "judge", "benchmark", "family"):
        empty = verdicts[verdicts[column].isna() | (verdicts[column].astype(str).str.strip() == "")]
        if not empty.empty:
            raise ValueError(f"verdicts: row {empty.index[0]} has no {column} ({len(empty)} such row(s))")
    for column in ("benchmark", "family"):
        varying = verdicts.groupby("question_key")[column].nunique()
        if (varying > 1).any():
            raise ValueError(f"verdicts: question {varying[varying > 1].index[0]!r} has more than one {column}")
    wide = verdicts.pivot(index="question_key", columns="judge", values="label").add_prefix(VERDICT_PREFIX)
    if wide.isna().any().any():
        key, judge = next((k, j) for k, row in wide.iterrows() for j, v in row.items() if pd.isna(v))
        raise ValueError(f"verdicts: question {key!r} has no verdict from judge {judge.removeprefix(VERDICT_PREFIX)!r}")
    questions = verdicts.drop_duplicates("question_key").set_index("question_key")[["benchmark", "family"]]
    return questions.join(wide).reset_index()


def sample_taxonomy_check(verdicts: pd.DataFrame, n: int = 127, flagged_share: float = PAPER_FLAGGED_SHARE,
                          strata: tuple[str, ...] = ("benchmark",), seed: int = 0) -> Sample:
    """Appendix H's check sample: `n` questions, `flagged_share` of them (as far as there are) from the
    questions either judge called Bad Annotation or Ambiguous ("flagged"), the rest from the others;
    within each class the quota is spread over the `strata` cells in proportion to their size (largest
    remainder), and each cell is drawn at random with `seed`. The paper gives no quotas, so the share is
    an option (default PAPER_FLAGGED_SHARE, within the bound the paper's figures set). A class with too few questions leaves its shortfall to the other.

    items: question_key, benchmark, family, flagged, flagged_by (the flagging judges, comma-separated),
    the judges' labels (a column verdict_<judge> per judge), weight (available / drawn in its cell: the inverse
    inclusion probability, for population estimates). strata: flagged, the strata columns, available,
    drawn, weight."""
    if not 0 <= flagged_share <= 1:
        raise ValueError(f"flagged_share must be within [0, 1], got {flagged_share}")
    if n < 1:
        raise ValueError(f"the sample size must be positive, got {n}")
    questions = validate_verdicts(verdicts)
    judges = [c for c in questions.columns if c.startswith(VERDICT_PREFIX)]
    unknown = [column for column in strata if column not in ("benchmark", "family")]
    if unknown:
        raise ValueError(f"strata columns must be benchmark and/or family, got {unknown}")
    flags = questions[judges].eq(BAD_ANNOTATION)
    questions["flagged"] = flags.any(axis=1)
    questions["flagged_by"] = [",".join(j.removeprefix(VERDICT_PREFIX) for j in judges if row[j])
                               for _, row in flags.iterrows()]
    questions = questions.sort_values("question_key", kind="stable").reset_index(drop=True)

    available = {flag: int((questions["flagged"] == flag).sum()) for flag in (True, False)}
    flagged_quota = min(math.floor(n * flagged_share + 0.5), available[True])
    other_quota = min(n - flagged_quota, available[False])
    flagged_quota = min(n - other_quota, available[True])  # the other class's shortfall
    rng = np.random.default_rng(seed)
    drawn, strata_rows = [], []
    for flag, quota in ((True, flagged_quota), (False, other_quota)):
        pool = questions[questions["flagged"] == flag]
        cells = pool.groupby(list(strata), sort=True)
        allocation = largest_remainder(cells.size(), quota)
        for cell_key, cell in cells:
            cell_key = cell_key if isinstance(cell_key, tuple) else (cell_key,)
            take = allocation[cell_key if len(strata) > 1 else cell_key[0]]
            chosen = cell.iloc[np.sort(rng.choice(len(cell), size=take, replace=False))] if take else cell.iloc[:0]
            weight = len(cell) / take if take else np.nan
            drawn.append(chosen.assign(weight=weight))
            strata_rows.append({"flagged": flag, **dict(zip(strata, cell_key)), "available": len(cell),
                                "drawn": take, "weight": weight})
    items = pd.concat(drawn, ignore_index=True)
    columns = ["question_key", "benchmark", "family", "flagged", "flagged_by", *judges, "weight"]
    return Sample(items[columns], pd.DataFrame(strata_rows, columns=["flagged", *strata, "available", "drawn", "weight"]))


def taxonomy_task_set(sample: Sample, questions: pd.DataFrame, images: ImageOutput = ImageOutput(),
                      seed: int = 0, annotators: int = DEFAULT_ANNOTATORS["taxonomy"]) -> TaskSet:
    """Tasks for the sampled questions (the questions frame gives what is shown, see the module doc)."""
    missing = [column for column in TAXONOMY_QUESTION_COLUMNS if column not in questions]
    if missing:
        raise ValueError(f"taxonomy questions: missing column(s) {missing}; expected {TAXONOMY_QUESTION_COLUMNS}")
    repeated = questions["question_key"][questions["question_key"].duplicated()]
    if not repeated.empty:
        raise ValueError(f"taxonomy questions: question_key {repeated.iloc[0]!r} appears more than once")
    content = questions.set_index("question_key")
    absent = [key for key in sample.items["question_key"] if key not in content.index]
    if absent:
        raise ValueError(f"taxonomy questions: no row for sampled question {absent[0]!r} ({len(absent)} missing)")
    items = sample.items.sample(frac=1, random_state=seed).reset_index(drop=True)
    items.insert(0, "item_key", _item_keys("taxonomy", len(items)))
    tasks = []
    for key, question_key in zip(items["item_key"], items["question_key"]):
        row = content.loc[question_key]
        shown = row["images"] if isinstance(row["images"], (list, tuple, np.ndarray)) else [row["images"]]
        where = f"taxonomy question {question_key!r}"
        tasks.append({
            "item_key": key,
            "images": [images.reference(image, f"{key}_{i}", f"{where} image {i + 1}") for i, image in enumerate(shown)
                       if image is not None],
            "question": str(row["question"]), "options": _option_lines(row["options"]), "answer": str(row["answer"]),
            "response_a": str(row["response_correct"]), "response_b": str(row["response_incorrect"]),
        })
    return TaskSet("taxonomy", "Error taxonomy: human check", TAXONOMY_CONFIG, TAXONOMY_LABELS, tasks, items,
                   annotators)


# ---------------------------------------------------------------------------------------------- CAIT
def cait_answer_key(records: list[dict]) -> pd.DataFrame:
    """scene, category, option_a, option_b and gold of every CAIT record, in the balanced order the
    lmms-eval tasks use (records as lmms_eval_tasks.cait.read_folder returns them)."""
    from lmms_eval_tasks.benchmarks import BY_TASK
    from lmms_eval_tasks.cait import balance_answer_positions, cait  # imports `datasets`: only when needed

    questions = [cait(record, position, BY_TASK["cait"]) for position, record in enumerate(records)]
    balance_answer_positions(questions)
    return pd.DataFrame({
        "scene": [q.question_id for q in questions], "category": [q.subtask for q in questions],
        "option_a": [q.options[0] for q in questions], "option_b": [q.options[1] for q in questions],
        "gold": [q.gold for q in questions],
    })


def cait_baseline_task_set(records: list[dict], images: ImageOutput = ImageOutput(), seed: int = 0,
                           annotators: int = DEFAULT_ANNOTATORS["cait-baseline"]) -> TaskSet:
    """Every CAIT item as one A/B task; items: item_key, scene, category, gold (hidden from annotators)."""
    image_of = {record["id"]: record["image"] for record in records}
    items = cait_answer_key(records).sample(frac=1, random_state=seed).reset_index(drop=True)
    items.insert(0, "item_key", _item_keys("cait-baseline", len(items)))
    tasks = [{"item_key": key, "image": images.reference(image_of[scene], key, f"CAIT scene {scene!r}"),
              "option_a": f"Option A: {a}", "option_b": f"Option B: {b}"}
             for key, scene, a, b in zip(items["item_key"], items["scene"], items["option_a"], items["option_b"])]
    return TaskSet("cait-baseline", "CAIT human baseline", CAIT_BASELINE_CONFIG, CAIT_ANSWERS, tasks,
                   items[["item_key", "scene", "category", "gold"]], annotators)


def sample_cait_failures(rows: pd.DataFrame, n: int = 200, seed: int = 0, variant: str = "structured") -> Sample:
    """A simple random sample (seeded) of `n` wrong answers under `variant` from cait_rows rows (all of
    them when there are fewer; unparsed answers are wrong answers too). strata: per model, the errors
    available and drawn, weight = available / drawn."""
    if n < 1:
        raise ValueError(f"the sample size must be positive, got {n}")
    errors = rows[(rows["variant"] == variant) & ~rows["correct"].astype(bool)]
    errors = errors.sort_values(["model", "scene"], kind="stable").reset_index(drop=True)
    duplicated = errors[errors.duplicated(["model", "scene"])]
    if not duplicated.empty:
        raise ValueError(f"CAIT rows: model {duplicated['model'].iloc[0]!r} answered scene "
                         f"{duplicated['scene'].iloc[0]!r} more than once under {variant!r}")
    rng = np.random.default_rng(seed)
    chosen = errors.iloc[np.sort(rng.choice(len(errors), size=min(n, len(errors)), replace=False))]
    counts = pd.DataFrame({"available": errors.groupby("model").size(),
                           "drawn": chosen.groupby("model").size()}).fillna(0).astype(int)
    counts["weight"] = counts["available"] / counts["drawn"].replace(0, np.nan)
    columns = ["model", "scene", "category", "variant", "gold", "prediction", "options", "response"]
    return Sample(chosen[columns].reset_index(drop=True), counts.rename_axis("model").reset_index())


def cait_failure_task_set(sample: Sample, records: list[dict], models: pd.DataFrame | None = None,
                          images: ImageOutput = ImageOutput(), seed: int = 0,
                          annotators: int = DEFAULT_ANNOTATORS["cait-failures"]) -> TaskSet:
    """Tasks for sampled structured-prompt errors; items: item_key, model, group (from `models`, a
    frame with model and group, e.g. postprocess.cait.metrics.cait_models_frame), scene, category, gold,
    prediction. The images come from the CAIT records by scene."""
    image_of = {record["id"]: record["image"] for record in records}
    items = sample.items.sample(frac=1, random_state=seed).reset_index(drop=True)
    items.insert(0, "item_key", _item_keys("cait-failures", len(items)))
    groups = {} if models is None else dict(zip(models["model"], models["group"]))
    items.insert(2, "group", [groups.get(model) for model in items["model"]])
    tasks = []
    for row in items.itertuples():
        where = f"CAIT model {row.model!r} scene {row.scene!r}"
        if row.scene not in image_of:
            raise LabelStudioError(f"{where}: the CAIT folder has no scene {row.scene!r}")
        options = list(row.options) if isinstance(row.options, (list, tuple, np.ndarray)) else None
        if options is None or len(options) != 2:
            raise LabelStudioError(f"{where}: the record's options are {row.options!r}, not two sentences")
        answered = "no answer could be read from the response" if pd.isna(row.prediction) else \
            f"the model answered {row.prediction}"
        tasks.append({"item_key": row.item_key, "image": images.reference(image_of[row.scene], row.item_key, where),
                      "option_a": f"Option A: {options[0]}", "option_b": f"Option B: {options[1]}",
                      "outcome": f"Right answer: {row.gold}; {answered}.", "response": row.response})
    columns = ["item_key", "model", "group", "scene", "category", "gold", "prediction"]
    return TaskSet("cait-failures", "CAIT failure modes (structured prompt)", CAIT_FAILURE_CONFIG, FAILURE_MODES,
                   tasks, items[columns], annotators)
