"""From lmms-eval log folders to the per-question table: run discovery and results.json facts (runs.py),
ingestion with its skip and duplicate rules (ingest.py), the Parquet cache (cache.py), data quality
(quality.py)."""
