"""From lmms-eval logs to the inverse-scaling analysis: ingest -> per-question table -> comparisons ->
cases -> statistics -> tables/figures -> report. `python -m postprocess --help`."""
