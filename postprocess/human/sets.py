"""The human-annotation task sets' names and defaults, apart from task_sets.py so that the command line can offer
them without importing what building a task set needs (Label Studio's client, the prompts, PIL)."""

SET_NAMES = ("taxonomy", "cait-baseline", "cait-failures")
DEFAULT_ANNOTATORS = {"taxonomy": 3, "cait-baseline": 5, "cait-failures": 1}  # as in the papers

# Appendix H gives no quota for the flagged questions. Its own figures bound it: 127 questions, a majority on
# each (107 genuine, 20 bad annotation), agreeing with GPT on 112 and with Claude on 107, so at most 20 + 15 +
# 20 = 55 questions can carry a judge's flag (tests/postprocess/test_human_stats.py recomputes it). 0.4 (51 of
# 127) keeps the sample within that; the share is an option and the strata file says what was drawn.
PAPER_FLAGGED_SHARE = 0.4
