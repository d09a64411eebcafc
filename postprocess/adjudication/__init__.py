"""Adjudicating the answers extraction cannot settle: an LLM judge shown the question, its options, the
model's response and the image(s) says which answer the response commits to (inverse-scaling paper,
Section 4 and Appendix A: GPT-5.4 as the "multimodal fallback adjudicator", 0.4% of answers).

  prompt.py     the judge's prompt (ours: the paper does not print one) and its strict verdict
  live.py       the adjudicator for the lmms-eval run, through scoring's seam
                (INVSCALE_ADJUDICATOR=postprocess.adjudication.live:adjudicate)
  from_logs.py  afterwards, over existing logs, so that a cluster run never waits on an API
                (`python -m postprocess adjudicate`, postprocess/cli/adjudicate.py); the adjudications
                are kept beside the logs and merged by ingestion (postprocess/logs/adjudications.py)

Both ask through the one judge client (invscale.judges: cache, retries, timeouts, rate limit) and
record the same fields (lmms_eval_tasks/record.py: judge, judge_model, judge_verdict, judge_status,
judge_error). Only answers with a known gold on the inverse-scaling benchmarks are judged: with no gold
a verdict changes no number, and CAIT (Seeing vs. Believing) scores unparsed answers as wrong with no
adjudicator, so its numbers stay comparable with that paper's.
"""

from lmms_eval_tasks.record import BENCHMARKS

JUDGED_BENCHMARKS = tuple(benchmark for benchmark in BENCHMARKS if benchmark != "CAIT")


def is_judged(benchmark: str, gold: object) -> bool:
    """Whether an answer the rules left unparsed goes to the judge."""
    return benchmark in JUDGED_BENCHMARKS and gold is not None
