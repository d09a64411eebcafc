"""From lmms-eval log folders to the per-question table: run discovery and results.json facts (runs.py),
ingestion with its skip and duplicate rules (ingest.py), the Parquet cache (cache.py), data quality
(quality.py); the questions and images behind the rows, reloaded from the task's data (questions.py);
the judge's adjudications kept beside the logs and merged into the table (adjudications.py)."""
