"""The per-question record: the contract between the task layer and `postprocess`.

Every task's process_results returns it under the key `per_question`; lmms-eval merges that key
into each line of the `--log_samples` JSONL. Fields may be added; the ones below are never renamed.

The response is stored once per line, by lmms-eval, as `filtered_resps`: the text process_results
scored (lmms-eval 0.7 strips `<think>`/`<analysis>` blocks first with its default `--reasoning_tags`,
and then keeps the raw text as `resps` on the same line when the two differ). The record does not
repeat it; `line_response(line)` reads it, and takes a record's own `response` first, which logs
written before this rule carry.
"""

from __future__ import annotations

from typing import Any

from .benchmarks import BENCHMARK_NAMES, SPLIT_NAMES
from .question import LETTERS, MCQ
from .variants import VARIANTS

BENCHMARKS = BENCHMARK_NAMES  # the allowed `benchmark` labels, in the paper's order (benchmarks.py)
SPLITS = SPLIT_NAMES
VARIANT_NAMES = tuple(VARIANTS)  # the allowed `variant` labels of our own logs (an imported file names its own)
CAIT_OPTION_COUNT = 2  # a CAIT scene's two sentences (cait.py): its letters are A and B, options listed or not
MATCH_KINDS = ("letter", "option_text", "yes_no", "numeric", "exact", "judge", "none")
# Why extraction gave no prediction (optional field `abstain_reason`; null when the rules gave one):
#   empty               nothing outside the reasoning block
#   refusal             declines or cannot answer ("cannot determine", "no image", "Answer: N/A")
#   none_fit            says that no option is right ("none of the options match", "neither")
#   hedge               leaves two or more options open ("either B or C", "A or B", "both equally close")
#   several_answers     commits to two or more options at once ("A, C", "A and C are correct")
#   all_options_listed  repeats the option list instead of choosing
#   self_contradiction  two different answers with no correction between them, or a letter with another option's text
#   out_of_range        names an option that does not exist ("(C)" of two; a letter to an open question)
#   truncated           stops mid-sentence before stating an answer (a cut or looping generation)
#   no_answer           names no option in a way that commits (a description, working without a conclusion)
#   inconclusive        a rule found a letter, but that rule's measured precision on real text is below 99.9%,
#                       so it is not committed; the letter may be kept as `candidate` (for audit and the judge)
ABSTAIN_REASONS = ("empty", "refusal", "none_fit", "hedge", "several_answers", "all_options_listed",
                   "self_contradiction", "out_of_range", "truncated", "no_answer", "inconclusive")
# Which kind of rule gave the prediction (optional field `extraction_tier`; logs written before it lack it,
# extraction.tier_of derives it from `rule` and `match`):
#   strict   a shape that states the letter itself: a bare letter, an answer line, a line led by the letter
#   reading  a rule that interprets prose, committed only where its measured precision is >= 99.9%
#   judge    the adjudication judge settled it
#   null     no prediction
EXTRACTION_TIERS = ("strict", "reading", "judge", "external")
# When a judge was asked about a response the rules left unparsed (during the run: scoring's adjudicator;
# afterwards: `python -m postprocess adjudicate`, merged by ingestion), the record also holds
#   judge          the judge's name in its judges file
#   judge_model    the model id the judge's endpoint was sent
#   judge_verdict  the judge's raw answer (null when the call failed)
#   judge_status   one of JUDGE_STATUSES:
#                    settled    the verdict names an answer: it is the prediction, match "judge"
#                    no_answer  the judge says the response commits to no answer: still match "none"
#                    unparsed   the verdict stayed malformed or off-list after the retries: still "none"
#                    failed     the call failed (after the client's retries and timeouts): still "none"
#   judge_error    why the verdict did not parse or the call failed (null otherwise)
# `abstain_reason` stays: why the rules abstained. Records the judge was not asked lack these fields.
JUDGE_STATUSES = ("settled", "no_answer", "unparsed", "failed")

# field -> allowed python types (None means JSON null is allowed)
REQUIRED_FIELDS: dict[str, tuple] = {
    "benchmark": (str,),
    "split": (str,),
    "subtask": (str,),
    "question_id": (str,),
    "variant": (str,),
    "gold": (str, list, type(None)),
    "prediction": (str, type(None)),
    "correct": (bool, type(None)),
    "match": (str,),
}
OPTIONAL_FIELDS: dict[str, tuple] = {
    "response": (str,),  # in records written before the response rule above
    "extraction_tier": (str, type(None)),
    "candidate": (str, type(None)),  # the letter an `inconclusive` rule withheld
}
RESPONSE_LINE_FIELDS = ("filtered_resps", "resps")  # where a line holds the response, in the order read
# Records imported from another harness or a saved table (postprocess/logs/imports/) may name a benchmark outside
# BENCHMARKS (M3CoT, a VLMEvalKit dataset that is not one of the paper's): validate_record(record, imported=True)
# accepts any non-empty label except one of ours spelled differently (its canonical form equals one of ours), so
# "mmbench" is refused rather than analysed as a tenth benchmark. Samples lines of our own tasks stay held to
# BENCHMARKS; tables order the other labels after the paper's (postprocess/order.py).


def canonical_benchmark(label: str) -> str:
    """A benchmark label without case, spaces or punctuation: what two spellings of one benchmark share."""
    return "".join(character for character in label.casefold() if character.isalnum())


_CANONICAL_BENCHMARKS = {canonical_benchmark(name): name for name in BENCHMARKS}


def imported_benchmark_problem(label: str) -> str | None:
    """Why an imported record may not carry this benchmark label (None: it may)."""
    if label in BENCHMARKS:
        return None
    if not label.strip():
        return "per_question field 'benchmark' is empty"
    ours = _CANONICAL_BENCHMARKS.get(canonical_benchmark(label))
    if ours is not None:
        return f"per_question field 'benchmark' is {label!r}: write the paper's benchmark as {ours!r}"
    return None


def line_response(line: dict) -> str | None:
    """The response of a samples line: the record's own `response` when it has one, else the single string in
    filtered_resps (else resps), as "x", ["x"] or [["x"]] (lmms-eval's shapes across versions); None when
    there is none."""
    record = line.get("per_question")
    if isinstance(record, dict) and isinstance(record.get("response"), str):
        return record["response"]
    for name in RESPONSE_LINE_FIELDS:
        value = line.get(name)
        while isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, str):
            return value
    return None


class RecordError(ValueError):
    """A per-question record that breaks the contract; the message names the field."""


def validate_record(record: Any, imported: bool = False) -> dict:
    """Return the record if it satisfies the contract, else raise RecordError naming the field. `imported`: the
    record was imported, not written by our tasks: its benchmark may lie outside BENCHMARKS (rule above)."""
    if not isinstance(record, dict):
        raise RecordError(f"per_question must be an object, got {type(record).__name__}")
    for field, types in REQUIRED_FIELDS.items():
        if field not in record:
            raise RecordError(f"per_question lacks field '{field}'")
        if not isinstance(record[field], types):
            raise RecordError(
                f"per_question field '{field}' has type {type(record[field]).__name__}, "
                f"expected one of {[t.__name__ for t in types]}"
            )
    for field, types in OPTIONAL_FIELDS.items():
        if field in record and not isinstance(record[field], types):
            raise RecordError(
                f"per_question field '{field}' has type {type(record[field]).__name__}, "
                f"expected one of {[t.__name__ for t in types]}"
            )
    if imported:
        problem = imported_benchmark_problem(record["benchmark"])
        if problem is not None:
            raise RecordError(problem)
    elif record["benchmark"] not in BENCHMARKS:
        raise RecordError(f"per_question field 'benchmark' is {record['benchmark']!r}, not one of {BENCHMARKS}")
    elif record["variant"] not in VARIANT_NAMES:
        raise RecordError(f"per_question field 'variant' is {record['variant']!r}, not one of {VARIANT_NAMES}")
    if record["match"] not in MATCH_KINDS:
        raise RecordError(f"per_question field 'match' is {record['match']!r}, not one of {MATCH_KINDS}")
    if record["match"] == "none" and record["correct"] is True:
        raise RecordError("per_question has match 'none' but correct true")
    if not record["question_id"]:
        raise RecordError("per_question field 'question_id' is empty")
    reason = record.get("abstain_reason")
    if reason is not None and reason not in ABSTAIN_REASONS:
        raise RecordError(f"per_question field 'abstain_reason' is {reason!r}, not one of {ABSTAIN_REASONS}")
    if reason is not None and record["match"] not in ("none", "judge"):
        raise RecordError(f"per_question has abstain_reason {reason!r} but match {record['match']!r}")
    status = record.get("judge_status")
    if status is not None and status not in JUDGE_STATUSES:
        raise RecordError(f"per_question field 'judge_status' is {status!r}, not one of {JUDGE_STATUSES}")
    if (record["match"] == "judge") != (status == "settled"):
        raise RecordError(f"per_question has match {record['match']!r} but judge_status {status!r} "
                          "(a judge's answer is match 'judge' exactly when its status is 'settled')")
    if status is not None and not (isinstance(record.get("judge"), str) and isinstance(record.get("judge_model"), str)):
        raise RecordError("per_question has a judge_status but no judge / judge_model names")
    outside = letter_outside_options(record.get("kind"), record.get("options"), record["gold"], record["prediction"],
                                     record["benchmark"])
    if outside is not None:
        raise RecordError(outside)
    tier = record.get("extraction_tier")
    if tier is not None and tier not in EXTRACTION_TIERS:
        raise RecordError(f"per_question field 'extraction_tier' is {tier!r}, not one of {EXTRACTION_TIERS}")
    if (tier is None) != (record["prediction"] is None) and "extraction_tier" in record:
        raise RecordError(f"per_question field 'extraction_tier' is {tier!r} but prediction {record['prediction']!r} "
                          "(a tier exactly when there is a prediction)")
    if tier is not None and (tier == "judge") != (record["match"] == "judge"):
        raise RecordError(f"per_question field 'extraction_tier' is {tier!r} but match {record['match']!r}")
    return record


def letter_outside_options(kind: Any, options: Any, gold: Any, prediction: Any, benchmark: Any = None) -> str | None:
    """A multiple-choice record's gold or prediction letter that names none of its options (gold "C" of
    two), as a RecordError message; None when both name an option or the record lists no options (a CAIT
    record is held to its scene's two options whether it lists them or not)."""
    if benchmark == "CAIT":
        count = CAIT_OPTION_COUNT
    elif kind != MCQ or type(options) is not list or not options:
        return None
    else:
        count = len(options)
    letters = LETTERS[:count]
    for field, value in (("gold", gold), ("prediction", prediction)):
        if type(value) is str and value not in letters:
            return (f"per_question field '{field}' is {value!r}, not the letter of one of its {count} "
                    f"options ({', '.join(letters)})")
    return None
